// Scrolling through a long session: rows are mounted as the reader nears the top or the bottom
// of what is mounted, older pages are fetched when the reader reaches the oldest message held,
// and the far end is unmounted, so the DOM stays bounded (message-list.js). Every change above
// the reader keeps their place: the first visible row stays where it was on screen. The list
// holds one run of consecutive messages: a live update to a message older than the run waits
// aside until its page is loaded (loaded-range.js).

import { h } from './dom.js';
import { createLoadedRange } from './loaded-range.js';
import { keepingPlace } from './reader-place.js';

const STEP_ROWS = 60;
const NEAR = '800px'; // how close to an edge the reader gets before more rows are mounted

/**
 * @param {object} deps
 * @param {ReturnType<import('./message-list.js').createMessageList>} deps.rows
 * @param {HTMLElement} deps.listEl the `<ol>` of rows
 * @param {() => Promise<{messages: object[], turns: object[], hasMore: boolean}>} deps.loadOlder
 *   the page before the oldest message held
 * @param {boolean} deps.hasOlder whether the server may hold older messages
 * @param {() => boolean} [deps.readerAtBottom] whether the reader is at the page's bottom (and
 *   will be taken back there, page-bottom.js): then nothing on screen needs keeping in place.
 * @param {(error: unknown) => void} [deps.onError]
 */
export function createScrollWindow({
  rows, listEl, loadOlder, hasOlder, readerAtBottom = () => false, onError = () => {},
}) {
  const top = h('div', { class: 'scroll-sentinel', 'aria-hidden': 'true' });
  const bottom = h('div', { class: 'scroll-sentinel', 'aria-hidden': 'true' });
  listEl.before(top);
  listEl.after(bottom);
  const range = createLoadedRange(hasOlder);
  let busy = false;
  let stopped = false;
  let trimPending = false;
  const near = new Set();

  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting) near.add(entry.target);
      else near.delete(entry.target);
    }
    void pump();
  }, { rootMargin: `${NEAR} 0px ${NEAR} 0px` });
  observer.observe(top);
  observer.observe(bottom);
  showState();

  /** Mount or fetch while an edge stays near (the observer reports only changes). */
  async function pump() {
    if (busy || stopped) return;
    busy = true;
    try {
      for (let progressed = true; progressed && !stopped;) {
        progressed = false;
        if (near.has(top)) progressed = await growUp();
        if (!progressed && near.has(bottom) && rows.hasUnmountedNewer) {
          keepingPlace(listEl, () => {
            rows.mountNewer(STEP_ROWS);
            rows.trimOlder();
          });
          progressed = true;
        }
        if (progressed) await nextFrame(); // let layout and the observer catch up
        refreshNear();
      }
    } catch (error) {
      onError(error);
    } finally {
      busy = false;
      showState();
    }
  }

  async function growUp() {
    if (rows.hasUnmountedOlder) {
      keepingPlace(listEl, () => {
        rows.mountOlder(STEP_ROWS);
        rows.trimNewer();
      });
      return true;
    }
    if (!range.olderOnServer || rows.size === 0) return false;
    listEl.dataset.loadingOlder = 'true';
    const page = await loadOlder();
    delete listEl.dataset.loadingOlder;
    keepingPlace(listEl, () => {
      for (const turn of page.turns) rows.setTurn(turn);
      for (const message of page.messages) rows.upsert(message);
      // Then the updates held aside that this page reaches: the newer version of each stays.
      for (const message of range.loaded(page, rows.oldest)) rows.upsert(message);
      rows.trimNewer();
    });
    return page.messages.length > 0;
  }

  function refreshNear() {
    const margin = Number.parseInt(NEAR, 10);
    for (const el of [top, bottom]) {
      const rect = el.getBoundingClientRect();
      if (rect.bottom >= -margin && rect.top <= window.innerHeight + margin) near.add(el);
      else near.delete(el);
    }
  }

  function showState() {
    listEl.dataset.hasOlder = String(range.olderOnServer || rows.hasUnmountedOlder);
    listEl.dataset.mounted = String(rows.mounted);
  }

  /**
   * Unmounts rows once the window grew too long, at the next frame: live changes come many to
   * a frame (a streamed reply, a replay), and keeping the reader's place reads the layout,
   * which after a change makes the browser lay the page out there and then. So it is done at
   * most once a frame, only when rows go, and not at all for a reader at the bottom.
   *
   * The rows go from the end farther from the reader. A live message is mounted at the bottom,
   * and the top used to go whatever the reader read: one reading the top of a long session
   * saw the row they read go up by a row a message, then away, and the top sentinel, near all
   * along, never told the observer to mount it again. A reader nearer the top keeps the top:
   * the newest rows wait below, mounted again as the reader scrolls down to them.
   */
  function trimSoon() {
    if (trimPending) return;
    trimPending = true;
    requestAnimationFrame(() => {
      trimPending = false;
      if (stopped) return;
      if (rows.overfull) {
        if (readerAtBottom()) rows.trimOlder();
        else if (readerNearerTop()) rows.trimNewer();
        else keepingPlace(listEl, () => rows.trimOlder());
      }
      showState();
    });
  }

  /** Whether less of the list lies above the screen than below it. */
  function readerNearerTop() {
    const box = listEl.getBoundingClientRect();
    return -box.top < box.bottom - window.innerHeight;
  }

  /** Run a change (a live message); the end farther from the reader is unmounted at the
   * next frame if the window grew too long. */
  function append(change) {
    const result = change();
    trimSoon();
    return result;
  }

  return {
    append,
    /**
     * A live message: upserted in the list (as `append` runs a change), or, when it is older
     * than every message held while older ones are still on the server, held aside until the
     * page it belongs to is loaded, the list left as it was ('ignored'). The next older page
     * is asked for before the oldest message held, so that one must end the run of messages
     * loaded, with no gap above it.
     * @returns {'added'|'updated'|'ignored'}
     */
    upsert(message) {
      if (!range.admit(message, rows.oldest)) return 'ignored';
      return append(() => rows.upsert(message));
    },
    stop() {
      stopped = true;
      observer.disconnect();
    },
  };
}

function nextFrame() {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}
