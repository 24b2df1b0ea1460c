/** Node: gRPC over HTTP/2 straight to the server or through Envoy, gRPC-Web and Connect
 * through Envoy. */

import type * as http2 from "node:http2";

import type { Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
  type GrpcTransportOptions,
} from "@connectrpc/connect-node";

import { ShellExecClient, type ClientOptions } from "./client.js";
import {
  interceptors,
  MAX_CONNECT_MESSAGE_BYTES,
  MAX_MESSAGE_BYTES,
  transportFailuresAreUnavailable,
  type TransportOptions,
} from "./transport.js";

export interface NodeTransportOptions extends TransportOptions {
  /** HTTP/2 by default; gRPC-Web and Connect may use "1.1". gRPC is always HTTP/2. */
  httpVersion?: "1.1" | "2";
  /** PEM certificates (a file's text or bytes) that an https `baseUrl` is checked against,
   * in place of Node's trusted ones: a self-signed front door's `SHELLEXEC_TLS_CERT_FILE`. */
  ca?: string | Uint8Array;
}

const PEM_CERTIFICATE = "-----BEGIN CERTIFICATE-----";

/** The TLS options `ca` asks for, checked now: over http it would be ignored, and text that
 * is no certificate (a file's path) would fail every call as INTERNAL. */
function tlsOptions(options: NodeTransportOptions): { ca: string } | undefined {
  if (options.ca === undefined) return undefined;
  if (new URL(options.baseUrl).protocol !== "https:") {
    throw new Error(`ca: the certificates are only for an https baseUrl, not ${options.baseUrl}`);
  }
  const ca = typeof options.ca === "string" ? options.ca : new TextDecoder().decode(options.ca);
  if (!ca.includes(PEM_CERTIFICATE)) {
    const given = typeof options.ca === "string" ? "text" : "bytes";
    throw new Error(`ca: the ${given} given hold no PEM certificate (pass a file's contents, `
                    + "not its path)");
  }
  return { ca };
}

// Once this module's own, kept for the programs that import them from here: transport.ts now
// maps the failures of every transport, TLS and others (`transportFailuresAreUnavailable`).
export { wasTlsFailure } from "./transport.js";
/** @deprecated every transport has `transportFailuresAreUnavailable` (transport.ts). */
export const tlsFailureIsUnavailable = transportFailuresAreUnavailable;

/** How long an HTTP/2 connection may stay idle (no call in flight) before the client closes
 * it itself: well under the 10 s after which the front door closes one
 * (`IDLE_CONNECTION_TIMEOUT_SECONDS` in server/shellexec/app/envoy.py, Envoy's `idle_timeout`),
 * so the client, not the front door, ends it. A GOAWAY the front door sends as a call starts
 * crashed a program calling every 10 s (see `SessionErrorsHandled`); connect-node's own default
 * is 15 minutes. Node's HTTP/1.1 agent already drops a kept-alive socket after 5 s. */
export const IDLE_CONNECTION_TIMEOUT_MS = 5_000;

/** connect-node's HTTP/2 session manager, with every session it carries a call on given an
 * 'error' listener of its own. On a GOAWAY to an idle connection the manager destroys the
 * session with an error that Node emits only once the socket has closed; a call made in
 * between moves the manager to a new connection and removes its listener from the old one, so
 * the error was an unhandled 'error' event and the process died ("received GOAWAY without any
 * open streams"). That connection is one the manager has already given up and no call uses,
 * so its error is dropped here; the calls on a session still see their streams' own errors.
 * connect-node offers no hook on the sessions it opens: the stream of each call is the one
 * place to reach them. */
class SessionErrorsHandled
implements NonNullable<GrpcTransportOptions["sessionManager"]> {
  readonly authority: string;
  private readonly guarded = new WeakSet<http2.ClientHttp2Session>();

  constructor(private readonly manager: Http2SessionManager) {
    this.authority = manager.authority;
  }

  async request(method: string, path: string, headers: http2.OutgoingHttpHeaders,
                options: Omit<http2.ClientSessionRequestOptions, "signal">
  ): Promise<http2.ClientHttp2Stream> {
    const stream = await this.manager.request(method, path, headers, options);
    const session = stream.session as http2.ClientHttp2Session | undefined;
    if (session !== undefined && !this.guarded.has(session)) {
      this.guarded.add(session);
      session.on("error", ignoreSessionError);
    }
    return stream;
  }

  notifyResponseByteRead(stream: http2.ClientHttp2Stream): void {
    this.manager.notifyResponseByteRead(stream);
  }
}

function ignoreSessionError(): void { /* see SessionErrorsHandled */ }

export function nodeTransport(options: NodeTransportOptions): Transport {
  // The same options serve http2.connect (HTTP/2) and https.request (HTTP/1.1).
  const nodeOptions = tlsOptions(options);
  const common = {
    baseUrl: options.baseUrl,
    interceptors: interceptors(options.token),
    readMaxBytes: MAX_MESSAGE_BYTES, writeMaxBytes: MAX_MESSAGE_BYTES,
  };
  // HTTP/2 through a session manager of this package's making (which makes the transport
  // ignore its own session options); HTTP/1.1 through Node's agent, with the TLS options.
  const http2Connection = () => ({
    httpVersion: "2" as const,
    sessionManager: new SessionErrorsHandled(new Http2SessionManager(
      options.baseUrl, { idleConnectionTimeoutMs: IDLE_CONNECTION_TIMEOUT_MS }, nodeOptions)),
  });
  const connection = () => (options.httpVersion === "1.1"
    ? { httpVersion: "1.1" as const, nodeOptions } : http2Connection());
  switch (options.protocol ?? "grpc") {
    case "grpc":  // always HTTP/2
      return createGrpcTransport({ ...common, ...http2Connection() });
    case "grpc-web":
      return createGrpcWebTransport({ ...common, ...connection(), useBinaryFormat: true });
    case "connect":
      return createConnectTransport({ ...common, ...connection(), useBinaryFormat: true,
                                      writeMaxBytes: MAX_CONNECT_MESSAGE_BYTES });
  }
}

/** A client for Node: `connect({ baseUrl: "http://127.0.0.1:50051" })`, or
 * `connect({ baseUrl: "https://127.0.0.1:8080", ca: readFileSync("cert.pem") })` for a front
 * door with a self-signed certificate. */
export function connect(options: NodeTransportOptions & ClientOptions): ShellExecClient {
  return new ShellExecClient(nodeTransport(options), options);
}

export * from "./index.js";
