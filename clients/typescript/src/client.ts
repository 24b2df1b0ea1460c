/**
 * The thin typed wrapper over the generated ShellExecService client: plain arguments in,
 * generated messages out, ACP updates as plain JSON objects (never google.protobuf.Value
 * builders). Transport-agnostic: pass a Connect transport from `./node.js` or `./web.js`.
 */

import { fromJson, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Transport } from "@connectrpc/connect";

import type { Message } from "./gen/shellexec/v1/message_pb.js";
import type { Session, Turn } from "./gen/shellexec/v1/session_pb.js";
import {
  ShellExecService,
  type BootState,
  type CompleteTurnResponse,
  type GetShellOutputResponse,
  type ListMessagesResponse,
  type ListSessionsResponse,
  type NormalizeShellExecResponse,
  type PublishUpdateResponse,
  type WatchMessagesResponse,
} from "./gen/shellexec/v1/shell_exec_service_pb.js";
import type {
  ShellOutputSchema,
  ShellOutputSummary,
} from "./gen/shellexec/v1/shell_output_pb.js";

/** The largest page `messages()` asks for while it follows the cursor. */
const PAGE_SIZE = 500;

export interface CallOptions {
  /** Ends the call (and a watch) when aborted. */
  signal?: AbortSignal;
}

export interface ListOptions extends CallOptions {
  limit?: number;
  before?: string;
  after?: string;
  sort?: string;
}

export interface WatchOptions extends CallOptions {
  /** Replay every event after this revision first; absent means live events only. */
  sinceRevision?: number;
}

export interface ClientOptions {
  /** Per-call deadline of the unary calls, in milliseconds (watch has none): 30,000 unless
   * given; 0 for none, as in the Go, Java and Python clients. A negative or non-finite one,
   * or one past MAX_TIMEOUT_MS, is refused when the client is made. */
  timeoutMs?: number;
}

/** The longest deadline Node's timers keep (about 24.8 days): a longer one fired at once, and
 * every call failed with DEADLINE_EXCEEDED. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** The deadline `timeoutMs` asks for, checked now: Connect took a negative one (or NaN) as no
 * deadline at all. */
function callTimeout(timeoutMs: number | undefined): number {
  if (timeoutMs === undefined) return 30_000;
  if (!Number.isFinite(timeoutMs)) {
    throw new Error(`timeoutMs: must be a finite number of milliseconds, got ${timeoutMs}`);
  }
  if (timeoutMs < 0) throw new Error(`timeoutMs: must not be negative, got ${timeoutMs}`);
  if (timeoutMs > MAX_TIMEOUT_MS) {
    throw new Error(`timeoutMs: must be at most ${MAX_TIMEOUT_MS} (0 for none), got ${timeoutMs}`);
  }
  return timeoutMs;
}

/** Blocking-free calls to one shellexec service over `transport`. */
export class ShellExecClient {
  private readonly stub: Client<typeof ShellExecService>;
  private readonly timeoutMs: number;

  constructor(transport: Transport, options: ClientOptions = {}) {
    this.stub = createClient(ShellExecService, transport);
    this.timeoutMs = callTimeout(options.timeoutMs);
  }

  /** The normalized record of one tool call's updates (plain ACP `params.update` objects). */
  async normalize(updates: readonly JsonValue[],
                  options: { agent?: string; maskSecrets?: boolean } & CallOptions = {}
  ): Promise<NormalizeShellExecResponse> {
    return this.stub.normalizeShellExec(checked({
      updates: updates.map((update, index) => toValue(update, `updates[${index}]`)),
      agent: options.agent ?? "", maskSecrets: options.maskSecrets ?? false,
    }), this.unary(options));
  }

  async summarize(output: MessageInitShape<typeof ShellOutputSchema>,
                  options: CallOptions = {}): Promise<ShellOutputSummary | undefined> {
    return (await this.stub.summarizeShellOutput(checked({ output }), this.unary(options))).summary;
  }

  /** Pass the same `requestId` on every retry of one call: a lost answer then creates no
   * second session. */
  async createSession(taskId: string,
                      options: { agent?: string; requestId?: string } & CallOptions = {}
  ): Promise<Session> {
    const response = await this.stub.createSession(checked({
      taskId, agent: options.agent ?? "", requestId: options.requestId ?? "",
    }), this.unary(options));
    return required(response.session, "session");
  }

  async getSession(sessionId: string, options: CallOptions = {}): Promise<Session> {
    const response = await this.stub.getSession(checked({ sessionId }), this.unary(options));
    return required(response.session, "session");
  }

  /** Pass the same `requestId` on every retry of one call: a lost answer then starts no
   * second turn. */
  async startTurn(sessionId: string, options: { requestId?: string } & CallOptions = {}
  ): Promise<Turn> {
    const response = await this.stub.startTurn(
      checked({ sessionId, requestId: options.requestId ?? "" }), this.unary(options));
    return required(response.turn, "turn");
  }

  /** Publishes one ACP update; with a `sequence`, a retry of it returns `duplicate: true`. */
  async publish(sessionId: string, update: JsonValue, sequence?: number | bigint,
                options: CallOptions = {}): Promise<PublishUpdateResponse> {
    return this.stub.publishUpdate(checked({
      sessionId, update: toValue(update, "update"), sequence: int64(sequence, "sequence"),
    }), this.unary(options));
  }

  async completeTurn(sessionId: string, turnId: string, stopReason = "end_turn",
                     options: CallOptions = {}): Promise<CompleteTurnResponse> {
    return this.stub.completeTurn(checked({ sessionId, turnId, stopReason }),
                                  this.unary(options));
  }

  async listMessages(sessionId: string, options: ListOptions = {}
  ): Promise<ListMessagesResponse> {
    return this.stub.listMessages(checked({
      sessionId, limit: int32(options.limit, "limit") ?? 0, before: options.before ?? "",
      after: options.after ?? "", sort: options.sort ?? "",
    }), this.unary(options));
  }

  /** Every message of the session, oldest first (follows the pages). */
  async messages(sessionId: string, options: CallOptions = {}): Promise<Message[]> {
    const found: Message[] = [];
    let after = "";
    for (;;) {
      const page = await this.listMessages(sessionId, { ...options, limit: PAGE_SIZE, after });
      found.push(...page.messages);
      if (!page.hasMore) return found;
      after = page.cursor;
    }
  }

  /** A page of the sessions the caller may see, oldest first (`sort: "desc"`: newest);
   * `before` and `after` take a session id. */
  async listSessions(options: ListOptions = {}): Promise<ListSessionsResponse> {
    return this.stub.listSessions(checked({
      limit: int32(options.limit, "limit") ?? 0, before: options.before ?? "",
      after: options.after ?? "", sort: options.sort ?? "",
    }), this.unary(options));
  }

  async shellOutput(sessionId: string, messageId: string, options: CallOptions = {}
  ): Promise<GetShellOutputResponse> {
    return this.stub.getShellOutput(checked({ sessionId, messageId }), this.unary(options));
  }

  async bootState(taskId: string, options: CallOptions = {}): Promise<BootState> {
    const response = await this.stub.getBootState(checked({ taskId }), this.unary(options));
    return required(response.initialState, "initial_state");
  }

  /** Deletes the session with its messages, output and feed (needs the `admin` scope). */
  async deleteSession(sessionId: string, options: CallOptions = {}): Promise<void> {
    await this.stub.deleteSession(checked({ sessionId }), this.unary(options));
  }

  /** Deletes the task with all its sessions; returns the deleted sessions' ids. */
  async deleteTask(taskId: string, options: CallOptions = {}): Promise<string[]> {
    return (await this.stub.deleteTask(checked({ taskId }), this.unary(options))).deletedSessionIds;
  }

  /** The session's feed; iterate it, and end it with `signal` (or by leaving the loop). A
   * session id UTF-8 cannot carry, or a `sinceRevision` no int32 can, is refused here, before
   * the feed opens. */
  watch(sessionId: string, options: WatchOptions = {}): AsyncIterable<WatchMessagesResponse> {
    const request = checked({
      sessionId, sinceRevision: int32(options.sinceRevision, "sinceRevision"),
    });
    const stub = this.stub;
    return {
      async *[Symbol.asyncIterator]() {
        // Connect's stream does not end its call when the loop is left (`break`, `return`,
        // a throw): the feed stayed open, and kept Node running. Abort it then.
        const leaving = new AbortController();
        const unfollow = following(options.signal, leaving);
        try {
          yield* stub.watchMessages(request, { signal: leaving.signal });
        } finally {
          unfollow();
          leaving.abort();
        }
      },
    };
  }

  private unary(options: CallOptions): { timeoutMs: number; signal?: AbortSignal } {
    return { timeoutMs: this.timeoutMs, signal: options.signal };
  }
}

/** A plain JSON value as the google.protobuf.Value the contract carries. A string or key
 * holding a lone surrogate, which UTF-8 cannot carry, is refused with an Error naming where it
 * is under `path` and what is wrong (`update.content.text holds a lone surrogate (U+D800 at
 * index 5), ...`): sent, it became U+FFFD, and the service stored the text changed. */
export function toValue(value: JsonValue, path = "value"): Value {
  refuseLoneSurrogates(value, path, true);
  return fromJson(ValueSchema, value);
}

/** A high surrogate not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with `text` for UTF-8, or undefined. */
function surrogateProblem(text: string): string | undefined {
  const found = LONE_SURROGATE.exec(text);
  if (found === null) return undefined;
  const unit = text.charCodeAt(found.index).toString(16).toUpperCase();
  return `holds a lone surrogate (U+${unit} at index ${found.index}), which UTF-8 cannot `
    + "carry: the service takes UTF-8 text only";
}

/** `path` followed by an object key, as a JSON path: .name, or ["odd key"]. */
function keyPath(path: string, key: string): string {
  if (path === "") return key;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Throws for the first string or key of `value` holding a lone surrogate: protobuf's UTF-8
 * encoder writes each as U+FFFD. `value` is JSON (`json`), or a request's fields: a message's
 * own `$typeName` and `$unknown` are no fields, and a google.protobuf.Value in it was checked
 * as it was made (toValue). */
function refuseLoneSurrogates(value: unknown, path: string, json: boolean, depth = 0): void {
  if (typeof value === "string") {
    const problem = surrogateProblem(value);
    if (problem !== undefined) throw new Error(`${path || "value"} ${problem}`);
    return;
  }
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)
      || depth > MAX_TEXT_DEPTH) {
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) =>
      refuseLoneSurrogates(item, `${path}[${index}]`, json, depth + 1));
    return;
  }
  if (!json && (value as { $typeName?: unknown }).$typeName === "google.protobuf.Value") return;
  for (const [key, item] of Object.entries(value)) {
    if (!json && key.startsWith("$")) continue;
    const problem = surrogateProblem(key);
    if (problem !== undefined) throw new Error(`a key in ${path || "the request"} ${problem}`);
    refuseLoneSurrogates(item, keyPath(path, key), json, depth + 1);
  }
}

/** How deep the check follows a value: fromJson and the service refuse far shallower. */
const MAX_TEXT_DEPTH = 10_000;

/** The range of the contract's int32 fields (`limit`, `since_revision`). */
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
/** The range of its int64 field (`sequence`). */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** `value` for an int32 field, refused with an Error naming the argument when the field
 * cannot carry it (a fraction, NaN, past the int32 range): protobuf's encoder failed the call
 * as INTERNAL ("cannot encode field") instead. What the service takes within the range
 * (docs/api.md, "Limits") is the service's to say. */
function int32(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value)
      || value < INT32_MIN || value > INT32_MAX) {
    throw new Error(`${name} must be an integer from ${INT32_MIN} to ${INT32_MAX} (int32), `
                    + `got ${describe(value)}`);
  }
  return value;
}

/** `value` for an int64 field as a bigint, refused alike: a fraction (a RangeError from
 * BigInt), one past the int64 range (INTERNAL from protobuf's encoder), or a number past
 * Number.MAX_SAFE_INTEGER, which may no longer be the integer the caller meant (pass a bigint
 * for those). */
function int64(value: number | bigint | undefined, name: string): bigint | undefined {
  if (value === undefined) return undefined;
  const range = `an integer from ${INT64_MIN} to ${INT64_MAX} (int64)`;
  if (typeof value !== "bigint" && (typeof value !== "number" || !Number.isInteger(value))) {
    throw new Error(`${name} must be ${range}, got ${describe(value)}`);
  }
  const integer = BigInt(value);
  if (integer < INT64_MIN || integer > INT64_MAX) {
    throw new Error(`${name} must be ${range}, got ${integer}`);
  }
  if (typeof value === "number" && !Number.isSafeInteger(value)) {
    throw new Error(`${name} ${integer} is past Number.MAX_SAFE_INTEGER, so it may not be the `
                    + "integer meant: pass a bigint");
  }
  return integer;
}

/** A value in an error message: a number as JavaScript writes it, anything else by type. */
function describe(value: unknown): string {
  return typeof value === "number" ? String(value) : `a ${typeof value}`;
}

/** `request`, once its strings are known to be UTF-8 text (refuseLoneSurrogates). */
function checked<T>(request: T): T {
  refuseLoneSurrogates(request, "", false);
  return request;
}

/** The watches each caller's signal ends: one listener per signal, whatever the number of
 * watches sharing it. A listener per watch made Node warn of a leak past ten of them, and
 * `AbortSignal.any` leaks the signals it joins on Node 20. */
const followers = new WeakMap<AbortSignal, Set<AbortController>>();

/** Aborts `controller` when `signal` aborts; returns what stops following it. */
function following(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (signal === undefined) return () => undefined;
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => undefined;
  }
  let watches = followers.get(signal);
  if (watches === undefined) {
    const aborted = new Set<AbortController>();
    signal.addEventListener("abort", () => {
      for (const watch of aborted) watch.abort(signal.reason);
      aborted.clear();
    }, { once: true });
    followers.set(signal, aborted);
    watches = aborted;
  }
  watches.add(controller);
  const own = watches;
  return () => own.delete(controller);
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw new Error(`the response has no ${field}`);
  return value;
}
