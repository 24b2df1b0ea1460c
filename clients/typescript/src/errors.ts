/**
 * What a failed call's google.rpc details say. The service sends them as the
 * `grpc-status-details-bin` trailer (a serialized google.rpc.Status): an ErrorInfo whose
 * `reason` names a condition callers act on (docs/api.md, "Errors", lists every reason), a
 * BadRequest naming the field of an invalid argument, a ResourceInfo for what was not found.
 * Read these and `code` (the gRPC code: Connect's Code numbers are gRPC's), not the message.
 * connect-es reads the details itself, but for a gRPC-Web answer whose HTTP status is not 200
 * (the front door's token check answers 401): it then keeps the header among the error's
 * metadata, and they are read from there.
 *
 *     try { await client.startTurn(session.id); }
 *     catch (error) { if (errorReason(error) === "TURN_ALREADY_RUNNING") { ... } }
 */

import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";

import {
  BadRequestSchema,
  ErrorInfoSchema,
  ResourceInfoSchema,
} from "./rpc/google/rpc/error_details_pb.js";
import { StatusSchema } from "./rpc/google/rpc/status_pb.js";

const STATUS_DETAILS_HEADER = "grpc-status-details-bin";

export interface ErrorDetails {
  /** The gRPC status code, e.g. Code.NotFound (5). */
  code: Code;
  /** The ErrorInfo reason, e.g. "TURN_ALREADY_RUNNING"; "" when it has none. */
  reason: string;
  domain: string;
  /** [field, description] of each BadRequest violation. */
  fieldViolations: Array<[string, string]>;
  /** The ResourceInfo of a NOT_FOUND error, e.g. "shellexec.v1.Session". */
  resourceType: string;
  resourceName: string;
}

/** The code and google.rpc details of `error` (Code.Unknown and empty for a non-RPC error). */
export function errorDetails(error: unknown): ErrorDetails {
  const failure = ConnectError.from(error);
  const [info] = findDetails(failure, ErrorInfoSchema);
  const [resource] = findDetails(failure, ResourceInfoSchema);
  const violations = findDetails(failure, BadRequestSchema).flatMap(
    (badRequest) => badRequest.fieldViolations.map(
      (v): [string, string] => [v.field, v.description]));
  return {
    code: failure.code,
    reason: info?.reason ?? "",
    domain: info?.domain ?? "",
    fieldViolations: violations,
    resourceType: resource?.resourceType ?? "",
    resourceName: resource?.resourceName ?? "",
  };
}

/** The details of type `schema`. Connect names a detail's type by its bare name, but Envoy's
 * Connect bridge passes on the google.protobuf.Any type URL
 * ("type.googleapis.com/google.rpc.ErrorInfo"), which ConnectError.findDetails misses. */
function findDetails<Desc extends DescMessage>(failure: ConnectError, schema: Desc
): MessageShape<Desc>[] {
  const typeUrlNamed = failure.details.flatMap((detail) => {
    if (!("type" in detail) || !detail.type.includes("/")) return [];
    return typeNamed(detail.type, schema) ? [fromBinary(schema, detail.value)] : [];
  });
  const unread = failure.details.length === 0 ? unreadDetails(failure) : [];
  const fromHeader = unread.flatMap((detail) =>
    typeNamed(detail.typeUrl, schema) ? [fromBinary(schema, detail.value)] : []);
  return [...failure.findDetails(schema), ...typeUrlNamed, ...fromHeader];
}

function typeNamed(typeUrl: string, schema: DescMessage): boolean {
  return typeUrl.slice(typeUrl.lastIndexOf("/") + 1) === schema.typeName;
}

/** The details of a google.rpc.Status in the error's `grpc-status-details-bin` header, which
 * connect-es leaves unread when a gRPC-Web answer's HTTP status is not 200; none when the
 * header is missing, does not decode, or has another code than the error (a proxy's). */
function unreadDetails(failure: ConnectError) {
  const header = failure.metadata.get(STATUS_DETAILS_HEADER);
  if (header === null) return [];
  try {
    const status = fromBinary(StatusSchema, base64Decode(header));
    return status.code === failure.code ? status.details : [];
  } catch {
    return [];
  }
}

/** The ErrorInfo reason of `error`, or "" when it has none. */
export function errorReason(error: unknown): string {
  return errorDetails(error).reason;
}

export { Code, ConnectError };

/** The gRPC name of `code`, as the proto and docs/api.md write it: Code.NotFound -> "NOT_FOUND". */
export function grpcCodeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}
