// The ordered list of rows, as a window over the messages held. `upsert(message)` adds or
// updates a message in chat order (created_at, then id); a replayed or older version of a
// message is ignored by the store.
//
// Only a window of consecutive messages has rows in the DOM (at most `maxMounted`), so a
// session of any length keeps a bounded DOM: the caller mounts older or newer rows as the
// reader scrolls (`mountOlder`, `mountNewer`) and the far end is unmounted (`trim...`). A row
// that leaves the window is destroyed (an open disclosure stops polling) and is created again
// from the held message when it comes back. While the window reaches the newest message, new
// messages are mounted as they arrive; otherwise they wait below until the reader scrolls
// down.
//
// Each turn gets a quiet end marker after its last message's row (`setTurn`): its stop reason
// and duration, or that it is still running.

import { h } from './dom.js';
import { createMessageStore } from './messages.js';
import { rowKind } from './status.js';

export const MAX_MOUNTED_ROWS = 240;

/**
 * @param {HTMLElement} list the `<ol>` to fill.
 * @param {object} deps
 * @param {(message: object) => {el: HTMLElement, kind: string, update: Function, destroy: Function}} deps.createRow
 * @param {(turn: object) => {el: HTMLElement, update(turn: object): void}} [deps.createTurnMarker]
 * @param {number} [deps.maxMounted]
 */
export function createMessageList(list, { createRow, createTurnMarker = null, maxMounted = MAX_MOUNTED_ROWS }) {
  const store = createMessageStore();
  const rows = new Map(); // message id -> row, for mounted messages only
  const turns = new Map(); // turn id -> {turn, marker}
  const lastOfTurn = new Map(); // turn id -> the turn's last message held
  const markerTurns = new WeakMap(); // a turn's end marker element -> its turn id
  let lo = 0; // the window: store indexes [lo, hi) have rows
  let hi = 0;
  const emptyNote = h('li', { class: 'row row--empty', 'data-testid': 'empty-chat' }, 'No messages yet.');
  list.append(emptyNote);

  function mount(index) {
    const message = store.at(index);
    const row = createRow(message);
    rows.set(message.id, row);
    const next = index + 1 < hi ? rows.get(store.at(index + 1).id)?.el ?? null : null;
    list.insertBefore(row.el, next ?? tailOf());
  }

  /** Where a row goes when nothing mounted follows it: before any end marker of a turn that
   * has no message yet (a running turn shown at the bottom), else at the end. */
  function tailOf() {
    for (const { marker } of turns.values()) {
      if (marker.el.parentNode === list && !lastOfTurn.has(marker.turnId)) return marker.el;
    }
    return null;
  }

  /** The element after a row in the list, past the end markers of turns that have a message
   * (placed after their last message's row, `placeMarker`): the next row, or a marker of a turn
   * without a message yet (at the bottom), or null. */
  function nextAfterRow(el) {
    let node = el.nextSibling;
    while (node && lastOfTurn.has(markerTurns.get(node))) node = node.nextSibling;
    return node;
  }

  function unmount(index) {
    const message = store.at(index);
    const row = rows.get(message.id);
    if (!row) return;
    row.destroy();
    row.el.remove();
    rows.delete(message.id);
  }

  function placeMarker(turnId) {
    const entry = turns.get(turnId);
    if (!entry) return;
    const last = lastOfTurn.get(turnId);
    const el = entry.marker.el;
    if (last) {
      const row = rows.get(last.id);
      if (row) {
        if (el.previousSibling !== row.el) row.el.after(el);
      } else {
        el.remove();
      }
      return;
    }
    // No message yet: a running turn shows at the bottom while the window reaches it.
    if (entry.turn.state !== 'complete' && hi === store.size) list.append(el);
    else el.remove();
  }

  function placeMarkersAround(index) {
    for (const i of [index - 1, index, index + 1]) {
      const turnId = store.at(i)?.turn_id;
      if (turnId) placeMarker(turnId);
    }
  }

  function noteLast(message) {
    if (!message.turn_id) return;
    const last = lastOfTurn.get(message.turn_id);
    if (!last || store.indexOf(last.id) < store.indexOf(message.id)) lastOfTurn.set(message.turn_id, message);
  }

  /** Whether a message now at `index` belongs in the window (the window is [lo, hi) without
   * it): inside it, or at an edge the window is growing at (the oldest message held, or the
   * newest while the window follows the live end), or where its row already was. */
  function insideWindow(index, wasMounted, following) {
    if (index < lo || index > hi) return false;
    if (lo < index && index < hi) return true;
    if (wasMounted) return true;
    if (index === hi && following) return true;
    return index === lo && lo === 0;
  }

  function showEmptyNote() {
    if (store.size === 0) {
      if (emptyNote.parentNode !== list) list.prepend(emptyNote);
    } else {
      emptyNote.remove();
    }
  }

  return {
    /** @returns {'added'|'updated'|'ignored'} */
    upsert(message) {
      const following = hi === store.size; // the window reaches the newest message
      const { change, index, previousIndex, message: held } = store.upsert(message);
      if (change === 'ignored') return change;
      const existing = rows.get(held.id);
      const wasMounted = previousIndex >= lo && previousIndex < hi;
      if (previousIndex >= 0) {
        // Take it out of the window as if it were removed, then place it again.
        if (previousIndex < lo) {
          lo -= 1;
          hi -= 1;
        } else if (previousIndex < hi) {
          hi -= 1;
        }
      }
      noteLast(held);
      if (!insideWindow(index, wasMounted, following)) {
        if (index <= lo && lo < hi) {
          lo += 1;
          hi += 1;
        }
        if (existing) {
          existing.destroy();
          existing.el.remove();
          rows.delete(held.id);
        }
      } else {
        hi += 1;
        if (existing && existing.kind === rowKind(held)) {
          existing.update(held);
          // Moved only when out of place: a row moved in the list loses what the reader did
          // in it (an output region scrolled up went back to its first line, a selection was
          // lost), and the last row's next sibling is its turn's end marker, not a row.
          const next = index + 1 < hi ? rows.get(store.at(index + 1).id)?.el ?? null : null;
          if (existing.el.parentNode !== list || nextAfterRow(existing.el) !== (next ?? tailOf())) {
            list.insertBefore(existing.el, next ?? tailOf());
          }
        } else {
          if (existing) {
            existing.destroy();
            existing.el.remove();
            rows.delete(held.id);
          }
          mount(index);
        }
      }
      showEmptyNote();
      placeMarkersAround(index);
      return change;
    },

    /** Add or update a turn's end marker. */
    setTurn(turn) {
      if (!createTurnMarker || !turn?.id) return;
      let entry = turns.get(turn.id);
      if (!entry) {
        entry = { turn, marker: { ...createTurnMarker(turn), turnId: turn.id } };
        turns.set(turn.id, entry);
        markerTurns.set(entry.marker.el, turn.id);
      }
      entry.turn = turn;
      entry.marker.update(turn);
      placeMarker(turn.id);
    },

    /** Mount up to `count` rows above the window; returns how many were mounted. */
    mountOlder(count) {
      const before = lo;
      const from = Math.max(0, lo - count);
      for (let i = lo - 1; i >= from; i -= 1) {
        lo = i;
        mount(i);
        placeMarkersAround(i);
      }
      return before - lo;
    },

    /** Mount up to `count` rows below the window; returns how many were mounted. */
    mountNewer(count) {
      const to = Math.min(store.size, hi + count);
      const mounted = to - hi;
      for (let i = hi; i < to; i += 1) {
        hi = i + 1;
        mount(i);
        placeMarkersAround(i);
      }
      for (const turnId of turns.keys()) placeMarker(turnId);
      return mounted;
    },

    /** Unmount rows from the top until at most `maxMounted` remain. */
    trimOlder() {
      while (hi - lo > maxMounted) {
        unmount(lo);
        lo += 1;
        placeMarkersAround(lo - 1);
      }
    },

    /** Unmount rows from the bottom until at most `maxMounted` remain. */
    trimNewer() {
      while (hi - lo > maxMounted) {
        hi -= 1;
        unmount(hi);
        placeMarkersAround(hi);
      }
      for (const turnId of turns.keys()) placeMarker(turnId);
    },

    /** Whether rows above or below the window are held but not mounted. */
    get hasUnmountedOlder() {
      return lo > 0;
    },
    get hasUnmountedNewer() {
      return hi < store.size;
    },
    /** The oldest message held (the cursor for loading an older page). */
    get oldest() {
      return store.at(0);
    },
    get size() {
      return store.size;
    },
    get mounted() {
      return hi - lo;
    },
    /** Whether more rows are mounted than the window holds (`trimOlder` or `trimNewer` is due). */
    get overfull() {
      return hi - lo > maxMounted;
    },

    /** Unmount: stops every open disclosure's polling. */
    destroy() {
      for (const row of rows.values()) row.destroy();
    },
  };
}
