/** Node: gRPC over HTTP/2 straight to the server or through Envoy, gRPC-Web and Connect
 * through Envoy. */

import type { Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";

import { ShellExecClient, type ClientOptions } from "./client.js";
import { interceptors, MAX_MESSAGE_BYTES, type TransportOptions } from "./transport.js";

export interface NodeTransportOptions extends TransportOptions {
  /** HTTP/2 by default; gRPC-Web and Connect may use "1.1". gRPC is always HTTP/2. */
  httpVersion?: "1.1" | "2";
}

export function nodeTransport(options: NodeTransportOptions): Transport {
  const common = {
    baseUrl: options.baseUrl, interceptors: interceptors(options.token),
    readMaxBytes: MAX_MESSAGE_BYTES, writeMaxBytes: MAX_MESSAGE_BYTES,
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

/** A client for Node: `connect({ baseUrl: "http://127.0.0.1:50051" })`. */
export function connect(options: NodeTransportOptions & ClientOptions): ShellExecClient {
  return new ShellExecClient(nodeTransport(options), options);
}

export * from "./index.js";
