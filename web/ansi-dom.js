// Styled runs (ansi.js) as DOM: a text node per plain run, a <span> per styled one. Text goes in
// as text nodes only; a computed colour is set through the CSSOM (`style.color`), which the
// page's Content-Security-Policy allows, never as a `style` attribute.

import { parseAnsi, plainText } from './ansi.js';

/**
 * Replace the content of `el` with `text` as a terminal shows it.
 * @returns {string} the plain text now shown (escapes dropped, carriage returns applied).
 */
export function renderTerminalText(el, text) {
  const runs = parseAnsi(text);
  const doc = el.ownerDocument;
  const fragment = doc.createDocumentFragment();
  for (const { text: runText, style } of runs) {
    if (style === null) {
      fragment.append(doc.createTextNode(runText));
      continue;
    }
    const span = doc.createElement('span');
    if (style.classes) span.className = style.classes;
    if (style.colour) span.style.color = style.colour;
    if (style.background) span.style.backgroundColor = style.background;
    span.append(doc.createTextNode(runText));
    fragment.append(span);
  }
  el.replaceChildren(fragment);
  return plainText(runs);
}
