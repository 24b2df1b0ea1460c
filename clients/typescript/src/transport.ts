/** What every transport of this package shares: the protocols, the message limit, the
 * bearer token, and how a failure of the transport (not of the service) is reported. */

import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/** gRPC needs HTTP/2 (Node only); gRPC-Web and Connect also work over HTTP/1.1 and from a
 * browser. Connect is binary Protobuf only: the front door refuses JSON Connect with 415. */
export type Protocol = "grpc" | "grpc-web" | "connect";

/** The gRPC message limit of docs/api.md ("Limits"), both ways. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** The largest message a Connect call may send (docs/api.md, "Limits": one REST body, 8 MiB;
 * `MAX_REST_BODY_BYTES` in server/shellexec/rules/limits.py): the front door holds a unary
 * Connect call's message whole, up to that. A larger one that announced no length (Node's
 * Connect transport announces none over HTTP/1.1) met Envoy's own text/plain 413, which
 * Connect reported as UNKNOWN ("HTTP 413"); the transport refuses it before sending, as
 * RESOURCE_EXHAUSTED, the code the front door now answers too, without 8 MiB sent first. */
export const MAX_CONNECT_MESSAGE_BYTES = 8 * 1024 * 1024;

/** The longest bearer token the service takes (docs/api.md, "Limits"). */
export const MAX_BEARER_TOKEN_CHARS = 256;

export interface TransportOptions {
  /** The server (`http://127.0.0.1:50051`) or the front door (`http://127.0.0.1:8080`). */
  baseUrl: string;
  protocol?: Protocol;
  /** Sent as `authorization: Bearer <token>` on every call, when the service needs one; at
   * most 256 visible ASCII characters, checked when the transport is made. */
  token?: string;
}

const NAMED_CHARACTERS: Record<string, string> = {
  "\r": "a carriage return", "\n": "a line feed", "\t": "a tab", " ": "a space",
  "\0": "a NUL byte",
};

/** What is wrong with a bearer token (never the token itself), or undefined: a token is at
 * most MAX_BEARER_TOKEN_CHARS visible ASCII characters (0x21-0x7E), the words of the
 * service's own check (the bridge's `token_problem`). */
export function tokenProblem(token: string): string | undefined {
  const characters = Array.from(token);  // code points, as the service counts them
  for (const [index, character] of characters.entries()) {
    const point = character.codePointAt(0) ?? 0;
    if (point >= 0x21 && point <= 0x7e) continue;
    const name = NAMED_CHARACTERS[character]
      ?? (point < 0x80 ? "a control character" : "a character outside ASCII");
    if (index === characters.length - 1) return `ends with ${name}`;
    return `holds ${name} (character ${index + 1} of ${characters.length})`;
  }
  if (characters.length > MAX_BEARER_TOKEN_CHARS) {
    return `is ${characters.length} characters long; the service takes at most `
      + `${MAX_BEARER_TOKEN_CHARS}`;
  }
  return undefined;
}

/** Adds `authorization: Bearer <token>` to each call, so no call can forget it. A token that
 * cannot be one (a line break read with it from a file, a character outside ASCII, more than
 * 256 characters) is refused here, saying what is wrong and never what it is: a header cannot
 * carry it, and `Headers` trimmed its line break silently. */
export function bearerToken(token: string): Interceptor {
  const problem = token === "" ? "is empty" : tokenProblem(token);
  if (problem !== undefined) {
    throw new Error(`token ${problem}: a token is at most ${MAX_BEARER_TOKEN_CHARS} `
                        + "visible ASCII characters");
  }
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

/** OpenSSL's certificate verification failures, as Node names them in an error's `code`
 * (its `tls` documentation lists them); Node's own TLS errors start with ERR_TLS_ or ERR_SSL_. */
const CERTIFICATE_FAILURES = new Set([
  "CERT_CHAIN_TOO_LONG", "CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID", "CERT_REJECTED",
  "CERT_REVOKED", "CERT_SIGNATURE_FAILURE", "CERT_UNTRUSTED", "DEPTH_ZERO_SELF_SIGNED_CERT",
  "HOSTNAME_MISMATCH", "INVALID_CA", "INVALID_PURPOSE", "PATH_LENGTH_EXCEEDED",
  "SELF_SIGNED_CERT_IN_CHAIN", "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE", "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

/** Whether Node's TLS failed under `error`: a certificate it could not trust, or a handshake
 * that could not be made (over HTTP/1.1 Node reports a failed handshake as the system error
 * EPROTO, with OpenSSL's words). Only Node's own errors count, never a message the server
 * wrote. */
export function wasTlsFailure(error: unknown): boolean {
  return someCause(error, (cause, code) => code !== undefined && (CERTIFICATE_FAILURES.has(code)
    || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_")
    || (code === "EPROTO" && cause.message.includes("SSL routines"))));
}

/** The system errors of a connection the peer broke or closed under a call: a server going
 * down. Connect reported them as INTERNAL (EPIPE) or ABORTED (ECONNRESET). (A TLS front door
 * spoken to in plaintext no longer closes the connection: it answers FAILED_PRECONDITION,
 * "this port serves HTTPS only", which is an answer and stays as it is.) */
const BROKEN_CONNECTIONS = new Set(["EPIPE", "ECONNRESET", "ECONNABORTED"]);

/** Whether `error` is a failure of the way to the service rather than an answer of it, which
 * gRPC's Go, Java and Python libraries report as UNAVAILABLE: a TLS failure, a broken
 * connection (only Node's own errors count, never a message the server wrote), or a
 * cancellation the caller did not ask for (its `signal`, which the call's deadline also
 * aborts, was not aborted). The server cancels a stream with HTTP/2's RST_STREAM CANCEL as
 * it stops, and Node cancels the streams of a connection that closes: Connect reported both
 * as CANCELED, a word for the caller's own abort. */
export function wasTransportFailure(error: unknown, signal: AbortSignal): boolean {
  if (error instanceof ConnectError && error.code === Code.Canceled && !signal.aborted) {
    return true;
  }
  return wasTlsFailure(error)
    || someCause(error, (_, code) => code !== undefined && BROKEN_CONNECTIONS.has(code));
}

/** `error` as UNAVAILABLE when it is a failure of the transport (`wasTransportFailure`),
 * keeping its message and the error itself as the cause; any other error as it is. */
export function asUnavailable(error: unknown, signal: AbortSignal): unknown {
  if (!wasTransportFailure(error, signal)) return error;
  const failure = ConnectError.from(error);
  return new ConnectError(failure.rawMessage, Code.Unavailable, failure.metadata, undefined,
                          error);
}

/** Reports a failure of the transport as UNAVAILABLE (`asUnavailable`), whether it ends a
 * unary call, the opening of a stream or a stream already read: the one place this package
 * maps an error's code, for every transport. The caller's own abort stays CANCELED and a
 * deadline DEADLINE_EXCEEDED. */
export function transportFailuresAreUnavailable(): Interceptor {
  return (next) => async (request) => {
    let response;
    try {
      response = await next(request);
    } catch (error) {
      throw asUnavailable(error, request.signal);
    }
    if (!response.stream) return response;
    const messages = response.message;
    return {
      ...response,
      message: (async function* () {
        try {
          yield* messages;
        } catch (error) {
          throw asUnavailable(error, request.signal);
        }
      })(),
    };
  };
}

/** The interceptors of every transport: the transport's failures reported as UNAVAILABLE
 * (outermost, so it sees what the others let through), a refused stream sent again, and the
 * token (checked here, when the transport is made). */
export function interceptors(token: string | undefined): Interceptor[] {
  const own = [transportFailuresAreUnavailable(), retryRefusedStream()];
  return token ? [...own, bearerToken(token)] : own;
}
