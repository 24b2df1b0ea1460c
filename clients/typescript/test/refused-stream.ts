/**
 * A unary call whose HTTP/2 stream the server refused (REFUSED_STREAM) is sent once more, and
 * only then: against a local HTTP/2 server that refuses the streams it is told to and answers
 * the others as the service would, over Connect and gRPC.
 *   node build/refused-stream-node.mjs
 * Prints "refused-stream: passed" or the failed assertion.
 */

import assert from "node:assert/strict";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";

import { create, toBinary } from "@bufbuild/protobuf";

import { GetSessionResponseSchema } from "../src/gen/shellexec/v1/shell_exec_service_pb.js";
import { connect, errorDetails, grpcCodeName, type Protocol } from "../src/node.js";

type Answer = "refuse" | "reset" | "denied" | "answer";

/** Answers each stream as `plan` says, in order (then "answer"); counts the streams. */
async function server(plan: Answer[]): Promise<{ url: string; streams: () => number;
                                                 close: () => void }> {
  let streams = 0;
  const h2 = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => sessions.add(session));
  h2.on("stream", (stream, headers) => {
    const answer = plan[streams] ?? "answer";
    streams += 1;
    stream.on("error", () => undefined);
    stream.on("data", () => undefined);
    if (answer === "refuse") return stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    if (answer === "reset") return stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    if (answer === "denied") {  // an answer whose message names the refusal: not one
      const message = "may not read task 'NGHTTP2_REFUSED_STREAM'";
      if (String(headers["content-type"]).startsWith("application/grpc")) {
        stream.respond({ ":status": 200, "content-type": "application/grpc",
                         "grpc-status": "7", "grpc-message": message }, { endStream: true });
      } else {
        stream.respond({ ":status": 403, "content-type": "application/json" });
        stream.end(JSON.stringify({ code: "permission_denied", message }));
      }
      return;
    }
    const body = toBinary(GetSessionResponseSchema,
                          create(GetSessionResponseSchema, { session: { id: "ses_answered" } }));
    stream.on("end", () => {
      if (String(headers["content-type"]).startsWith("application/grpc")) {
        const framed = Buffer.alloc(5 + body.length);
        framed.writeUInt32BE(body.length, 1);
        framed.set(body, 5);
        stream.respond({ ":status": 200, "content-type": "application/grpc" },
                       { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(framed);
      } else {
        stream.respond({ ":status": 200, "content-type": "application/proto" });
        stream.end(body);
      }
    });
  });
  await new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve));
  const { port } = h2.address() as AddressInfo;
  const close = () => {
    for (const session of sessions) session.destroy();  // the client's idle connection too
    h2.close();
  };
  return { url: `http://127.0.0.1:${port}`, streams: () => streams, close };
}

async function outcome(protocol: Protocol, plan: Answer[]): Promise<[string, number]> {
  const local = await server(plan);
  const client = connect({ baseUrl: local.url, protocol, timeoutMs: 5_000 });
  try {
    const session = await client.getSession("ses_answered");
    return [session.id, local.streams()];
  } catch (error) {
    return [grpcCodeName(errorDetails(error).code), local.streams()];
  } finally {
    local.close();
  }
}

for (const protocol of ["connect", "grpc"] as Protocol[]) {
  // Refused once: sent again, answered.
  assert.deepEqual(await outcome(protocol, ["refuse"]), ["ses_answered", 2], protocol);
  // Refused twice: the second refusal is the caller's to see.
  const [code, streams] = await outcome(protocol, ["refuse", "refuse"]);
  assert.notEqual(code, "OK", protocol);
  assert.equal(streams, 2, protocol);
  // Reset otherwise: the server may have run the call, so it is not sent again.
  assert.equal((await outcome(protocol, ["reset"]))[1], 1, protocol);
  // An answer whose message reads like a refusal is an answer.
  assert.deepEqual(await outcome(protocol, ["denied"]), ["PERMISSION_DENIED", 1], protocol);
}
console.log("refused-stream: passed");
