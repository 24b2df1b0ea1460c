/** What every transport of this package shares: the protocols, the message limit and the
 * bearer token. */

import type { Interceptor } from "@connectrpc/connect";

/** gRPC needs HTTP/2 (Node only); gRPC-Web and Connect also work over HTTP/1.1 and from a
 * browser. Connect is binary Protobuf only: the front door refuses JSON Connect with 415. */
export type Protocol = "grpc" | "grpc-web" | "connect";

/** The gRPC message limit of docs/api.md ("Limits"), both ways. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface TransportOptions {
  /** The server (`http://127.0.0.1:50051`) or the front door (`http://127.0.0.1:8080`). */
  baseUrl: string;
  protocol?: Protocol;
  /** Sent as `authorization: Bearer <token>` on every call, when the service needs one. */
  token?: string;
}

/** Adds `authorization: Bearer <token>` to each call, so no call can forget it. */
export function bearerToken(token: string): Interceptor {
  return (next) => async (request) => {
    request.header.set("authorization", `Bearer ${token}`);
    return next(request);
  };
}

export function interceptors(token: string | undefined): Interceptor[] {
  return token ? [bearerToken(token)] : [];
}
