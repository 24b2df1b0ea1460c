/**
 * What the client refuses when it is made, before any call:
 *   node build/client-options-node.mjs
 * a token no header can carry (a line feed read with it from a file, which `Headers` trimmed
 * silently; a character outside ASCII; more than 256 characters), saying what is wrong with it
 * and never what it is; and a negative or non-finite `timeoutMs` (Connect took a negative one,
 * or NaN, as no deadline or an immediate one). 0 is no deadline, as in the other clients.
 * Prints "client-options: passed" or the failed assertion.
 */

import assert from "node:assert/strict";

import { bearerToken, connect, ShellExecClient } from "../src/node.js";
import { connect as connectWeb, webTransport } from "../src/web.js";

const baseUrl = "http://127.0.0.1:9";  // never called
const SECRET = "shx_Secret0123456789";

function refusal(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    assert.ok(error instanceof Error);
    return error.message;
  }
  assert.fail("made without complaint");
}

const tokens: [string, string][] = [
  [`${SECRET}\n`, "token ends with a line feed"],
  [`${SECRET}\r\n`, `token holds a carriage return (character ${SECRET.length + 1} of `
    + `${SECRET.length + 2})`],
  [`Bearer ${SECRET}`, `token holds a space (character 7 of ${SECRET.length + 7})`],
  [`${SECRET}\t`, "token ends with a tab"],
  [`${SECRET}\u0000x`, `token holds a NUL byte (character ${SECRET.length + 1} of `
    + `${SECRET.length + 2})`],
  [`${SECRET}\u007f`, "token ends with a control character"],
  [`${SECRET}é${SECRET}`, `token holds a character outside ASCII (character `
    + `${SECRET.length + 1} of ${2 * SECRET.length + 1})`],
  [`${SECRET}😀`, "token ends with a character outside ASCII"],
  [SECRET + "x".repeat(257 - SECRET.length),
   "token is 257 characters long; the service takes at most 256"],
];
for (const [token, problem] of tokens) {
  const expected = `${problem}: a token is at most 256 visible ASCII characters`;
  for (const make of [() => connect({ baseUrl, token }),
                      () => connect({ baseUrl, token, protocol: "connect", httpVersion: "1.1" }),
                      () => connectWeb({ baseUrl, token }),
                      () => webTransport({ baseUrl, token, protocol: "connect" }),
                      () => bearerToken(token)]) {
    const message = refusal(make);
    assert.equal(message, expected, JSON.stringify(token));
    assert.ok(!message.includes(SECRET), "the message shows the token");
  }
}
assert.equal(refusal(() => bearerToken("")),
             "token is empty: a token is at most 256 visible ASCII characters");
// The longest token, and none at all ("" as an unset variable gives), are taken.
connect({ baseUrl, token: "x".repeat(256) });
connect({ baseUrl, token: "" });
connectWeb({ baseUrl, token: "!~" });

for (const [timeoutMs, expected] of [
  [-1, "timeoutMs: must not be negative, got -1"],
  [-0.5, "timeoutMs: must not be negative, got -0.5"],
  [Number.NaN, "timeoutMs: must be a finite number of milliseconds, got NaN"],
  [Number.POSITIVE_INFINITY, "timeoutMs: must be a finite number of milliseconds, got Infinity"],
  [2_147_483_648, "timeoutMs: must be at most 2147483647 (0 for none), got 2147483648"],
] as const) {
  assert.equal(refusal(() => connect({ baseUrl, timeoutMs })), expected);
  assert.equal(refusal(() => connectWeb({ baseUrl, timeoutMs })), expected);
  assert.equal(refusal(() => new ShellExecClient(webTransport({ baseUrl }), { timeoutMs })),
               expected);
}
connect({ baseUrl, timeoutMs: 0 });
console.log("client-options: passed");
