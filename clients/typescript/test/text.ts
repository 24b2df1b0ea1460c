/**
 * Text UTF-8 cannot carry is refused before anything is sent:
 *   node build/text-node.mjs
 * a lone surrogate in an update's string or key, in a normalized update, or in a string
 * argument (a task id, a session id to watch, an output to summarize). Protobuf's UTF-8
 * encoder wrote each as U+FFFD, so the service stored the text changed, over gRPC, gRPC-Web
 * and Connect alike; REST answers 400 for it. The error names where the text is and what is
 * wrong, as the Python client's ValueError does. The target is never reached: a call sent
 * would fail UNAVAILABLE instead. Prints "text: passed" or the failed assertion.
 */

import assert from "node:assert/strict";

import { connect, toValue, type Protocol, type ShellExecClient } from "../src/node.js";
import { connect as connectWeb } from "../src/web.js";

const baseUrl = "http://127.0.0.1:9";  // never called
const PROBLEM = "which UTF-8 cannot carry: the service takes UTF-8 text only";

async function refusal(call: () => Promise<unknown> | unknown): Promise<string> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof Error);
    assert.ok(!("code" in error), `sent, and failed: ${error.message}`);
    return error.message;
  }
  assert.fail("sent without complaint");
}

const chat = (text: string) => ({ sessionUpdate: "agent_message_chunk",
                                  content: { type: "text", text } });

async function check(client: ShellExecClient, label: string) {
  const cases: [() => Promise<unknown> | unknown, string][] = [
    [() => client.publish("ses_1", chat("lone \uD800 high"), 1),
     "update.content.text holds a lone surrogate (U+D800 at index 5)"],
    [() => client.publish("ses_1", chat("low \uDC00 first")),
     "update.content.text holds a lone surrogate (U+DC00 at index 4)"],
    [() => client.publish("ses_1", chat("reversed \uDE00\uD83D")),
     "update.content.text holds a lone surrogate (U+DE00 at index 9)"],
    [() => client.publish("ses_1", { sessionUpdate: "plan", entries: ["ok", ["x\uDBFF"]] }),
     "update.entries[1][0] holds a lone surrogate (U+DBFF at index 1)"],
    [() => client.publish("ses_1", { sessionUpdate: "plan", "odd key": { "k\uD800": 1 } }),
     "a key in update[\"odd key\"] holds a lone surrogate (U+D800 at index 1)"],
    [() => client.normalize([chat("fine"), chat("\uD800")]),
     "updates[1].content.text holds a lone surrogate (U+D800 at index 0)"],
    [() => client.createSession("task-\uD800"),
     "taskId holds a lone surrogate (U+D800 at index 5)"],
    [() => client.createSession("task", { agent: "\uDFFF" }),
     "agent holds a lone surrogate (U+DFFF at index 0)"],
    [() => client.completeTurn("ses_1", "turn_1", "end\uD800"),
     "stopReason holds a lone surrogate (U+D800 at index 3)"],
    [() => client.summarize({ stdout: "ok \uD800 x", exitCode: 0 }),
     "output.stdout holds a lone surrogate (U+D800 at index 3)"],
    [() => client.watch("ses_\uD800"),
     "sessionId holds a lone surrogate (U+D800 at index 4)"],
  ];
  for (const [call, expected] of cases) {
    assert.equal(await refusal(call), `${expected}, ${PROBLEM}`, label);
  }
}

for (const protocol of ["grpc", "grpc-web", "connect"] as Protocol[]) {
  await check(connect({ baseUrl, protocol }), protocol);
}
await check(connectWeb({ baseUrl }), "web");

// Paired surrogates, U+FFFD itself and "$" keys of an update are JSON like any other.
const taken = toValue({ "$typeName": "x", text: "\uD83D\uDE00 \uFFFD é" });
assert.equal(taken.kind.case, "structValue");
assert.equal(await refusal(() => toValue(["\uD800"])),
             `value[0] holds a lone surrogate (U+D800 at index 0), ${PROBLEM}`);
console.log("text: passed");
