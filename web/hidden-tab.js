// A tab that stays hidden lets go of its feed, and follows again from its revision once shown.
//
// Each open page holds its feed's connection for as long as it is open, and over plain HTTP/1.1
// (the front door without TLS) a browser opens at most six connections to one host: with six
// session tabs open, a seventh tab, or an output opened in any of them, waited for one of the
// six feeds to end. A tab hidden for HIDDEN_GRACE_MS suspends its feed (the top bar says
// `Paused`); shown again, it resumes at once with `since_revision`, so the server replays what
// it missed (or answers `reset`, and the page loads again). The grace keeps a quick look at
// another tab from costing a reconnect.

/** How long a tab stays hidden before it lets go of its feed. */
export const HIDDEN_GRACE_MS = 5_000;

/**
 * @param {object} deps
 * @param {{suspend(): void, resume(): void}} deps.feed
 * @param {Document} [deps.doc]
 * @param {typeof setTimeout} [deps.setTimeout]
 * @param {typeof clearTimeout} [deps.clearTimeout]
 * @param {number} [deps.graceMs]
 * @returns {{stop(): void}}
 */
export function suspendWhileHidden({
  feed,
  doc = globalThis.document,
  setTimeout: schedule = globalThis.setTimeout.bind(globalThis),
  clearTimeout: unschedule = globalThis.clearTimeout.bind(globalThis),
  graceMs = HIDDEN_GRACE_MS,
}) {
  let timer = null;

  function onChange() {
    if (doc.visibilityState === 'hidden') {
      timer ??= schedule(() => {
        timer = null;
        feed.suspend();
      }, graceMs);
      return;
    }
    if (timer !== null) unschedule(timer);
    timer = null;
    feed.resume(); // nothing to do unless it was suspended
  }

  doc.addEventListener('visibilitychange', onChange);
  onChange(); // a tab opened in the background is hidden from the start
  return {
    stop() {
      if (timer !== null) unschedule(timer);
      timer = null;
      doc.removeEventListener('visibilitychange', onChange);
    },
  };
}
