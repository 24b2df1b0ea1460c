// Keeps an output region at its end while the reader follows it (has not scrolled up).
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
  const resized = typeof Observer === 'function' ? new Observer(() => keepAtEnd()) : null;

  function keepAtEnd() {
    if (!following) return;
    const end = el.scrollHeight - el.clientHeight;
    if (Math.abs(el.scrollTop - end) > 1) el.scrollTop = end;
  }

  function onInput(event) {
    lastInput = now();
    if (event.type === 'pointerdown') pressed = true;
  }

  function onRelease() {
    pressed = false;
    lastInput = now();
  }

  function onScroll() {
    // Not the reader's: it decides nothing. (Snapping back here would fight a script that
    // scrolls the region; the next size change takes a following region to its end.)
    if (!pressed && now() - lastInput > READER_SCROLL_MS) return;
    following = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_END;
  }

  for (const type of READER_INPUTS) el.addEventListener(type, onInput, { passive: true });
  el.ownerDocument?.addEventListener?.('pointerup', onRelease, { passive: true });
  el.addEventListener('scroll', onScroll, { passive: true });
  return {
    /** The region's content was replaced: watch its new parts, and go to the end if following. */
    contentChanged() {
      if (resized) {
        resized.disconnect();
        for (const child of el.children) resized.observe(child);
      }
      keepAtEnd();
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
