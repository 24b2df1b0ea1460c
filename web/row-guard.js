// One message must not break the session view: a row whose creation or update throws is
// replaced by a plain row (the message's text as written), the error is reported, and every
// other row goes on as before. Rows are `{el, kind, update(message), destroy()}` (rows.js).

import { CHAT_MARKED, setVisibleText } from './bidi.js';
import { h } from './dom.js';

/**
 * A row factory that never throws.
 * @param {object} deps
 * @param {(message: object) => object} deps.createRow the real rows.
 * @param {(message: object) => object} deps.createFallbackRow rows that cannot fail (plain text).
 * @param {(message: object) => string} deps.kindOf the row kind a message gets (the list compares it).
 * @param {(error: unknown, message: object) => void} deps.onError
 */
export function guardRows({ createRow, createFallbackRow, kindOf, onError }) {
  return (message) => {
    const kind = kindOf(message);
    let current;
    try {
      current = createRow(message);
    } catch (error) {
      onError(error, message);
      current = createFallbackRow(message);
    }
    return {
      kind,
      get el() {
        return current.el;
      },
      update(next) {
        try {
          current.update(next);
        } catch (error) {
          onError(error, next);
          const fallback = createFallbackRow(next);
          current.el.replaceWith(fallback.el);
          destroyQuietly(current);
          current = fallback;
        }
      },
      destroy() {
        destroyQuietly(current);
      },
    };
  };
}

function destroyQuietly(row) {
  try {
    row.destroy();
  } catch {
    // a broken row has nothing left to stop; its element goes with it
  }
}

/**
 * A row that shows a message's text as written, marked as not drawn: a note says so in words
 * (the dashed warning edge around it only repeats it), and the text keeps its line breaks.
 */
export function createPlainRow(message) {
  const text = h('div', { class: 'bubble__text bubble__text--undrawn', 'data-testid': 'chat-text', 'data-format': 'plain' });
  const who = h('span', { class: 'bubble__who' });
  const note = h('span', { class: 'bubble__undrawn-note', 'data-testid': 'undrawn-note' },
    'shown as plain text (it could not be drawn)');
  const el = h('li', { class: 'row row--chat row--undrawn', 'data-testid': 'chat-message', 'data-undrawn': 'true' },
    h('div', { class: 'bubble bubble--undrawn' }, h('div', { class: 'bubble__meta' }, who, note), text));
  function update(next) {
    const author = next?.author_type === 'user' ? 'user' : 'agent';
    el.className = `row row--chat row--${author} row--undrawn`;
    el.dataset.author = author;
    el.dataset.messageId = String(next?.id ?? '');
    who.textContent = author === 'user' ? 'You' : 'Agent';
    // As written, but for its controls (markers), a character's combining marks past MAX_MARKS
    // and long words without spaces, as a prompt is drawn (bidi.js).
    setVisibleText(text, typeof next?.content === 'string' ? next.content : '', CHAT_MARKED);
  }
  update(message);
  return { el, update, destroy() {} };
}
