/** Browsers: gRPC-Web or Connect (binary) through the front door, with fetch. */

import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";

import { ShellExecClient, type ClientOptions } from "./client.js";
import { interceptors, MAX_MESSAGE_BYTES, type TransportOptions } from "./transport.js";

export interface WebTransportOptions extends TransportOptions {
  protocol?: "grpc-web" | "connect";
}

export function webTransport(options: WebTransportOptions): Transport {
  const common = {
    baseUrl: options.baseUrl, interceptors: interceptors(options.token),
    readMaxBytes: MAX_MESSAGE_BYTES, writeMaxBytes: MAX_MESSAGE_BYTES, useBinaryFormat: true,
  };
  return (options.protocol ?? "grpc-web") === "connect"
    ? createConnectTransport(common) : createGrpcWebTransport(common);
}

/** A client for a page: `connect({ baseUrl: location.origin })`. */
export function connect(options: WebTransportOptions & ClientOptions): ShellExecClient {
  return new ShellExecClient(webTransport(options), options);
}

export * from "./index.js";
