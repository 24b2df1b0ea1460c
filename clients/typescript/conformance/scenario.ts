/**
 * The conformance scenario (tests/clients/scenario.json, described in tests/clients/README.md)
 * played by the TypeScript client over any transport. It throws on the first difference, with
 * what was expected and what came back; it hard-codes no expected value.
 */

import type { JsonValue } from "@bufbuild/protobuf";

import {
  errorDetails,
  grpcCodeName,
  type Message,
  type ShellExecClient,
} from "../src/index.js";

export interface Scenario {
  session: { task_id_prefix: string; agent: string };
  publishes: Array<{ sequence: number; update: JsonValue; duplicate: boolean }>;
  stop_reason: string;
  final_session: { state: string; revision: number };
  page_size: number;
  messages: Array<Record<string, unknown>>;
  shell_output: { message: number; status: string; exit_code: number; stdout: string;
                  stderr: string };
  watch: { events: Array<{ revision: number; type: string; message: number | null }>;
           resume_from_revision: number };
  errors: {
    foreign_message: { message: number; code: string };
    bad_field: { limit: number; code: string; field: string };
  };
}

type Event = [revision: number, type: string, messageId: string];

const WATCH_TIMEOUT_MS = 30_000;

/** Plays the whole scenario; `language` names the runs apart in the task ids. */
export async function play(client: ShellExecClient, scenario: Scenario, language: string
): Promise<void> {
  const session = await client.createSession(
    `${scenario.session.task_id_prefix}-${language}-${randomSuffix()}`,
    { agent: scenario.session.agent });
  const turn = await client.startTurn(session.id);
  for (const entry of scenario.publishes) {
    const answer = await client.publish(session.id, entry.update, entry.sequence);
    same(answer.duplicate, entry.duplicate, `duplicate of sequence ${entry.sequence}`);
  }
  await client.completeTurn(session.id, turn.id, scenario.stop_reason);
  const final = await client.getSession(session.id);
  same({ state: final.state, revision: final.revision }, scenario.final_session, "session");

  const messages = await allPages(client, session.id, scenario.page_size);
  same(messages.map(described), scenario.messages, "messages");
  await checkShellOutput(client, scenario, session.id, messages);
  await checkWatch(client, scenario, session.id, messages);
  await checkErrors(client, scenario, session.id, messages, language);
}

async function allPages(client: ShellExecClient, sessionId: string, pageSize: number
): Promise<Message[]> {
  const pages = [await client.listMessages(sessionId, { limit: pageSize })];
  while (pages.at(-1)!.hasMore) {
    pages.push(await client.listMessages(sessionId, {
      limit: pageSize, after: pages.at(-1)!.cursor }));
  }
  if (pages.length < 2) throw new Error("page_size must be smaller than the message count");
  return pages.flatMap((page) => page.messages);
}

/** The message in the scenario's terms (the keys tests/clients/README.md lists). */
function described(message: Message): Record<string, unknown> {
  const described: Record<string, unknown> = {
    author_type: message.authorType, type: message.type, content: message.content };
  const shell = message.metadata?.normalized?.shellExec;
  if (message.metadata?.normalized !== undefined) {
    Object.assign(described, {
      status: message.metadata.status, command: shell?.command,
      exit_code: shell?.output?.exitCode ?? null, result: shell?.result });
  }
  return described;
}

async function checkShellOutput(client: ShellExecClient, scenario: Scenario, sessionId: string,
                                messages: Message[]): Promise<void> {
  const expected = scenario.shell_output;
  const answer = await client.shellOutput(sessionId, at(messages, expected.message).id);
  same({
    message: expected.message, status: answer.status, exit_code: answer.output?.exitCode,
    stdout: answer.output?.stdout, stderr: answer.output?.stderr,
  }, expected, "shell output");
}

async function checkWatch(client: ShellExecClient, scenario: Scenario, sessionId: string,
                          messages: Message[]): Promise<void> {
  const expected: Event[] = scenario.watch.events.map(
    (event) => [event.revision, event.type,
                event.message === null ? "" : at(messages, event.message).id]);
  same(await watched(client, sessionId, 0, expected.length), expected, "watch from 0");
  const resume = scenario.watch.resume_from_revision;
  const tail = expected.filter(([revision]) => revision > resume);
  same(await watched(client, sessionId, resume, tail.length), tail, `watch from ${resume}`);
}

async function watched(client: ShellExecClient, sessionId: string, since: number,
                       count: number): Promise<Event[]> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), WATCH_TIMEOUT_MS);
  const seen: Event[] = [];
  try {
    for await (const event of client.watch(sessionId, {
      sinceRevision: since, signal: stop.signal })) {
      if (event.type !== "heartbeat") {
        seen.push([event.revision, event.type, event.message?.id ?? ""]);
      }
      if (seen.length === count) break;
    }
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
  return seen;
}

async function checkErrors(client: ShellExecClient, scenario: Scenario, sessionId: string,
                           messages: Message[], language: string): Promise<void> {
  const foreign = scenario.errors.foreign_message;
  const other = await client.createSession(`conformance-${language}-other-${randomSuffix()}`);
  const notFound = await failure(
    client.shellOutput(other.id, at(messages, foreign.message).id));
  same(grpcCodeName(notFound.code), foreign.code, "foreign message");

  const bad = scenario.errors.bad_field;
  const invalid = await failure(client.listMessages(sessionId, { limit: bad.limit }));
  same(grpcCodeName(invalid.code), bad.code, "bad field");
  const fields = invalid.fieldViolations.map(([field]) => field);
  if (!fields.includes(bad.field)) {
    throw new Error(`bad field: no violation names ${bad.field} (${fields.join(", ")})`);
  }
}

async function failure(call: Promise<unknown>): Promise<ReturnType<typeof errorDetails>> {
  try {
    await call;
  } catch (error) {
    return errorDetails(error);
  }
  throw new Error("the call succeeded; an error was expected");
}

function at<T>(items: T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new Error(`no item at index ${index} of ${items.length}`);
  return item;
}

function same(actual: unknown, expected: unknown, what: string): void {
  const [left, right] = [canonical(actual), canonical(expected)];
  if (left !== right) throw new Error(`${what}: expected ${right}, got ${left}`);
}

/** JSON with sorted keys, so objects compare whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    return Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)));
  });
}

function randomSuffix(): string {
  return Math.random().toString(16).slice(2, 10);
}
