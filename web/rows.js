// Rows for chat text and non-shell tool calls, and the factory that picks a row for a message.
// Every row is `{el, kind, update(message), destroy()}`.

import { CHAT_MARKED, setVisibleText } from './bidi.js';
import { h, setData } from './dom.js';
import { renderMarkdown } from './markdown-dom.js';
import { createPacedDraw } from './paced-draw.js';
import { createShellRow } from './shell-row.js';
import { capitalize, rowKind, statusOf, toolCallResult } from './status.js';
import { timeLabel } from './time-label.js';

/**
 * @param {object} message
 * @param {object} deps
 * @param {(messageId: string, signal: AbortSignal) => Promise<object>} deps.loadShellOutput
 * @param {(draw: () => void) => void} [deps.redrawing] runs a chat row's later draw of its text
 *   (a paced one, after the feed's event): the page keeps its bottom in view around it.
 * @param {object} [deps.pacing] the clock of the paced draws (paced-draw.js), for tests.
 * @param {(text: string) => void} [deps.sayCopied] says how a shell row's copy went (shell-row.js).
 */
export function createRow(message, deps) {
  const kind = rowKind(message);
  const row = kind === 'shell' ? createShellRow(message, deps) : kind === 'tool' ? createToolRow(message) : createChatRow(message, deps);
  return { ...row, kind };
}

function createChatRow(message, { redrawing = (draw) => draw(), pacing } = {}) {
  const who = h('span', { class: 'bubble__who' });
  const time = h('time', { class: 'bubble__time' });
  const text = h('div', { class: 'bubble__text', 'data-testid': 'chat-text' });
  const bubble = h('div', { class: 'bubble' }, h('div', { class: 'bubble__meta' }, who, time), text);
  const el = h('li', { class: 'row row--chat', 'data-testid': 'chat-message', 'data-message-id': message.id }, bubble);

  let shown = { content: null, author: null }; // what the text holds, so it is drawn on change only
  let wanted = shown;
  // A streamed reply grows by a chunk per event: its text is drawn again at most once a frame.
  const paced = createPacedDraw(() => redrawing(drawText), pacing);

  function drawText() {
    if (wanted.content === shown.content && wanted.author === shown.author) return;
    shown = wanted;
    const { content, author } = shown;
    // Agents answer in Markdown; what the user typed is shown as typed (but for its controls,
    // drawn as markers, a character's combining marks past MAX_MARKS, counted in a marker, and
    // the rest of a long word without spaces in a `.long-word` span: bidi.js).
    text.className = author === 'user' ? 'bubble__text' : 'bubble__text markdown';
    setData(text, 'format', author === 'user' ? 'plain' : 'markdown');
    if (author === 'user') setVisibleText(text, content, CHAT_MARKED);
    else renderMarkdown(text, content);
  }

  function take(next) {
    const author = next.author_type === 'user' ? 'user' : 'agent';
    el.className = `row row--chat row--${author}`;
    setData(el, 'author', author);
    who.textContent = author === 'user' ? 'You' : 'Agent';
    setTime(time, next.created_at);
    wanted = { content: typeof next.content === 'string' ? next.content : '', author };
  }
  take(message);
  drawText(); // a new row shows its text at once
  return {
    el,
    update(next) {
      take(next);
      paced.request();
    },
    destroy: paced.cancel,
  };
}

function createToolRow(message) {
  // Its own direction, as the first strong character says (`dir="auto"` skips the markers).
  const title = h('span', { class: 'tool__title', 'data-testid': 'tool-call-title', dir: 'auto' });
  const badge = h('span', { class: 'badge', 'data-testid': 'tool-call-status' });
  const el = h(
    'li',
    { class: 'row row--tool', 'data-testid': 'tool-call-row', 'data-message-id': message.id },
    h('div', { class: 'tool' }, h('span', { class: 'tool__kind' }, 'Tool'), title, badge),
  );

  function update(next) {
    const status = statusOf(next);
    const result = toolCallResult(status);
    setData(el, 'status', status || 'unknown');
    setData(el, 'result', result);
    const label = next.metadata?.title || next.content || 'Tool call';
    setVisibleText(title, label);
    badge.className = `badge badge--${result}`;
    badge.textContent = status ? capitalize(status) : 'Unknown';
    setData(badge, 'result', result);
  }
  update(message);
  return { el, update, destroy() {} };
}

function setTime(el, value) {
  const label = timeLabel(value, new Date());
  if (!label) {
    el.textContent = '';
    el.removeAttribute('datetime');
    return;
  }
  el.dateTime = value;
  el.textContent = label.text;
  el.title = label.title;
}
