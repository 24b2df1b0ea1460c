/** Node: gRPC over HTTP/2 straight to the server or through Envoy, gRPC-Web and Connect
 * through Envoy. */

import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";

import { ShellExecClient, type ClientOptions } from "./client.js";
import {
  interceptors,
  MAX_MESSAGE_BYTES,
  someCause,
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

/** Reports a TLS failure as UNAVAILABLE, as gRPC's Go and Java libraries do: the call never
 * reached the service, so no fault of the service (INTERNAL, Connect's word) is to blame. */
export function tlsFailureIsUnavailable(): Interceptor {
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      if (!wasTlsFailure(error)) throw error;
      const failure = ConnectError.from(error);
      throw new ConnectError(failure.rawMessage, Code.Unavailable, undefined, undefined, error);
    }
  };
}

export function nodeTransport(options: NodeTransportOptions): Transport {
  // The same options serve http2.connect (HTTP/2) and https.request (HTTP/1.1).
  const nodeOptions = tlsOptions(options);
  const common = {
    baseUrl: options.baseUrl,
    interceptors: [tlsFailureIsUnavailable(), ...interceptors(options.token)],
    readMaxBytes: MAX_MESSAGE_BYTES, writeMaxBytes: MAX_MESSAGE_BYTES, nodeOptions,
  };
  const httpVersion = options.httpVersion ?? "2";
  switch (options.protocol ?? "grpc") {
    case "grpc":
      return createGrpcTransport(common);
    case "grpc-web":
      return createGrpcWebTransport({ ...common, httpVersion, useBinaryFormat: true });
    case "connect":
      return createConnectTransport({ ...common, httpVersion, useBinaryFormat: true });
  }
}

/** A client for Node: `connect({ baseUrl: "http://127.0.0.1:50051" })`, or
 * `connect({ baseUrl: "https://127.0.0.1:8080", ca: readFileSync("cert.pem") })` for a front
 * door with a self-signed certificate. */
export function connect(options: NodeTransportOptions & ClientOptions): ShellExecClient {
  return new ShellExecClient(nodeTransport(options), options);
}

export * from "./index.js";
