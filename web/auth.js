// The bearer token of this browser tab. It lives in sessionStorage: it survives reloads of
// the tab and is gone when the tab closes, and no other tab or site sees it.
//
// A token is checked before it is kept (`tokenProblem`): a header cannot carry some
// characters (fetch throws a TypeError before sending anything), and the service refuses one
// over 256 characters. A pasted `…`, a line break or a stray quote left the tab stuck on "Failed
// to execute 'fetch'", the token kept and no form to give another. The page asks for a token
// again on a 401 (unknown or revoked) and on a 403 (a valid token without the `read` scope,
// such as a bridge's `ingest` token), saying which (`refusalOf`), whichever request it answered:
// every answer's refusal goes through one place (`createRefusals`).

const KEY = 'shellexec.token';

/** The longest token the service accepts (docs/api.md, Limits). */
export const MAX_TOKEN_LENGTH = 256;

// What a bearer token is made of (RFC 6750 `b64token`): the service's tokens are `shx_` and
// URL-safe base64.
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** @param {Storage} [storage] */
export function createTokenStore(storage = globalThis.sessionStorage) {
  return {
    get() {
      return storage.getItem(KEY) ?? '';
    },
    set(token) {
      storage.setItem(KEY, token.trim());
    },
    clear() {
      storage.removeItem(KEY);
    },
  };
}

/** The request headers carrying `token` (none without one). */
export function authHeaders(token) {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/**
 * Why `token` (trimmed) cannot be a token, as a sentence; null when it can be one.
 * @param {string} token
 */
export function tokenProblem(token) {
  const text = String(token ?? '').trim();
  if (text === '') return 'The token is empty.';
  const length = [...text].length;
  if (length > MAX_TOKEN_LENGTH) {
    return `A token has at most ${MAX_TOKEN_LENGTH} characters; this has ${length}: more than the token was copied.`;
  }
  if (TOKEN.test(text)) return null;
  const odd = [...text].find((char, i, all) => !/[A-Za-z0-9\-._~+/]/.test(char)
    && !(char === '=' && all.slice(i).every((rest) => rest === '=')));
  return `A token has only letters, digits and - . _ ~ + / (and = at its end); this has ${nameOf(odd)}: `
    + 'it was probably changed when it was copied.';
}

/** A character as a reader can tell it: `"…" (U+2026)`, or its code alone when it shows as nothing. */
function nameOf(char) {
  const code = `U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  return /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(char) ? `"${char}" (${code})` : code;
}

/** Whether an error answer means "sign in" (no token, or one the service does not accept). */
export function needsSignIn(error) {
  return error?.status === 401;
}

/**
 * What an answer says about the tab's token: 'unknown' (401: no token, or one the service does
 * not know, or revoked), 'scope' (403 for a tab holding a token: a valid token without the
 * scope the page needs), or null (anything else, the token is not in question).
 * @param {{status?: number}} error
 * @param {boolean} holdsToken whether the tab sent a token
 */
export function refusalOf(error, holdsToken) {
  if (error?.status === 401) return 'unknown';
  if (error?.status === 403 && holdsToken) return 'scope';
  return null;
}

/**
 * The one place where the page learns that the service refused the tab's token, from any
 * answer: the API's (api.js, `onRefused`: the session, a page of older messages, an open
 * output's poll, the index's next page) and the feed's (event-stream.js). Only the first load
 * and the feed used to check: a token revoked while the page was open made a page of older
 * messages replace the chat with "Could not load the session", an open output poll on with
 * "Output unavailable", and the index's next page say it failed, the token kept, until the feed
 * was refused (up to a heartbeat interval later) or for good on the index.
 * @param {object} options
 * @param {() => boolean} options.holdsToken whether the tab sent a token (it holds one now)
 * @param {(refusal: 'unknown'|'scope', detail: string) => void} options.onRefused told once, at
 *   the first refusal: the page stops and shows the sign-in form.
 */
export function createRefusals({ holdsToken, onRefused }) {
  let refused = false;
  return {
    /**
     * Hands over an answer (an `ApiError`, or `{status}`); returns whether the page was refused,
     * by this answer or by one before: then nothing else is to be shown for it.
     * @param {{status?: number, message?: string}} answer
     */
    check(answer) {
      if (refused) return true;
      const refusal = refusalOf(answer, holdsToken());
      if (!refusal) return false;
      refused = true;
      onRefused(refusal, typeof answer?.message === 'string' ? answer.message : '');
      return true;
    },
    get refused() {
      return refused;
    },
  };
}
