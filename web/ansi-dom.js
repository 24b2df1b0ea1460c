// Styled runs (ansi.js) as DOM: a text node per plain run, a <span> per styled one. Text goes in
// as text nodes only; a computed colour is set through the CSSOM (`style.color`), which the
// page's Content-Security-Policy allows, never as a `style` attribute.
//
// The lines are grouped in chunks (`.output__chunk`, `content-visibility: auto`), so the
// browser lays out only the chunks near the viewport of the output region: a 256 KiB body is a
// few thousand lines, and laying out every styled span of them at once is what made it slow.

import { parseAnsi, plainText } from './ansi.js';

/** Lines per chunk: small enough to skip most of the layout, large enough to keep few nodes. */
export const CHUNK_LINES = 100;

/**
 * Replace the content of `el` with `text` as a terminal shows it.
 * @returns {string} the plain text now shown (escapes dropped, carriage returns applied).
 */
export function renderTerminalText(el, text) {
  const runs = parseAnsi(text);
  const doc = el.ownerDocument;
  const fragment = doc.createDocumentFragment();
  let chunk = null;
  let lines = 0;
  const append = (piece, style) => {
    if (!chunk) {
      chunk = doc.createElement('span');
      chunk.className = 'output__chunk';
      fragment.append(chunk);
    }
    chunk.append(styledNode(doc, piece, style));
  };
  for (const { text: runText, style } of runs) {
    let start = 0;
    for (let newline = runText.indexOf('\n'); newline >= 0; newline = runText.indexOf('\n', newline + 1)) {
      lines += 1;
      if (lines % CHUNK_LINES !== 0) continue;
      append(runText.slice(start, newline + 1), style); // the chunk ends with its last line
      chunk = null;
      start = newline + 1;
    }
    if (start < runText.length) append(runText.slice(start), style);
  }
  el.replaceChildren(fragment);
  return plainText(runs);
}

function styledNode(doc, text, style) {
  if (style === null) return doc.createTextNode(text);
  const span = doc.createElement('span');
  if (style.classes) span.className = style.classes;
  if (style.colour) span.style.color = style.colour;
  if (style.background) span.style.backgroundColor = style.background;
  span.append(doc.createTextNode(text));
  return span;
}
