// Terminal output (ansi.js) as DOM: a text node per plain run, a <span> per styled one. Text goes
// in as text nodes only; a computed colour is set through the CSSOM (`style.color`), which the
// page's Content-Security-Policy allows, never as a `style` attribute. Bidi controls in the text
// are drawn as markers (bidi.js), and a character draws at most MAX_MARKS combining marks, its
// run counted across the runs of a chunk (combining-marks.js: a colour change in the middle of
// a run does not split it for the browser). So is a word, whose rest past MAX_WORD characters
// in a script broken with a dictionary goes in a `.long-word` span (long-words.js). Should the
// parser fail on some output, the chunk shows that output as plain text (`terminalRuns`):
// hostile output never leaves the region empty.
//
// The lines are grouped in chunks of CHUNK_LINES (`.output__chunk`). Only the newest chunks are
// drawn at once (the region follows the tail); the others are drawn when they come near the
// region's viewport. A chunk starts at a line start, so carriage returns never cross it, and
// the styles in force there are read back from the last reset before it or from a chunk start
// already known, whichever is nearer (`createChunkStyles`): a 256 KiB body full of colour costs
// about what the lines on screen cost, not the whole body, and drawing all its chunks reads
// the body about once, in whatever order they come into view.
//
// A newer text (the next poll of a running command) changes only the chunks whose text changed
// (output-chunks.js): the others keep their elements, drawn or not, so the region neither
// shrinks nor jumps and a selection in them stays. A changed chunk is drawn again keeping the
// nodes that stay equal (dom-patch.js): output that grows at the end of a line appends to its
// text node. Whatever this changes above a reader who scrolled up (the head cut once past 256
// KiB), follow-tail.js keeps the line they read where it is.

import { createChunkStyles, plainText, terminalRuns } from './ansi.js';
import { visibleTextNodes } from './bidi.js';
import { markState } from './combining-marks.js';
import { patchChildren } from './dom-patch.js';
import { wordState } from './long-words.js';
import { CHUNK_LINES, chunkStarts, planChunks } from './output-chunks.js';

export { CHUNK_LINES, chunkStarts };

/**
 * Replace the content of `el` with `text` as a terminal shows it.
 * @returns {{shown(): string, update(text: string): void, dispose(): void}} `shown` is the plain
 *   text the whole output shows (escapes dropped, carriage returns applied), computed on demand;
 *   `update` shows a newer text, keeping what is drawn of the chunks it leaves unchanged;
 *   `dispose` stops drawing chunks.
 */
export function renderTerminalText(el, text) {
  const doc = el.ownerDocument;
  let current = text;
  let chunks = chunkStarts(text).map((start) => newChunk(start));
  place(chunks, text);
  let styles = createChunkStyles(text, chunks.map((chunk) => chunk.start));
  const pending = new Map(); // chunk element -> chunk, for chunks not drawn yet
  const observer = typeof IntersectionObserver === 'function'
    ? new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const chunk = pending.get(entry.target);
        if (entry.isIntersecting && chunk) draw(chunk);
      }
    }, { root: el, rootMargin: '600px 0px' })
    : null;

  function newChunk(start) {
    return { start, end: start, index: 0, el: doc.createElement('span'), drawn: false, tail: false };
  }

  function draw(chunk) {
    pending.delete(chunk.el);
    observer?.unobserve(chunk.el);
    const sgr = styles.at(chunk.index);
    const runs = terminalRuns(current.slice(chunk.start, chunk.end), { sgr, onError });
    // One of each per chunk: a chunk starts at a line start, where no run of marks or word goes on.
    const marks = markState();
    const words = wordState();
    const nodes = runs.flatMap((run) => styledNodes(doc, run, marks, words));
    if (chunk.drawn) patchChildren(chunk.el, nodes);
    else chunk.el.replaceChildren(...nodes);
    chunk.drawn = true;
    chunk.el.dataset.drawn = 'true';
  }

  function wait(chunk) {
    if (pending.has(chunk.el) || !observer) return;
    pending.set(chunk.el, chunk);
    observer.observe(chunk.el);
  }

  // Drawn at once: the last chunk, and the one before when the last is short (the region opens
  // at its tail, about 17 lines tall). These are laid out wherever the region is
  // (`output__chunk--tail`): a region drawn again gets new chunks, which the browser does not
  // lay out off screen and counts 20 lines each, so a two-line output above the reader stood
  // 24rem tall until it came into view, and every region drawn again moved the page below it.
  // A chunk that is no longer at the tail keeps the height it was laid out with
  // (`contain-intrinsic-size: auto`).
  function markTail() {
    const lastLines = countLines(current, chunks.at(-1).start);
    const eager = lastLines < CHUNK_LINES / 2 ? 2 : 1;
    chunks.forEach((chunk, index) => {
      const tail = index >= chunks.length - eager;
      const className = tail ? 'output__chunk output__chunk--tail' : 'output__chunk';
      if (chunk.el.className !== className) chunk.el.className = className;
      chunk.tail = tail;
    });
  }

  markTail();
  for (const chunk of chunks) {
    if (chunk.tail || !observer) draw(chunk);
    else wait(chunk);
  }
  el.replaceChildren(...chunks.map((chunk) => chunk.el));

  function update(text) {
    if (text === current) return;
    const previous = chunks;
    const previousStyles = styles;
    const plan = planChunks(current, previous.map((chunk) => chunk.start), text);
    current = text;
    const restyled = new Map(); // kept chunk -> its index before, when the styles at its start may differ now
    chunks = plan.map(({ start, from, same, settled }) => {
      const chunk = from >= 0 ? previous[from] : newChunk(start);
      chunk.start = start;
      chunk.changed = !same;
      if (same && !settled && chunk.drawn) restyled.set(chunk, from);
      return chunk;
    });
    place(chunks, text);
    styles = createChunkStyles(text, chunks.map((chunk) => chunk.start));
    const kept = new Set(chunks);
    for (const chunk of previous) {
      if (kept.has(chunk)) continue;
      pending.delete(chunk.el);
      observer?.unobserve(chunk.el);
      chunk.el.remove();
    }
    markTail();
    // Drawn now: the tail, what was drawn and changed, a kept chunk whose styles changed, and a
    // changed stretch with kept chunks after it (a reader may be there: its height must be
    // known now). The rest is drawn when it comes near, as at first.
    const lastKept = chunks.findLastIndex((chunk) => !chunk.changed);
    chunks.forEach((chunk, index) => {
      const stale = chunk.changed
        || (restyled.has(chunk) && !sameStyle(previousStyles.at(restyled.get(chunk)), styles.at(index)));
      if (!stale && (chunk.drawn || !chunk.tail)) return;
      if (chunk.tail || chunk.drawn || index < lastKept || !observer) draw(chunk);
      else wait(chunk);
    });
    // The elements in order: kept ones stay where they are (moving a node would lose a
    // selection in it), new ones go in between.
    let next = el.firstChild;
    for (const chunk of chunks) {
      if (chunk.el === next) next = next.nextSibling;
      else el.insertBefore(chunk.el, next);
    }
  }

  return {
    shown: () => plainText(terminalRuns(current, { onError })),
    update,
    dispose: () => observer?.disconnect(),
  };
}

/** Numbers the chunks; each ends where the next starts, the last with the text. */
function place(chunks, text) {
  chunks.forEach((chunk, index) => {
    chunk.index = index;
    chunk.end = chunks[index + 1]?.start ?? text.length;
  });
}

/** Whether two SGR states (createSgrState) hold the same attributes. */
function sameStyle(a, b) {
  return JSON.stringify(a.attrs) === JSON.stringify(b.attrs);
}

function onError(error) {
  console.error('terminal output shown as plain text: the renderer failed', error);
}

function countLines(text, from) {
  let lines = 1;
  for (let i = text.indexOf('\n', from); i >= 0 && i + 1 < text.length; i = text.indexOf('\n', i + 1)) lines += 1;
  return lines;
}

function styledNodes(doc, { text, style }, marks, words) {
  if (style === null) return visibleTextNodes(doc, text, undefined, marks, words);
  const span = doc.createElement('span');
  if (style.classes) span.className = style.classes;
  if (style.colour) span.style.color = style.colour;
  if (style.background) span.style.backgroundColor = style.background;
  span.append(...visibleTextNodes(doc, text, undefined, marks, words));
  return [span];
}
