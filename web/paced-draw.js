// Drawing a streamed reply again for each chunk costs time in proportion to the whole reply, so
// a long reply streamed in small chunks cost the page the square of its length: 128 KiB in
// chunks of 128 bytes kept the page's only thread busy for half a minute. A paced draw keeps
// only the newest request and draws it at the next animation frame; after a slow draw it waits
// long enough that drawing takes at most DRAW_SHARE of the page's time. The text shown then
// lags the feed by a few frames at most, and the last request is always drawn.

/** The most of the page's time that drawing one row may take while its text streams. */
export const DRAW_SHARE = 0.2;

/**
 * @param {() => void} draw draws the row's newest state (it must not throw).
 * @param {object} [deps]
 * @param {() => number} [deps.now] milliseconds, monotonic.
 * @param {(ms: number, fn: () => void) => () => void} [deps.later] runs `fn` at the first
 *   animation frame at least `ms` from now; returns a function that cancels it.
 */
export function createPacedDraw(draw, { now = () => performance.now(), later = atFrameAfter } = {}) {
  let cancelPending = null;
  let readyAt = -Infinity; // no draw before this time

  function run() {
    cancelPending = null;
    const start = now();
    draw();
    const end = now();
    readyAt = end + (end - start) * (1 / DRAW_SHARE - 1);
  }

  return {
    /** Draws soon; requests before the draw share it. */
    request() {
      if (cancelPending === null) cancelPending = later(Math.max(0, readyAt - now()), run);
    },
    /** Forgets a pending draw (the row is gone). */
    cancel() {
      cancelPending?.();
      cancelPending = null;
    },
  };
}

function atFrameAfter(ms, fn) {
  let frame = 0;
  const timer = setTimeout(() => {
    frame = requestAnimationFrame(fn);
  }, ms);
  return () => {
    clearTimeout(timer);
    cancelAnimationFrame(frame);
  };
}
