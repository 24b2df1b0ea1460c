/**
 * The wrapper's calls the conformance scenario does not make, against a real service with
 * authentication on:
 *   node build/wrapper-node.mjs SCENARIO BASE_URL PROTOCOL ADMIN_TOKEN READ_TOKEN
 * normalize and summarize (the scenario's first shell call), every page at once, boot state,
 * delete session and task, and the bearer token: none is UNAUTHENTICATED (TOKEN_MISSING), an
 * unknown one TOKEN_UNKNOWN, a read token may not create (SCOPE_MISSING); and leaving a watch loop ends the feed, so this process exits by itself.
 * Prints "wrapper: passed" or the failed assertion.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import type { JsonValue } from "@bufbuild/protobuf";

import { connect, errorDetails, grpcCodeName, type Protocol, type ShellExecClient }
  from "../src/node.js";
import type { Scenario } from "../conformance/scenario.js";

async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    return grpcCodeName(errorDetails(error).code);
  }
  return "OK";
}

/** The code and reason a refused call failed with: over gRPC-Web the front door's 401 is
 * not an HTTP 200, and its reason is read from the error's metadata. */
async function refusalOf(call: Promise<unknown>): Promise<[string, string]> {
  try {
    await call;
  } catch (error) {
    const details = errorDetails(error);
    return [grpcCodeName(details.code), details.reason];
  }
  return ["OK", ""];
}

function firstShellCall(scenario: Scenario): JsonValue[] {
  const updates = scenario.publishes.map((entry) => entry.update as Record<string, JsonValue>);
  const id = updates.find((u) => u["sessionUpdate"] === "tool_call")?.["toolCallId"];
  return updates.filter((u) => u["toolCallId"] === id);
}

async function checkNormalizeAndSummarize(client: ShellExecClient, scenario: Scenario) {
  const expected = scenario.messages.find((m) => m["type"] === "tool_execute");
  const normalized = await client.normalize(firstShellCall(scenario),
                                            { agent: scenario.session.agent });
  assert.equal(normalized.shellExec?.command, expected?.["command"]);
  assert.equal(normalized.shellExec?.output?.exitCode, expected?.["exit_code"]);
  const summary = await client.summarize({ stdout: "one\ntwo\n", exitCode: 3 });
  assert.deepEqual([summary?.exitCode, summary?.hasOutput, summary?.stdoutBytes], [3, true, 8]);
}

async function checkReadsAndDeletes(client: ShellExecClient, scenario: Scenario) {
  const taskId = `wrapper-${Math.random().toString(16).slice(2, 10)}`;
  const session = await client.createSession(taskId, { agent: scenario.session.agent });
  await client.startTurn(session.id);
  for (const entry of scenario.publishes) {
    await client.publish(session.id, entry.update, entry.sequence);
  }
  const messages = await client.messages(session.id);
  assert.equal(messages.length, scenario.messages.length);
  const boot = await client.bootState(taskId);
  assert.equal(boot.session?.id, session.id);
  assert.deepEqual(boot.messages.map((m) => m.id), messages.map((m) => m.id));
  await client.deleteSession(session.id);
  assert.equal(await codeOf(client.getSession(session.id)), "NOT_FOUND");
  const second = await client.createSession(taskId);
  assert.deepEqual(await client.deleteTask(taskId), [second.id]);
}

/** Leaving the loop ends the feed: the call stayed open, and this process never exited. */
async function checkLeavingTheWatchLoopEndsTheFeed(client: ShellExecClient) {
  const session = await client.createSession(`wrapper-${Math.random().toString(16).slice(2)}`);
  await client.publish(session.id, { sessionUpdate: "agent_message_chunk",
                                     content: { type: "text", text: "hello" } });
  let seen = 0;
  for await (const event of client.watch(session.id, { sinceRevision: 0 })) {
    seen += 1;
    if (event.message) break;
  }
  assert.ok(seen > 0);
}

/** One signal may end many watches: Node warned of a listener leak past ten of them. */
async function checkOneSignalEndsManyWatches(client: ShellExecClient) {
  const warnings: string[] = [];
  process.on("warning", (warning) => warnings.push(warning.name));
  const session = await client.createSession(`wrapper-${Math.random().toString(16).slice(2)}`);
  const stop = new AbortController();
  const watches = Array.from({ length: 12 }, async () => {
    let events = 0;
    try {
      for await (const _ of client.watch(session.id, { signal: stop.signal })) events += 1;
    } catch (error) {
      assert.equal(grpcCodeName(errorDetails(error).code), "CANCELED");
    }
    return events;
  });
  await new Promise((resolve) => setTimeout(resolve, 500));  // the feeds open
  stop.abort();
  await Promise.all(watches);
  await new Promise((resolve) => setImmediate(resolve));  // a warning is emitted on a tick
  assert.deepEqual(warnings, []);
}

async function main([scenarioPath, baseUrl, protocol, admin, reader]: string[]) {
  assert.ok(scenarioPath && baseUrl && protocol && admin && reader, "usage: see the header");
  const scenario = JSON.parse(readFileSync(scenarioPath, "utf8")) as Scenario;
  const as = (token?: string) => connect({ baseUrl, protocol: protocol as Protocol, token });
  await checkNormalizeAndSummarize(as(admin), scenario);
  await checkReadsAndDeletes(as(admin), scenario);
  assert.deepEqual(await refusalOf(as().createSession("wrapper-anonymous")),
                   ["UNAUTHENTICATED", "TOKEN_MISSING"]);
  assert.deepEqual(await refusalOf(as("not-a-token-it-issued").createSession("wrapper-unknown")),
                   ["UNAUTHENTICATED", "TOKEN_UNKNOWN"]);
  assert.deepEqual(await refusalOf(as(reader).createSession("wrapper-reader")),
                   ["PERMISSION_DENIED", "SCOPE_MISSING"]);
  await checkLeavingTheWatchLoopEndsTheFeed(as(admin));
  await checkOneSignalEndsManyWatches(as(admin));
  console.log("wrapper: passed");
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
