// The ordered list of rows. `upsert(message)` adds or updates a row in chat order (created_at,
// then id); a replayed or older version of a message is ignored by the store.

import { h } from './dom.js';
import { createMessageStore } from './messages.js';
import { rowKind } from './status.js';

/**
 * @param {HTMLElement} list the `<ol>` to fill.
 * @param {{createRow: (message: object) => {el: HTMLElement, kind: string, update: Function, destroy: Function}}} deps
 */
export function createMessageList(list, { createRow }) {
  const store = createMessageStore();
  const rows = new Map(); // message id -> row
  const emptyNote = h('li', { class: 'row row--empty', 'data-testid': 'empty-chat' }, 'No messages yet.');
  list.append(emptyNote);

  function place(id) {
    const row = rows.get(id);
    const after = store.next(id);
    const before = after ? rows.get(after.id)?.el ?? null : null;
    if (row.el.parentNode !== list || row.el.nextSibling !== before) list.insertBefore(row.el, before);
  }

  return {
    /** @returns {'added'|'updated'|'ignored'} */
    upsert(message) {
      const { change, message: held } = store.upsert(message);
      if (change === 'ignored') return change;
      emptyNote.remove();
      const existing = rows.get(held.id);
      if (existing && existing.kind === rowKind(held)) {
        existing.update(held);
      } else {
        const row = createRow(held);
        if (existing) {
          existing.destroy();
          existing.el.replaceWith(row.el);
        }
        rows.set(held.id, row);
      }
      place(held.id);
      return change;
    },
    get size() {
      return store.size;
    },
    /** Unmount: stops every open disclosure's polling. */
    destroy() {
      for (const row of rows.values()) row.destroy();
    },
  };
}
