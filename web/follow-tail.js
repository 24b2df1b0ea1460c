// Keeps an output region where its reader is: at its end while they follow it (have not
// scrolled up), else on the line they read.
//
// Setting `scrollTop = scrollHeight` once is not enough. The output's chunks are laid out only
// near the viewport (`content-visibility: auto`), each estimated at 20 lines until then, and
// are drawn when they come near it (ansi-dom.js): going to the end lays out and draws the last
// chunks, whose real height differs from the estimate (long lines wrap, the last chunk is
// short), so the end moves after the region went there. A 256 KiB output opened with its last
// line 1,500 px below the region, and a running command's open region stopped following after
// some 10 KiB. So every change of a chunk's size (a ResizeObserver) takes a following region
// to its end again.
//
// The same changes moved a reader who had scrolled up: a chunk above them drawn or laid out
// for the first time (its estimate, or the nothing it was before it was drawn, became its real
// height), or gone (the head of an output past 256 KiB is cut as it grows), moved every line
// below it, so a reader pressing Page Up stood still or went down, and one reading while output
// arrived was carried off. So, as reader-place.js does for the page, the first chunk on screen
// is noted with its top at each scroll, and at each change of a chunk's size (or of the
// content) the region scrolls by however far that chunk moved; the place noted is kept across
// the region's own scrolls, so rounding never adds up.
//
// Whether the reader follows is decided by the reader's own scrolls only: a scroll counts as
// theirs while they use the region (a wheel, a touch, a key, a press on it or its scroll bar),
// never one that layout, a script or the page caused. A region moved in the page (its row
// mounted again) is put back at the top by the browser, and that scroll, read as the
// reader's, once stopped the following in about four runs of ten on a loaded machine; the
// chunks' sizes, seen again once it is back, take it to its end.

// How close to the end a scroll must stop for the reader to follow (px).
const NEAR_END = 8;
// How long after the reader's last input a scroll is still theirs (a wheel's smooth scroll
// lasts a few frames; a key held repeats well within it), in ms.
const READER_SCROLL_MS = 1000;
const READER_INPUTS = ['wheel', 'touchstart', 'touchmove', 'keydown', 'pointerdown'];

/**
 * @param {HTMLElement} el the scrollable region; its children are watched for size changes.
 * @param {object} [options]
 * @param {typeof ResizeObserver} [options.ResizeObserver]
 * @param {() => number} [options.now] the clock, in ms
 * @returns {{contentChanged(): void, readonly following: boolean, dispose(): void}}
 */
export function followTail(el, {
  ResizeObserver: Observer = globalThis.ResizeObserver,
  now = () => performance.now(),
} = {}) {
  let following = true;
  let lastInput = -Infinity;
  let pressed = false; // a press on the region (its scroll bar being dragged) not yet released
  let place = null; // {chunk, top}: the first chunk on screen and its top in the region, unless following
  let ownTop = null; // where keepPlace scrolled to last: its scroll event keeps the place as it was
  const resized = typeof Observer === 'function' ? new Observer(() => keep()) : null;

  function keep() {
    if (following) keepAtEnd();
    else keepPlace();
  }

  function keepAtEnd() {
    const end = el.scrollHeight - el.clientHeight;
    if (Math.abs(el.scrollTop - end) > 1) el.scrollTop = end;
  }

  function notePlace() {
    // The region lands on whole (device) pixels: noting the place again after our own scroll
    // would add that rounding to it, move after move.
    if (ownTop !== null && el.scrollTop === ownTop) return;
    ownTop = null;
    place = null;
    if (following) return;
    const chunk = firstVisibleChunk(el);
    if (chunk) place = { chunk, top: topIn(el, chunk) };
  }

  function keepPlace() {
    if (!place || place.chunk.parentNode !== el) {
      notePlace(); // none yet, or gone: where the reader is now is their place
      return;
    }
    const moved = topIn(el, place.chunk) - place.top;
    if (Math.abs(moved) < 0.5) return; // as near as whole pixels allow
    el.scrollTop += moved;
    ownTop = el.scrollTop;
  }

  function onInput(event) {
    lastInput = now();
    if (event.type === 'pointerdown') pressed = true;
    // Going up, asked for with the wheel or a key, stops the following at once: taken to the
    // end by a size change before its (smooth) scroll had begun, the region dropped the
    // reader's Page Up.
    if (following && el.scrollTop > 0 && goesUp(event)) {
      following = false;
      notePlace();
    }
  }

  function onRelease() {
    pressed = false;
    lastInput = now();
  }

  function onScroll() {
    // Only the reader's scroll decides whether the region follows. (Snapping back after
    // another would fight a script that scrolls the region; the next size change takes a
    // following region to its end.) Any scroll but our own is where the reader now is.
    if (pressed || now() - lastInput <= READER_SCROLL_MS) {
      following = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_END;
    }
    notePlace();
  }

  for (const type of READER_INPUTS) el.addEventListener(type, onInput, { passive: true });
  el.ownerDocument?.addEventListener?.('pointerup', onRelease, { passive: true });
  el.addEventListener('scroll', onScroll, { passive: true });
  return {
    /** The region's content changed: watch its parts, and go to the end if following, else
     * back to the reader's place. */
    contentChanged() {
      if (resized) {
        resized.disconnect();
        for (const child of el.children) resized.observe(child);
      }
      keep();
    },
    get following() {
      return following;
    },
    dispose() {
      resized?.disconnect();
      for (const type of READER_INPUTS) el.removeEventListener(type, onInput);
      el.ownerDocument?.removeEventListener?.('pointerup', onRelease);
      el.removeEventListener('scroll', onScroll);
    },
  };
}

// The keys that scroll a focused region up.
const UP_KEYS = new Set(['PageUp', 'ArrowUp', 'Home']);

/** Whether the reader's `event` asks to scroll the region up. */
function goesUp(event) {
  if (event.type === 'wheel') return event.deltaY < 0;
  if (event.type === 'keydown') return UP_KEYS.has(event.key) || (event.key === ' ' && event.shiftKey);
  return false;
}

/** The top of `chunk` below the top of the region's viewport (its border's inner edge), in px. */
function topIn(el, chunk) {
  return chunk.getBoundingClientRect().top - el.getBoundingClientRect().top - el.clientTop;
}

/** The first child of the region reaching below the top of its viewport, or null. The chunks
 * are in order down the region, so a binary search finds it with a few reads of the layout. */
export function firstVisibleChunk(el) {
  const chunks = el.children;
  const viewTop = el.getBoundingClientRect().top + el.clientTop;
  let lo = 0;
  let hi = chunks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (chunks[mid].getBoundingClientRect().bottom > viewTop) hi = mid;
    else lo = mid + 1;
  }
  return chunks[lo] ?? null;
}
