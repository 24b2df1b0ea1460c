/**
 * A Connect call whose message is over what the front door takes of one (8 MiB,
 * MAX_CONNECT_MESSAGE_BYTES) is refused before it is sent, as RESOURCE_EXHAUSTED:
 *   node build/message-size-node.mjs
 * Node's Connect transport announces no length over HTTP/1.1, so the front door's buffer
 * refused such a call with Envoy's own text/plain 413, which Connect reported as UNKNOWN
 * ("HTTP 413"). gRPC and gRPC-Web send up to the server's message limit (16 MiB), and a Connect
 * message within 8 MiB is sent. The target is never reached: a call sent fails UNAVAILABLE.
 * Prints "message-size: passed" or the failed assertion.
 */

import assert from "node:assert/strict";

import { connect, errorDetails, grpcCodeName, MAX_CONNECT_MESSAGE_BYTES,
         type Protocol } from "../src/node.js";

const baseUrl = "http://127.0.0.1:9";  // never called

const chat = (bytes: number) => ({ sessionUpdate: "agent_message_chunk",
                                   content: { type: "text", text: "o".repeat(bytes) } });
const SESSION = `ses_${"0".repeat(32)}`;

async function codeOf(call: Promise<unknown>): Promise<string> {
  return call.then(() => "OK", (error: unknown) => grpcCodeName(errorDetails(error).code));
}

const over = chat(MAX_CONNECT_MESSAGE_BYTES);  // its message is a little more than the text
const within = chat(MAX_CONNECT_MESSAGE_BYTES - 1024);
const routes: [Protocol, "1.1" | "2"][] = [
  ["connect", "1.1"], ["connect", "2"], ["grpc-web", "1.1"], ["grpc-web", "2"], ["grpc", "2"]];
for (const [protocol, httpVersion] of routes) {
  const route = `${protocol} HTTP/${httpVersion}`;
  const client = connect({ baseUrl, protocol, httpVersion, timeoutMs: 5_000 });
  assert.equal(await codeOf(client.publish(SESSION, over, 1)),
               protocol === "connect" ? "RESOURCE_EXHAUSTED" : "UNAVAILABLE", route);
  assert.equal(await codeOf(client.publish(SESSION, within, 1)), "UNAVAILABLE", route);
}
console.log("message-size: passed");
