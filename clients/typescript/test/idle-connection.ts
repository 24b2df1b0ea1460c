/**
 * An idle HTTP/2 connection the server closes cannot crash the program, and the client closes
 * an idle connection itself before the front door would:
 *   node build/idle-connection-node.mjs FRONT_DOOR_IDLE_MS [CERTIFICATE_FILE KEY_FILE]
 * against a local HTTP/2 server (and, with a certificate, a TLS one) that answers every call
 * as the service would and never closes a connection by itself until told to.
 *
 * The front door (Envoy) sends GOAWAY to a connection idle for FRONT_DOOR_IDLE_MS. Connect's
 * session manager then destroys the session with an error that Node emits only once the
 * socket has closed; a call made in between (a poller calling every 10 s) moved the manager to
 * a new connection, which removed its 'error' listener from the old one, and the error was an
 * unhandled 'error' event: the process died ("received GOAWAY without any open streams"). The
 * runner makes that call at the one moment that matters, right after the GOAWAY arrives, so
 * the check does not depend on timing. The client's own idle timeout must close the
 * connection first, with a margin; its value is checked against FRONT_DOOR_IDLE_MS, and the
 * server sees the client close an idle connection (however long that takes; a minute only
 * bounds a run that would otherwise never end).
 * Prints "idle-connection: passed" or the failed assertion.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import { syncBuiltinESMExports } from "node:module";
import type { AddressInfo } from "node:net";

import { create, toBinary } from "@bufbuild/protobuf";

import { GetSessionResponseSchema } from "../src/gen/shellexec/v1/shell_exec_service_pb.js";
import { connect, IDLE_CONNECTION_TIMEOUT_MS, type Protocol } from "../src/node.js";

const [frontDoorIdle, certificateFile, keyFile] = process.argv.slice(2);
if (frontDoorIdle === undefined || (certificateFile === undefined) !== (keyFile === undefined)) {
  throw new Error("usage: node idle-connection-node.mjs FRONT_DOOR_IDLE_MS "
                  + "[CERTIFICATE_FILE KEY_FILE]");
}

// What the runner is checking when an uncaught error ends it (a failed assertion too).
let checking = "the client's idle timeout";
process.on("uncaughtException", (error) => {
  console.error(`idle-connection: failed (${checking}):`, error);
  process.exit(1);
});

// The margin the client's idle timeout keeps under the front door's: a timer late by a busy
// event loop, and the round trip of the client's GOAWAY.
const MARGIN_MS = 2_000;
assert.ok(IDLE_CONNECTION_TIMEOUT_MS > 0, "the client closes idle connections");
assert.ok(IDLE_CONNECTION_TIMEOUT_MS <= Number(frontDoorIdle) - MARGIN_MS,
          `the client's idle timeout (${IDLE_CONNECTION_TIMEOUT_MS} ms) must be at least `
          + `${MARGIN_MS} ms under the front door's (${frontDoorIdle} ms)`);

// Every HTTP/2 session the client opens, and what to do when one receives a GOAWAY: the
// runner's listener runs before the session manager's, which it adds once connected.
const opened: http2.ClientHttp2Session[] = [];
const closings = new WeakMap<http2.ClientHttp2Session, Promise<void>>();
let onGoaway: ((session: http2.ClientHttp2Session) => void) | undefined;
const originalConnect = http2.connect;
(http2 as { connect: unknown }).connect = (...args: Parameters<typeof http2.connect>) => {
  const session = originalConnect(...args);
  opened.push(session);
  closings.set(session, new Promise((resolve) => session.once("close", resolve)));
  session.on("goaway", () => onGoaway?.(session));
  return session;
};
syncBuiltinESMExports();  // the session manager's `import * as http2` sees it too

interface Local {
  url: string;
  /** Sends GOAWAY (NO_ERROR) on each connection: the front door closing an idle one. */
  goaway: () => void;
  /** Resolves once the client sends GOAWAY on a connection (closes it) by itself. */
  closedByClient: Promise<void>;
  close: () => void;
}

/** A gRPC (or gRPC-Web) length-prefixed message. */
function frame(flags: number, bytes: Uint8Array): Buffer {
  const framed = Buffer.alloc(5 + bytes.length);
  framed.writeUInt8(flags, 0);
  framed.writeUInt32BE(bytes.length, 1);
  framed.set(bytes, 5);
  return framed;
}

async function server(tls: { cert: Buffer; key: Buffer } | undefined): Promise<Local> {
  const h2 = tls ? http2.createSecureServer(tls) : http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  let clientClosed: () => void = () => undefined;
  const closedByClient = new Promise<void>((resolve) => { clientClosed = resolve; });
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("error", () => undefined);
    session.on("goaway", () => clientClosed());
    session.on("close", () => sessions.delete(session));
  });
  h2.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    stream.on("data", () => undefined);
    const body = toBinary(GetSessionResponseSchema,
                          create(GetSessionResponseSchema, { session: { id: "ses_answered" } }));
    stream.on("end", () => {
      const kind = String(headers["content-type"]);
      if (kind.startsWith("application/grpc-web")) {  // the trailers in the body
        const trailers = Buffer.from("grpc-status: 0\r\n");
        stream.respond({ ":status": 200, "content-type": kind });
        stream.end(Buffer.concat([frame(0, body), frame(0x80, trailers)]));
      } else if (kind.startsWith("application/grpc")) {
        stream.respond({ ":status": 200, "content-type": "application/grpc" },
                       { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(frame(0, body));
      } else {
        stream.respond({ ":status": 200, "content-type": "application/proto" });
        stream.end(body);
      }
    });
  });
  await new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve));
  const { port } = h2.address() as AddressInfo;
  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${port}`,
    goaway: () => { for (const session of sessions) session.goaway(http2.constants.NGHTTP2_NO_ERROR); },
    closedByClient,
    close: () => {
      for (const session of sessions) session.destroy();
      h2.close();
    },
  };
}

const tls = certificateFile !== undefined && keyFile !== undefined
  ? { cert: readFileSync(certificateFile), key: readFileSync(keyFile) } : undefined;
const networks = (tls ? [undefined, tls] : [undefined]).map((secure) => ({
  secure, ca: secure?.cert.toString(), name: secure ? "TLS" : "plaintext" }));

// A client left idle on each network: the client, not the server, closes its connection (a
// server of its own, which never sends GOAWAY). Checked at the end: meanwhile it stays idle.
const quiet: [string, Local][] = [];
for (const { secure, ca, name } of networks) {
  const local = await server(secure);
  const idle = connect({ baseUrl: local.url, ca, timeoutMs: 10_000 });
  assert.equal((await idle.getSession("ses_answered")).id, "ses_answered", name);
  quiet.push([name, local]);
}

for (const { secure, ca, name } of networks) {
  const local = await server(secure);
  for (const protocol of ["grpc", "grpc-web", "connect"] as Protocol[]) {
    const route = `${protocol} over ${name}`;
    checking = `${route}: a call as the server closes the idle connection`;
    const client = connect({ baseUrl: local.url, protocol, ca, timeoutMs: 10_000 });
    assert.equal((await client.getSession("ses_answered")).id, "ses_answered", route);
    const first = opened.at(-1);
    assert.ok(first !== undefined, route);
    // The server closes the idle connection, and a call is made just as the GOAWAY arrives:
    // after the session manager destroyed the session, before Node emitted its error.
    const next = new Promise<string>((resolve, reject) => {
      onGoaway = (session) => {
        if (session !== first) return;
        onGoaway = undefined;
        process.nextTick(() => client.getSession("ses_answered").then(
          (session) => resolve(session.id), reject));
      };
    });
    local.goaway();
    assert.equal(await next, "ses_answered", `${route}: the call after the GOAWAY`);
    await closings.get(first);  // Node emits its 'error', if any, just before 'close'
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await client.getSession("ses_answered")).id, "ses_answered",
                 `${route}: a later call`);
  }
  local.close();
}

for (const [name, local] of quiet) {
  checking = `${name}: the client closes its idle connection`;
  // However long that takes: a minute only bounds a run that would otherwise never end.
  const never = setTimeout(() => assert.fail(
    `${name}: the client never closed its idle connection`), 60_000);
  await local.closedByClient;
  clearTimeout(never);
  local.close();
}
console.log("idle-connection: passed");
