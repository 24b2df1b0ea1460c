/**
 * TLS to a front door with a self-signed certificate, trusted through `ca` alone:
 *   node build/tls-node.mjs HTTPS_BASE_URL TOKEN CERTIFICATE_FILE HTTPS_URL_OF_A_PLAINTEXT_PORT
 * creates a session over gRPC, gRPC-Web and Connect (HTTP/2 and HTTP/1.1) with the
 * certificate's text or bytes, and sees the same call fail as UNAVAILABLE without it (Node's
 * trusted certificates do not hold it), as does TLS to a port that speaks none; plaintext
 * (`http://`) to the front door's TLS port fails FAILED_PRECONDITION; `ca` over http, or text
 * that is no certificate, is refused when the client is made. Prints "tls: passed" or the
 * failed assertion.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { connect, errorDetails, grpcCodeName, type Protocol } from "../src/node.js";

const [baseUrl, token, certificateFile, plaintextUrl] = process.argv.slice(2);
if (baseUrl === undefined || token === undefined || certificateFile === undefined
    || plaintextUrl === undefined) {
  throw new Error(
    "usage: node tls-node.mjs HTTPS_BASE_URL TOKEN CERTIFICATE_FILE HTTPS_URL_OF_A_PLAINTEXT_PORT");
}
const bytes = readFileSync(certificateFile);

const routes: [Protocol, "1.1" | "2", string | Uint8Array][] = [
  ["grpc", "2", bytes.toString()],
  ["grpc-web", "2", bytes],
  ["grpc-web", "1.1", bytes.toString()],
  ["connect", "2", bytes.toString()],
  ["connect", "1.1", bytes],
];
for (const [protocol, httpVersion, ca] of routes) {
  const route = `${protocol} HTTP/${httpVersion}`;
  const trusting = connect({ baseUrl, token, protocol, httpVersion, ca, timeoutMs: 10_000 });
  const session = await trusting.createSession(`ts-tls-${protocol}-${httpVersion}`,
                                               { agent: "codex" });
  assert.match(session.id, /^ses_/, route);
  const untrusting = connect({ baseUrl, token, protocol, httpVersion, timeoutMs: 10_000 });
  const refused = await untrusting.getSession(session.id).then(
    () => "OK", (error: unknown) => grpcCodeName(errorDetails(error).code));
  // As in Go and Java: a front door the client cannot trust is unavailable to it (it said
  // INTERNAL, which reads as a fault in the service).
  assert.equal(refused, "UNAVAILABLE", `${route}: without the certificate`);
  const unwatched = await (async () => {
    for await (const event of untrusting.watch(session.id)) return event.type;
    return "ended";
  })().catch((error: unknown) => grpcCodeName(errorDetails(error).code));
  assert.equal(unwatched, "UNAVAILABLE", `${route}: a watch without the certificate`);
}

// A handshake with a port that speaks no TLS fails: over HTTP/1.1 Node says EPROTO, which
// read as INTERNAL.
for (const [protocol, httpVersion] of [["grpc", "2"], ["grpc-web", "1.1"], ["grpc-web", "2"],
                                       ["connect", "1.1"], ["connect", "2"]] as const) {
  const noTls = connect({ baseUrl: plaintextUrl, token, protocol, httpVersion, ca: bytes,
                          timeoutMs: 10_000 });
  const failed = await noTls.getSession("ses_00000000000000000000000000000000").then(
    () => "OK", (error: unknown) => grpcCodeName(errorDetails(error).code));
  assert.equal(failed, "UNAVAILABLE", `${protocol} HTTP/${httpVersion} to a plaintext port`);
}

// Plaintext to the front door's TLS port (`http://` for its `https://`): the front door answers
// FAILED_PRECONDITION itself, in each protocol's form, saying the port serves HTTPS only (it
// once closed the connection, and the client retried what looked like a server that was down).
const plain = baseUrl.replace(/^https:/, "http:");
for (const [protocol, httpVersion] of [["grpc", "2"], ["grpc-web", "1.1"], ["grpc-web", "2"],
                                       ["connect", "1.1"], ["connect", "2"]] as const) {
  const route = `${protocol} HTTP/${httpVersion} in plaintext to the TLS port`;
  const plaintext = connect({ baseUrl: plain, token, protocol, httpVersion, timeoutMs: 10_000 });
  const failed = await plaintext.getSession("ses_00000000000000000000000000000000").then(
    () => "OK", (error: unknown) => grpcCodeName(errorDetails(error).code));
  assert.equal(failed, "FAILED_PRECONDITION", route);
  const unwatched = await (async () => {
    for await (const event of plaintext.watch("ses_00000000000000000000000000000000")) {
      return event.type;
    }
    return "ended";
  })().catch((error: unknown) => grpcCodeName(errorDetails(error).code));
  assert.equal(unwatched, "FAILED_PRECONDITION", `${route}: a watch`);
}

assert.throws(() => connect({ baseUrl: plain, ca: bytes }), /only for an https baseUrl/);
assert.throws(() => connect({ baseUrl, ca: certificateFile }), /hold no PEM certificate/);
assert.throws(() => connect({ baseUrl, ca: new Uint8Array(4) }), /hold no PEM certificate/);
console.log("tls: passed");
