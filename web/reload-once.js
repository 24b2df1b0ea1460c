// Loads the page again when the feed says the state it holds is stale (a `reset` event, or a
// feed refused as `REVISION_AHEAD`): the page then reads the session and its revision afresh
// and follows from there. At most once in `withinMs` per address and tab: a feed that says so
// again right after the reload (a service that answers the session from one database and the
// feed from another) would otherwise reload the page in a loop; the caller then says the feed
// stopped instead.

const KEY = 'shellexec.reloaded';
export const RELOAD_AGAIN_AFTER_MS = 30_000;

/**
 * @param {object} [options]
 * @param {Storage} [options.storage] where the last reload is remembered (the tab's session storage)
 * @param {string} [options.href] the page's address
 * @param {() => number} [options.now] the clock, in ms
 * @param {() => void} [options.reload]
 * @param {number} [options.withinMs]
 * @returns {boolean} whether the page is being loaded again
 */
export function reloadOnce({
  storage = globalThis.sessionStorage,
  href = globalThis.location?.href,
  now = () => Date.now(),
  reload = () => globalThis.location.reload(),
  withinMs = RELOAD_AGAIN_AFTER_MS,
} = {}) {
  let last = null;
  try {
    last = JSON.parse(storage.getItem(KEY) ?? 'null');
  } catch {
    last = null;
  }
  const at = now();
  if (last && last.href === href && at - last.at >= 0 && at - last.at < withinMs) return false;
  storage.setItem(KEY, JSON.stringify({ href, at }));
  reload();
  return true;
}
