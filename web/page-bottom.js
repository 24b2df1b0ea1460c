// Keeps the page at its bottom around live changes (feed events, a streamed reply drawn again)
// while the reader is there, and leaves a reader above where they are.
//
// Whether the reader is at the bottom is learnt from their scrolls, never measured around a
// change: measuring reads the layout, and reading it after a change makes the browser lay the
// page out there and then. A reply streamed in 1,000 chunks was measured before and after each
// one (and its first visible row found, scroll-window.js): 22 s of forced layout, frames of up
// to 4.7 s. Now a change reads nothing, and the page goes back to its bottom once per frame, in
// an animation frame, before the browser lays the page out anyway.

// How close to the bottom a reader counts as there (px).
const NEAR_BOTTOM = 80;

/**
 * @param {object} [deps]
 * @param {Window} [deps.win]
 * @param {(fn: () => void) => void} [deps.requestFrame]
 * @returns {{around<T>(change: () => T): T, aroundInFrame<T>(change: () => T): T,
 *   readonly atBottom: boolean, stop(): void}}
 */
export function createBottomKeeper({ win = globalThis.window, requestFrame = (fn) => win.requestAnimationFrame(fn) } = {}) {
  const page = win.document.documentElement;
  let atBottom = true;
  let ownY = null; // where this module scrolled to last: its scroll event is not the reader's
  let pending = false;

  function onScroll() {
    if (ownY !== null && Math.abs(win.scrollY - ownY) <= 1) return; // ours
    ownY = null;
    atBottom = win.innerHeight + win.scrollY >= page.scrollHeight - NEAR_BOTTOM;
  }

  function toBottom() {
    if (!atBottom) return; // the reader scrolled up meanwhile
    win.scrollTo(0, page.scrollHeight);
    ownY = win.scrollY;
  }

  win.addEventListener('scroll', onScroll, { passive: true });
  return {
    /** Runs `change`; a reader at the bottom is taken back there before the next frame. A change
     * that returns 'ignored' changed nothing. */
    around(change) {
      const result = change();
      if (atBottom && result !== 'ignored' && !pending) {
        pending = true;
        requestFrame(() => {
          pending = false;
          toBottom();
        });
      }
      return result;
    },
    /** `around`, for a change made in an animation frame (a paced draw, paced-draw.js): the
     * reader goes back to the bottom at once. The layout this reads is the frame's own, which
     * the browser would make next anyway; waiting for the next frame would show the change a
     * frame before the page follows it. */
    aroundInFrame(change) {
      const result = change();
      if (atBottom && result !== 'ignored') toBottom();
      return result;
    },
    /** Whether the reader is at the bottom, as their last scroll left it. */
    get atBottom() {
      return atBottom;
    },
    stop() {
      win.removeEventListener('scroll', onScroll);
    },
  };
}
