/**
 * A failure of the way to the service is UNAVAILABLE, as gRPC's Go, Java and Python libraries
 * report it, and only the caller's own abort is CANCELED: against local servers that cancel
 * each stream (HTTP/2 RST_STREAM CANCEL, as the service's server does as it stops), that reset
 * each connection (ECONNRESET) or that close it at once (EPIPE), or that never answer.
 *   node build/transport-failures-node.mjs
 * Connect reported the cancelled streams as CANCELED, a reset as ABORTED and EPIPE as
 * INTERNAL. Prints "transport-failures: passed" or the failed assertion.
 */

import assert from "node:assert/strict";
import http2 from "node:http2";
import net from "node:net";
import type { AddressInfo } from "node:net";

import { connect, errorDetails, grpcCodeName, type Protocol } from "../src/node.js";

const SESSION = `ses_${"0".repeat(32)}`;

interface Local { url: string; close: () => void }

async function listening(server: net.Server, close: () => void): Promise<Local> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => { close(); server.close(); } };
}

/** An HTTP/2 server that does `answer` with each stream. */
async function h2(answer: (stream: http2.ServerHttp2Stream) => void): Promise<Local> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => sessions.add(session));
  server.on("stream", (stream) => {
    stream.on("error", () => undefined);
    answer(stream);
  });
  return listening(server, () => { for (const session of sessions) session.destroy(); });
}

/** A TCP server that does `answer` with each connection. */
async function tcp(answer: (socket: net.Socket) => void): Promise<Local> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    answer(socket);
  });
  return listening(server, () => { for (const socket of sockets) socket.destroy(); });
}

async function codeOf(call: Promise<unknown>): Promise<string> {
  return call.then(() => "OK", (error: unknown) => grpcCodeName(errorDetails(error).code));
}

async function watched(events: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of events) { /* until it fails */ }
}

/** A signal its caller aborts in a moment. */
function abortedSoon(): AbortSignal {
  const caller = new AbortController();
  setTimeout(() => caller.abort(), 200);
  return caller.signal;
}

const routes: [Protocol, "1.1" | "2"][] = [
  ["grpc", "2"], ["grpc-web", "2"], ["grpc-web", "1.1"], ["connect", "2"], ["connect", "1.1"],
];

// The server cancels the stream (HTTP/2 only): the call and the opening of a watch.
const cancelling = await h2((stream) => stream.close(http2.constants.NGHTTP2_CANCEL));
for (const [protocol, httpVersion] of routes.filter(([, version]) => version === "2")) {
  const client = connect({ baseUrl: cancelling.url, protocol, timeoutMs: 5_000 });
  assert.equal(await codeOf(client.getSession(SESSION)), "UNAVAILABLE",
               `${protocol} HTTP/${httpVersion}: a cancelled stream`);
  assert.equal(await codeOf(watched(client.watch(SESSION))), "UNAVAILABLE",
               `${protocol} HTTP/${httpVersion}: a cancelled watch`);
}
cancelling.close();

// The server resets each connection once the request arrives (ECONNRESET), or closes it as
// soon as it is made, before the request is written (EPIPE, or ECONNRESET): over HTTP/2 Node
// cancels the connection's streams.
for (const [name, answer] of [
  ["reset", (socket: net.Socket) => socket.once("data", () => socket.resetAndDestroy())],
  ["closed", (socket: net.Socket) => socket.destroy()],
] as const) {
  const breaking = await tcp(answer);
  for (const [protocol, httpVersion] of routes) {
    const client = connect({ baseUrl: breaking.url, protocol, httpVersion, timeoutMs: 5_000 });
    const route = `${protocol} HTTP/${httpVersion}: a connection ${name}`;
    assert.equal(await codeOf(client.getSession(SESSION)), "UNAVAILABLE", route);
    assert.equal(await codeOf(watched(client.watch(SESSION))), "UNAVAILABLE", `${route}, watch`);
  }
  breaking.close();
}

// A server that never answers: the caller's abort is CANCELED, its deadline DEADLINE_EXCEEDED
// (`timeoutMs: 0`: none).
const silent = await h2(() => undefined);
for (const [protocol, httpVersion] of routes.filter(([, version]) => version === "2")) {
  const route = `${protocol} HTTP/${httpVersion}`;
  const client = connect({ baseUrl: silent.url, protocol, timeoutMs: 5_000 });
  assert.equal(await codeOf(client.getSession(SESSION, { signal: abortedSoon() })), "CANCELED",
               route);
  assert.equal(await codeOf(watched(client.watch(SESSION, { signal: abortedSoon() }))),
               "CANCELED", `${route}: a watch`);
  const hurried = connect({ baseUrl: silent.url, protocol, timeoutMs: 200 });
  assert.equal(await codeOf(hurried.getSession(SESSION)), "DEADLINE_EXCEEDED", route);
  const unbounded = connect({ baseUrl: silent.url, protocol, timeoutMs: 0 });  // no deadline
  assert.equal(await codeOf(unbounded.getSession(SESSION, { signal: abortedSoon() })),
               "CANCELED", `${route}: without a deadline`);
}
silent.close();

// An answer is never changed: the server's own code arrives as it is.
const answering = await h2((stream) => stream.respond(
  { ":status": 200, "content-type": "application/grpc", "grpc-status": "10",
    "grpc-message": "aborted by the server" }, { endStream: true }));
const client = connect({ baseUrl: answering.url, timeoutMs: 5_000 });
assert.equal(await codeOf(client.getSession(SESSION)), "ABORTED");
assert.equal(await codeOf(watched(client.watch(SESSION))), "ABORTED");
answering.close();
console.log("transport-failures: passed");
