// Keeps what the reader reads where it is on screen, whatever changes above it.
//
// Rows change size with nobody scrolling: an open output above the reader grows with each
// answer of its poller, gets its exit line, is drawn again; a row is updated by the feed; the
// top bar wraps. The page sets `overflow-anchor: none` (scroll-window.js keeps the place
// itself when it mounts or unmounts rows, and the browser must not adjust twice), so each
// such change moved everything below it: a reader two screens below a running command's open
// output was pushed down by every line it printed.
//
// So the first row on screen is noted, with its top, whenever the page scrolls (the reader,
// or the page keeping its place), and whenever the page's size changes (a ResizeObserver,
// which runs once the browser has laid the change out and before it paints it) the page is
// scrolled by however far that row moved. Nothing is measured per change: the observer runs
// at most once a frame, on the layout the browser made anyway. A reader at the bottom is left
// to page-bottom.js, which takes them back there.

/**
 * @param {object} deps
 * @param {HTMLElement} deps.listEl the `<ol>` of rows
 * @param {() => boolean} deps.readerAtBottom whether the reader is at the bottom (kept there by
 *   page-bottom.js): then there is no place to keep.
 * @param {Window} [deps.win]
 * @param {typeof ResizeObserver} [deps.ResizeObserver]
 * @returns {{stop(): void}}
 */
export function holdReaderPlace({
  listEl, readerAtBottom, win = globalThis.window, ResizeObserver: Observer = globalThis.ResizeObserver,
}) {
  let place = null; // {row, top}: the first row on screen and where it belongs
  let ownY = null; // where keep() scrolled to last: its scroll event keeps the place as it was

  function note() {
    // The page lands on whole (device) pixels: noting the place again after our own scroll
    // would add that rounding to it, move after move.
    if (ownY !== null && win.scrollY === ownY) return;
    ownY = null;
    place = null;
    if (readerAtBottom()) return;
    const row = firstVisibleRow(listEl);
    if (row) place = { row, top: row.getBoundingClientRect().top };
  }

  function keep() {
    if (!place || readerAtBottom()) return;
    if (!place.row.isConnected) {
      note(); // unmounted (scroll-window.js kept the place then)
      return;
    }
    const moved = place.row.getBoundingClientRect().top - place.top;
    if (Math.abs(moved) < 0.5) return; // as near as whole pixels allow
    win.scrollBy(0, moved);
    ownY = win.scrollY;
  }

  const observer = typeof Observer === 'function' ? new Observer(() => keep()) : null;
  observer?.observe(win.document.body);
  win.addEventListener('scroll', note, { passive: true });
  return {
    stop() {
      observer?.disconnect();
      win.removeEventListener('scroll', note);
    },
  };
}

/** The first row of `listEl` with a part on screen, or null. The rows are in order down the
 * page, so a binary search finds it with a few reads of the layout. */
export function firstVisibleRow(listEl) {
  const rows = listEl.children;
  let lo = 0;
  let hi = rows.length; // the answer is in [lo, hi]; rows.length means none
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid].getBoundingClientRect().bottom > 0) hi = mid;
    else lo = mid + 1;
  }
  return rows[lo] ?? null;
}

/** Run `change` and scroll so the first row visible before it is where it was on screen. */
export function keepingPlace(listEl, change, win = globalThis.window) {
  const anchor = firstVisibleRow(listEl);
  const before = anchor?.getBoundingClientRect().top;
  const result = change();
  if (anchor?.isConnected) {
    const delta = anchor.getBoundingClientRect().top - before;
    if (delta !== 0) win.scrollBy(0, delta);
  }
  return result;
}
