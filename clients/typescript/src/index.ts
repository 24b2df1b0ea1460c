/** @shellexec/client: the typed client of the shellexec service. Import the transport from
 * "@shellexec/client/node" or "@shellexec/client/web"; this entry holds what both share. */

export * from "./client.js";
export * from "./errors.js";
export {
  bearerToken,
  MAX_CONNECT_MESSAGE_BYTES,
  MAX_MESSAGE_BYTES,
  transportFailuresAreUnavailable,
  type Protocol,
  type TransportOptions,
} from "./transport.js";
export * from "./gen/shellexec/v1/message_pb.js";
export * from "./gen/shellexec/v1/session_pb.js";
export * from "./gen/shellexec/v1/shell_exec_service_pb.js";
export * from "./gen/shellexec/v1/shell_output_pb.js";
