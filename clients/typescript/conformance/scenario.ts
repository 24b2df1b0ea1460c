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
  type Session,
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
    foreign_message: { task_suffix: string; message: number; code: string };
    bad_field: { limit: number; code: string; field: string };
    bad_session_list_field: { limit: number; code: string; field: string };
  };
  session_list: { page_size: number; added_session: { task_suffix: string; agent: string } };
}

type Event = [revision: number, type: string, messageId: string];
/** A session the run created: its id, and the task id and agent it was created with. */
type Created = [id: string, taskId: string, agent: string];

const WATCH_TIMEOUT_MS = 30_000;

/** Plays the whole scenario; `language` names the runs apart in the task ids. */
export async function play(client: ShellExecClient, scenario: Scenario, language: string
): Promise<void> {
  const runTaskId = `${scenario.session.task_id_prefix}-${language}-${randomSuffix()}`;
  const session = await client.createSession(runTaskId, { agent: scenario.session.agent });
  const created: Created[] = [[session.id, runTaskId, scenario.session.agent]];
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
  created.push(await checkErrors(client, scenario, runTaskId, session.id, messages));
  await checkSessionList(client, scenario, runTaskId, created);
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

/** Checks the errors; returns the second session, which it creates. */
async function checkErrors(client: ShellExecClient, scenario: Scenario, runTaskId: string,
                           sessionId: string, messages: Message[]): Promise<Created> {
  const foreign = scenario.errors.foreign_message;
  const otherTaskId = `${runTaskId}-${foreign.task_suffix}`;
  const other = await client.createSession(otherTaskId);
  const notFound = await failure(
    client.shellOutput(other.id, at(messages, foreign.message).id));
  same(grpcCodeName(notFound.code), foreign.code, "foreign message");

  const bad = scenario.errors.bad_field;
  badField(await failure(client.listMessages(sessionId, { limit: bad.limit })), bad,
           "bad field");
  const badList = scenario.errors.bad_session_list_field;
  badField(await failure(client.listSessions({ limit: badList.limit })), badList,
           "bad session list field");
  return [other.id, otherTaskId, ""];
}

function badField(invalid: ReturnType<typeof errorDetails>,
                  expected: { code: string; field: string }, what: string): void {
  same(grpcCodeName(invalid.code), expected.code, what);
  const fields = invalid.fieldViolations.map(([field]) => field);
  if (!fields.includes(expected.field)) {
    throw new Error(`${what}: no violation names ${expected.field} (${fields.join(", ")})`);
  }
}

async function checkSessionList(client: ShellExecClient, scenario: Scenario, runTaskId: string,
                                created: Created[]): Promise<void> {
  const added = scenario.session_list.added_session;
  const taskId = `${runTaskId}-${added.task_suffix}`;
  const third = await client.createSession(taskId, { agent: added.agent });
  created.push([third.id, taskId, added.agent]);
  const listed = await newestPages(client, scenario.session_list.page_size, at(created, 0)[0]);
  const runs: Created[] = listed.reverse()
    .filter((s) => s.taskId === runTaskId || s.taskId.startsWith(`${runTaskId}-`))
    .map((s) => [s.id, s.taskId, s.agent]);
  same(runs, created, "the run's sessions, oldest first");
}

/** The sessions, newest first, page by page up to the one holding `oldestId` (older sessions
 * belong to other runs). */
async function newestPages(client: ShellExecClient, pageSize: number, oldestId: string
): Promise<Session[]> {
  const pages = [await client.listSessions({ limit: pageSize, sort: "desc" })];
  while (pages.at(-1)!.hasMore && !pages.at(-1)!.sessions.some((s) => s.id === oldestId)) {
    pages.push(await client.listSessions({
      limit: pageSize, sort: "desc", before: pages.at(-1)!.cursor }));
  }
  if (pages.length < 2) {
    throw new Error("session_list.page_size must be smaller than the run's sessions");
  }
  return pages.flatMap((page) => page.sessions);
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
