// The bearer token of this browser tab. It lives in sessionStorage: it survives reloads of
// the tab and is gone when the tab closes, and no other tab or site sees it.

const KEY = 'shellexec.token';

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

/** Whether an error answer means "sign in" (no token, or one the service does not accept). */
export function needsSignIn(error) {
  return error?.status === 401;
}
