/**
 * An integer argument its field cannot carry is refused before anything is sent:
 *   node build/integers-node.mjs
 * a `limit` or `sinceRevision` (int32) that is a fraction, NaN, infinite or past the int32
 * range, and a `sequence` (int64) that is a fraction or past the int64 range (or a number past
 * Number.MAX_SAFE_INTEGER, which may not be the integer meant). They failed as INTERNAL
 * ("serialize binary: cannot encode field") or with BigInt's RangeError; now the Error names
 * the argument, as a lone surrogate's does. What the service refuses within the range (a
 * negative limit, a sequence of 0) is its own to say, so those are sent. The target is never
 * reached: a call sent fails (UNAVAILABLE in Node's transports). Prints "integers: passed" or the failed assertion.
 */

import assert from "node:assert/strict";

import { connect, errorDetails, grpcCodeName, type Protocol,
         type ShellExecClient } from "../src/node.js";
import { connect as connectWeb } from "../src/web.js";

const baseUrl = "http://127.0.0.1:9";  // never called
const INT32 = "an integer from -2147483648 to 2147483647 (int32)";
const INT64 = "an integer from -9223372036854775808 to 9223372036854775807 (int64)";

/** The Error a call is refused with before it is sent, or the code of the call that was. */
async function outcome(call: () => Promise<unknown> | unknown): Promise<string> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof Error);
    if ("code" in error) return `sent: ${grpcCodeName(errorDetails(error).code)}`;
    return error.message;
  }
  assert.fail("answered by a server that cannot be reached");
}

const chat = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a" } };

async function check(client: ShellExecClient, label: string) {
  const refused: [() => Promise<unknown> | unknown, string][] = [];
  for (const value of [1.5, NaN, Infinity, -Infinity, 2 ** 31, -(2 ** 31) - 1, 2 ** 32 + 1]) {
    refused.push(
      [() => client.listMessages("ses_1", { limit: value }), `limit must be ${INT32}, got ${value}`],
      [() => client.listSessions({ limit: value }), `limit must be ${INT32}, got ${value}`],
      [() => client.watch("ses_1", { sinceRevision: value }),
       `sinceRevision must be ${INT32}, got ${value}`]);
  }
  refused.push(
    [() => client.listSessions({ limit: "5" as unknown as number }),
     `limit must be ${INT32}, got a string`],
    [() => client.publish("ses_1", chat, 1.5), `sequence must be ${INT64}, got 1.5`],
    [() => client.publish("ses_1", chat, NaN), `sequence must be ${INT64}, got NaN`],
    [() => client.publish("ses_1", chat, 2 ** 63),
     `sequence must be ${INT64}, got 9223372036854775808`],
    [() => client.publish("ses_1", chat, -(2 ** 64)),
     `sequence must be ${INT64}, got -18446744073709551616`],
    [() => client.publish("ses_1", chat, 2 ** 53),
     "sequence 9007199254740992 is past Number.MAX_SAFE_INTEGER, so it may not be the "
     + "integer meant: pass a bigint"],
    [() => client.publish("ses_1", chat, 2n ** 63n),
     `sequence must be ${INT64}, got 9223372036854775808`],
    [() => client.publish("ses_1", chat, -(2n ** 63n) - 1n),
     `sequence must be ${INT64}, got -9223372036854775809`],
  );
  for (const [call, expected] of refused) {
    assert.equal(await outcome(call), expected, label);
  }
  // Within the range the call is sent (and fails: nothing listens), whatever the service
  // would say of the value.
  const sent: (() => Promise<unknown>)[] = [
    () => client.listSessions({ limit: 2 ** 31 - 1 }),
    () => client.listMessages("ses_1", { limit: -(2 ** 31) }),
    () => client.listSessions({ limit: -1 }),
    () => client.publish("ses_1", chat, 0),
    () => client.publish("ses_1", chat, Number.MAX_SAFE_INTEGER),
    () => client.publish("ses_1", chat, 2n ** 63n - 1n),
    async () => {
      for await (const _ of client.watch("ses_1", { sinceRevision: 2 ** 31 - 1 })) break;
    },
  ];
  for (const call of sent) {
    assert.match(await outcome(call), /^sent: /, label);
  }
}

for (const protocol of ["grpc", "grpc-web", "connect"] as Protocol[]) {
  await check(connect({ baseUrl, protocol }), protocol);
}
await check(connectWeb({ baseUrl }), "web");
console.log("integers: passed");
