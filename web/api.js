// The REST routes the page uses (docs/api.md), same origin, JSON with snake_case
// names. `fetch` is injected so the paging and error handling are unit-tested; `headers`
// adds the bearer token of the tab (auth.js) to every request, and `onRefused` hears of every
// answer refusing it (401, 403) before the caller gets the error.

// The page the chat opens with and loads on scrolling up: a screenful or two, so a session of
// any length shows its newest messages as fast as a short one.
export const OLDER_PAGE_LIMIT = 100;

// Sessions per page of the index at `/`.
export const SESSION_PAGE_LIMIT = 20;

/** A non-2xx answer. `status` is the HTTP status, `code` the gRPC code from the JSON body,
 * `reason` the reason its details name (docs/api.md, Error reasons), or ''. */
export class ApiError extends Error {
  constructor(status, code, message, reason = '') {
    super(message || `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.reason = reason;
  }
}

/** The reason an error body's details name (`google.rpc.ErrorInfo`), or ''. */
export function reasonOf(body) {
  const details = Array.isArray(body?.details) ? body.details : [];
  const info = details.find((detail) => typeof detail?.reason === 'string' && detail.reason !== ''
    && String(detail['@type'] ?? '').endsWith('google.rpc.ErrorInfo'));
  return info?.reason ?? '';
}

/** True for an answer saying that what was asked for does not exist (a deleted session). */
export function isNotFound(error) {
  return error instanceof ApiError && error.status === 404;
}

/**
 * An id no address can carry as a path segment. Every browser reads a segment `.` or `..` as
 * a step within the path, written `%2E` or `%2e` too (the WHATWG URL standard), so a request
 * for it goes to another route: `/?session=.` asked for `/api/v1/task-sessions/messages`, and
 * `/api/v1/tasks/%2E%2E/boot-state` is sent as `/api/v1/boot-state`. Such an id (a task may be
 * named `..`) is refused before any request is made.
 */
export class UnaddressableIdError extends Error {
  constructor(id) {
    super(`The id "${id}" cannot be put in an address: a browser reads "." and ".." there as steps in the path.`);
    this.name = 'UnaddressableIdError';
    this.id = id;
  }
}

// What a browser reads as a step within the path rather than as a segment (WHATWG URL), and
// the empty segment, which would join the segments around it.
const NOT_A_SEGMENT = /^(?:|\.|\.\.)$/;

/** `id` as one path segment of a request, or UnaddressableIdError when no segment can be it. */
function seg(id) {
  const text = String(id);
  if (NOT_A_SEGMENT.test(text)) throw new UnaddressableIdError(text);
  return encodeURIComponent(text);
}

export function sessionPath(sessionId) {
  return `/api/v1/task-sessions/${seg(sessionId)}`;
}

/** A page of messages before `before` (the newest page without it), newest first. */
export function olderMessagesPath(sessionId, { limit = OLDER_PAGE_LIMIT, before } = {}) {
  const query = new URLSearchParams({ sort: 'desc', limit: String(limit) });
  if (before) query.set('before', before);
  return `${sessionPath(sessionId)}/messages?${query}`;
}

/** A page of sessions, newest first, before the session `before` (the newest without it). */
export function sessionsPath({ limit = SESSION_PAGE_LIMIT, before } = {}) {
  const query = new URLSearchParams({ sort: 'desc', limit: String(limit) });
  if (before) query.set('before', before);
  return `/api/v1/task-sessions?${query}`;
}

export function shellOutputPath(sessionId, messageId) {
  return `${sessionPath(sessionId)}/messages/${seg(messageId)}/shell-output`;
}

export function bootStatePath(taskId) {
  return `/api/v1/tasks/${seg(taskId)}/boot-state`;
}

/** The feed URL; the server replays every event with a revision above `sinceRevision`. */
export function watchPath(sessionId, sinceRevision) {
  const since = Number.isFinite(sinceRevision) && sinceRevision > 0 ? Math.floor(sinceRevision) : 0;
  return `${sessionPath(sessionId)}/messages:watch?since_revision=${since}`;
}

/** A revision as a number (proto3 JSON may print 64-bit integers as strings), or 0. */
export function revisionOf(value) {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

/** The `turns` of a list page or boot state (ADR 0090), or none. */
export function turnsOf(body) {
  return Array.isArray(body?.turns) ? body.turns.filter((turn) => turn && typeof turn.id === 'string') : [];
}

/** Whether an answer's status refuses the token sent (or its absence): the page may ask for one. */
export function isRefusal(status) {
  return status === 401 || status === 403;
}

/**
 * @param {object} [options]
 * @param {typeof fetch} [options.fetch]
 * @param {() => Record<string, string>} [options.headers] read at each request.
 * @param {(error: ApiError) => void} [options.onRefused] a 401 or 403 answer, to whatever
 *   request, before its error is thrown (auth.js, `createRefusals`).
 */
export function createApi({
  fetch: fetchFn = globalThis.fetch?.bind(globalThis), headers = () => ({}), onRefused = () => {},
} = {}) {
  async function getJson(path, signal) {
    const response = await fetchFn(path, { headers: { Accept: 'application/json', ...headers() }, signal });
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (!response.ok) {
      const error = new ApiError(response.status, body?.code, body?.message || `HTTP ${response.status} for ${path}`, reasonOf(body));
      if (isRefusal(response.status)) onRefused(error);
      throw error;
    }
    if (body === null || typeof body !== 'object') {
      throw new ApiError(response.status, undefined, `Expected JSON from ${path}`);
    }
    return body;
  }

  return {
    /** `{id, task_id, agent, state, created_at, updated_at, revision}` */
    async getSession(sessionId) {
      const body = await getJson(sessionPath(sessionId));
      return body.session;
    },

    /** `{messages, turns, hasMore}`: the page before `before` (or the newest), oldest first. */
    async listOlderMessages(sessionId, { before, limit } = {}) {
      const page = await getJson(olderMessagesPath(sessionId, { before, limit }));
      const messages = Array.isArray(page.messages) ? page.messages.slice().reverse() : [];
      return { messages, turns: turnsOf(page), hasMore: page.has_more === true };
    },

    /** `{sessions, total, hasMore, cursor}`: the sessions before `before`, newest first. */
    async listSessions({ before, limit } = {}) {
      const page = await getJson(sessionsPath({ before, limit }));
      return {
        sessions: Array.isArray(page.sessions) ? page.sessions : [],
        total: Number(page.total ?? 0),
        hasMore: page.has_more === true,
        cursor: typeof page.cursor === 'string' ? page.cursor : '',
      };
    },

    /** `{session, messages, turns}` of the task's latest session. */
    async getBootState(taskId) {
      const body = await getJson(bootStatePath(taskId));
      const initial = body.initial_state ?? {};
      return {
        session: initial.session ?? null,
        messages: Array.isArray(initial.messages) ? initial.messages : [],
        turns: turnsOf(initial),
      };
    },

    /** The shell output `{message_id, status, updated_at, output}` of one shell message. */
    async getShellOutput(sessionId, messageId, signal) {
      return getJson(shellOutputPath(sessionId, messageId), signal);
    },
  };
}
