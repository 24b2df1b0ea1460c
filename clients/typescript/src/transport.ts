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

/** Sends a unary call once more when the server refused its HTTP/2 stream (REFUSED_STREAM):
 * a refused stream was never processed, so sending it again cannot run it twice. Envoy ends a
 * connection idle for 10 s, and a call sent on it as it closes is refused; gRPC's own
 * libraries (Go, Java) send it again by themselves, while Node's transport reported INTERNAL. */
export function retryRefusedStream(): Interceptor {
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      if (request.stream || request.signal.aborted || !wasRefusedStream(error)) throw error;
      return next(request);
    }
  };
}

/** Whether `error` was caused by Node's HTTP/2 stream error for a refused stream. Only
 * Node's own error counts, never a message the server wrote: a server's message can hold any
 * text (a task id), and a call the server answered must not be sent again. */
export function wasRefusedStream(error: unknown): boolean {
  return someCause(error, (cause, code) => code === "ERR_HTTP2_STREAM_ERROR"
    && cause.message.endsWith("NGHTTP2_REFUSED_STREAM"));
}

/** Whether `test` holds for `error` or one of its first causes (Node's own errors carry a
 * string `code`; a server's message never reaches one). */
export function someCause(error: unknown,
                          test: (cause: Error, code: string | undefined) => boolean): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    const code = (cause as { code?: unknown }).code;
    if (test(cause, typeof code === "string" ? code : undefined)) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

export function interceptors(token: string | undefined): Interceptor[] {
  return token ? [retryRefusedStream(), bearerToken(token)] : [retryRefusedStream()];
}
