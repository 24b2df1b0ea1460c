/** Node: gRPC over HTTP/2 straight to the server or through Envoy, gRPC-Web and Connect
 * through Envoy. */

import type { Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";

import { ShellExecClient, type ClientOptions } from "./client.js";
import {
  interceptors,
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

export function nodeTransport(options: NodeTransportOptions): Transport {
  // The same options serve http2.connect (HTTP/2) and https.request (HTTP/1.1).
  const nodeOptions = tlsOptions(options);
  const common = {
    baseUrl: options.baseUrl,
    interceptors: interceptors(options.token),
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
