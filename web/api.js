// The REST routes the page uses (docs/api.md), same origin, JSON with snake_case
// names. `fetch` is injected so the paging and error handling are unit-tested; `headers`
// adds the bearer token of the tab (auth.js) to every request.

// The page size the page asks for: the server's own cap ("list page" in docs/api.md's Limits
// table, `MAX_PAGE_SIZE` in server/shellexec/rules/limits.py). The server owns the cap: it cuts a
// larger value and ends a page early past its byte budget (`has_more`), so this only keeps
// the page from asking for the default of 100 and paging five times as often.
export const MESSAGE_PAGE_LIMIT = 500;

/** A non-2xx answer. `status` is the HTTP status, `code` the gRPC code from the JSON body. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

const seg = encodeURIComponent;

export function sessionPath(sessionId) {
  return `/api/v1/task-sessions/${seg(sessionId)}`;
}

export function messagesPath(sessionId, { limit = MESSAGE_PAGE_LIMIT, after } = {}) {
  const query = new URLSearchParams({ sort: 'asc', limit: String(limit) });
  if (after) query.set('after', after);
  return `${sessionPath(sessionId)}/messages?${query}`;
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

/**
 * @param {{fetch?: typeof fetch, headers?: () => Record<string, string>}} [options]
 */
export function createApi({ fetch: fetchFn = globalThis.fetch?.bind(globalThis), headers = () => ({}) } = {}) {
  async function getJson(path, signal) {
    const response = await fetchFn(path, { headers: { Accept: 'application/json', ...headers() }, signal });
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (!response.ok) {
      throw new ApiError(response.status, body?.code, body?.message || `HTTP ${response.status} for ${path}`);
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

    /** Every message of the session in ascending order, paging with `after=<last id>`. */
    async listAllMessages(sessionId) {
      const all = [];
      let after;
      for (;;) {
        const page = await getJson(messagesPath(sessionId, { after }));
        const messages = Array.isArray(page.messages) ? page.messages : [];
        all.push(...messages);
        const lastId = messages.at(-1)?.id;
        if (!page.has_more || !lastId || lastId === after) break;
        after = lastId;
      }
      return all;
    },

    /** `{session, messages}` of the task's latest session. */
    async getBootState(taskId) {
      const body = await getJson(bootStatePath(taskId));
      const initial = body.initial_state ?? {};
      return { session: initial.session ?? null, messages: Array.isArray(initial.messages) ? initial.messages : [] };
    },

    /** The shell output `{message_id, status, updated_at, output}` of one shell message. */
    getShellOutput(sessionId, messageId, signal) {
      return getJson(shellOutputPath(sessionId, messageId), signal);
    },
  };
}
