// Keeps an output region at its end while the reader follows it (has not scrolled up).
//
// Setting `scrollTop = scrollHeight` once is not enough. The output's chunks are laid out only
// near the viewport (`content-visibility: auto`), each estimated at 20 lines until then, and
// are drawn when they come near it (ansi-dom.js): going to the end lays out and draws the last
// chunks, whose real height differs from the estimate (long lines wrap, the last chunk is
// short), so the end moves after the region went there. A 256 KiB output opened with its last
// line 1,500 px below the region, and a running command's open region stopped following after
// some 10 KiB. So every change of a chunk's size (a ResizeObserver) takes a following region
// to its end again, and whether the reader follows is decided by the reader's own scrolls
// only, never by where a size change left the region.

// How close to the end a scroll must stop for the reader to follow (px).
const NEAR_END = 8;

/**
 * @param {HTMLElement} el the scrollable region; its children are watched for size changes.
 * @param {object} [options]
 * @param {typeof ResizeObserver} [options.ResizeObserver]
 * @returns {{contentChanged(): void, readonly following: boolean, dispose(): void}}
 */
export function followTail(el, { ResizeObserver: Observer = globalThis.ResizeObserver } = {}) {
  let following = true;
  let ownTop = null; // the scrollTop this module set last: its scroll event is not the reader's
  const resized = typeof Observer === 'function' ? new Observer(() => keepAtEnd()) : null;

  function keepAtEnd() {
    if (!following) return;
    const end = el.scrollHeight - el.clientHeight;
    if (Math.abs(el.scrollTop - end) > 1) el.scrollTop = end;
    ownTop = el.scrollTop;
  }

  function onScroll() {
    if (ownTop !== null && Math.abs(el.scrollTop - ownTop) <= 1) return; // ours
    ownTop = null;
    following = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_END;
  }

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
      el.removeEventListener('scroll', onScroll);
    },
  };
}
