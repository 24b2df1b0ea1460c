// Terminal output (ansi.js) as DOM: a text node per plain run, a <span> per styled one. Text goes
// in as text nodes only; a computed colour is set through the CSSOM (`style.color`), which the
// page's Content-Security-Policy allows, never as a `style` attribute. Bidi controls in the text
// are drawn as markers (bidi.js). Should the parser fail on some output, the chunk shows that
// output as plain text (`terminalRuns`): hostile output never leaves the region empty.
//
// The lines are grouped in chunks of CHUNK_LINES (`.output__chunk`). Only the newest chunks are
// drawn at once (the region follows the tail); the others are drawn when they come near the
// region's viewport. A chunk starts at a line start, so carriage returns never cross it, and
// the styles in force there are read back from the last reset before it or from a chunk start
// already known, whichever is nearer (`createChunkStyles`): a 256 KiB body full of colour costs
// about what the lines on screen cost, not the whole body, and drawing all its chunks reads
// the body about once, in whatever order they come into view.

import { createChunkStyles, plainText, terminalRuns } from './ansi.js';
import { visibleTextNodes } from './bidi.js';

/** Lines per chunk: about one screen of the region (24rem, some 17 lines). */
export const CHUNK_LINES = 20;

/**
 * Replace the content of `el` with `text` as a terminal shows it.
 * @returns {{shown(): string, dispose(): void}} the plain text the whole output shows (escapes
 *   dropped, carriage returns applied), computed on demand; `dispose` stops drawing chunks.
 */
export function renderTerminalText(el, text) {
  const doc = el.ownerDocument;
  const starts = chunkStarts(text);
  const chunks = starts.map((start, i) => ({ index: i, start, end: starts[i + 1] ?? text.length, el: doc.createElement('span') }));
  const styles = createChunkStyles(text, starts);
  const pending = new Map(); // chunk element -> chunk, for chunks not drawn yet
  const observer = typeof IntersectionObserver === 'function'
    ? new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const chunk = pending.get(entry.target);
        if (entry.isIntersecting && chunk) draw(chunk);
      }
    }, { root: el, rootMargin: '600px 0px' })
    : null;

  function draw(chunk) {
    pending.delete(chunk.el);
    observer?.unobserve(chunk.el);
    const sgr = styles.at(chunk.index);
    const runs = terminalRuns(text.slice(chunk.start, chunk.end), { sgr, onError });
    chunk.el.replaceChildren(...runs.flatMap((run) => styledNodes(doc, run)));
    chunk.el.dataset.drawn = 'true';
  }

  // Drawn at once: the last chunk, and the one before when the last is short (the region opens
  // at its tail, about 17 lines tall). These are laid out wherever the region is
  // (`output__chunk--tail`): a region drawn again gets new chunks, which the browser does not
  // lay out off screen and counts 20 lines each, so a two-line output above the reader stood
  // 24rem tall until it came into view, and every region drawn again moved the page below it.
  const lastLines = countLines(text, chunks.at(-1).start);
  const eager = lastLines < CHUNK_LINES / 2 ? 2 : 1;
  chunks.forEach((chunk, index) => {
    const tail = index >= chunks.length - eager;
    chunk.el.className = tail ? 'output__chunk output__chunk--tail' : 'output__chunk';
    if (tail || !observer) {
      draw(chunk);
    } else {
      pending.set(chunk.el, chunk);
      observer.observe(chunk.el);
    }
  });
  el.replaceChildren(...chunks.map((chunk) => chunk.el));
  return {
    shown: () => plainText(terminalRuns(text, { onError })),
    dispose: () => observer?.disconnect(),
  };
}

function onError(error) {
  console.error('terminal output shown as plain text: the renderer failed', error);
}

function countLines(text, from) {
  let lines = 1;
  for (let i = text.indexOf('\n', from); i >= 0 && i + 1 < text.length; i = text.indexOf('\n', i + 1)) lines += 1;
  return lines;
}

/** Offsets where chunks start: 0, then after every CHUNK_LINES-th line break. */
export function chunkStarts(text) {
  const starts = [0];
  let lines = 0;
  for (let newline = text.indexOf('\n'); newline >= 0 && newline + 1 < text.length; newline = text.indexOf('\n', newline + 1)) {
    lines += 1;
    if (lines % CHUNK_LINES === 0) starts.push(newline + 1);
  }
  return starts;
}

function styledNodes(doc, { text, style }) {
  if (style === null) return visibleTextNodes(doc, text);
  const span = doc.createElement('span');
  if (style.classes) span.className = style.classes;
  if (style.colour) span.style.color = style.colour;
  if (style.background) span.style.backgroundColor = style.background;
  span.append(...visibleTextNodes(doc, text));
  return [span];
}
