// Bidi controls shown as what they are. An override, embedding, isolate or mark in a command, a
// path, a title or an output line would otherwise reorder the text around it on screen:
// `cat \u202Etxt.exe` reads `cat exe.txt`, another command than the one that ran. The page draws
// them as visible markers (`⟨U+202E⟩`, class `bidi-control`) instead of applying them; the
// text itself is unchanged, so copying takes the real characters.
//
// A run of consecutive controls is one marker that says how many (`⟨U+202E ×20000⟩`): each
// marker is an element the browser lays out on its own, and a title of 20,000 overrides drawn
// as 20,000 elements froze the page for seconds (80,000 for a minute and a half). For the same
// reason one text draws at most MAX_MARKERS marker elements; past them, it says so once, and
// the rest of its markers are written into its text as `<U+202E>`, where they cost what text
// costs. Those are ASCII on purpose: a text node holding 40,000 `⟨` took Chromium 3.5 s to lay
// out (each asks for a fallback font; the monospace fonts lack it), 40,000 `<` 0.2 s.
//
// The C0 and C1 controls (but tab and line feed) are marked the same way in every text drawn
// here (controls.js): a control draws as a box of its own, and 87,000 of them between letters
// kept the page busy for seconds. Chat text marks them too, and only them (`CHAT_MARKED`,
// `markTextIn` for a reply's tree): prose relies on its bidi marks.
//
// The nodes drawn (`visibleTextNodes`) also show each character with at most MAX_MARKS
// combining marks (combining-marks.js), and put the rest of a word longer than MAX_WORD in a
// script broken with a dictionary in a `.long-word` span (long-words.js): every text drawn
// here is one the browser must lay out.

import { boundedNodes, markState } from './combining-marks.js';
import { CONTROL_RANGES } from './controls.js';
import { breakLongWords, wordState } from './long-words.js';
import { partNode, replaceTextNodesIn } from './text-nodes.js';


/**
 * Characters drawn as markers, as ranges of code points: `name` names one (a string, or a
 * function of the code point for a range), `what` says what it is (in the tooltip), and
 * `pattern`, when given, is what is marked instead of the character wherever it is (a bare
 * carriage return: `\\r(?!\\n)`).
 * @typedef {{from: number, to?: number, name: string | ((codePoint: number) => string),
 *   what: string, pattern?: string}} MarkedRange
 */

/**
 * A set of characters a text shows as markers: `any` finds one, `runs` (global) each run of
 * them, `describe` names one (a code point) and says what it is.
 * @param {MarkedRange[]} ranges
 */
export function markedSet(ranges) {
  const code = (codePoint) => `\\u{${codePoint.toString(16)}}`;
  const classed = ranges.filter((range) => !range.pattern)
    .map(({ from, to = from }) => (to === from ? code(from) : `${code(from)}-${code(to)}`)).join('');
  const alone = ranges.filter((range) => range.pattern).map((range) => range.pattern);
  const one = alone.length ? `(?:[${classed}]|${alone.join('|')})` : `[${classed}]`;
  return Object.freeze({
    any: new RegExp(one, 'u'),
    runs: new RegExp(`${one}+`, 'gu'),
    describe(codePoint) {
      const range = ranges.find(({ from, to = from }) => codePoint >= from && codePoint <= to);
      const name = typeof range?.name === 'function' ? range.name(codePoint) : range?.name;
      return { name: name ?? 'UNNAMED CHARACTER', what: range?.what ?? 'a hidden character' };
    },
  });
}

const BIDI = 'a bidi control';
/** The explicit bidi formatting characters of Unicode (UAX #9), and the three marks. */
export const BIDI_CONTROL_RANGES = Object.freeze([
  { from: 0x061c, name: 'ARABIC LETTER MARK', what: BIDI },
  { from: 0x200e, name: 'LEFT-TO-RIGHT MARK', what: BIDI },
  { from: 0x200f, name: 'RIGHT-TO-LEFT MARK', what: BIDI },
  { from: 0x202a, name: 'LEFT-TO-RIGHT EMBEDDING', what: BIDI },
  { from: 0x202b, name: 'RIGHT-TO-LEFT EMBEDDING', what: BIDI },
  { from: 0x202c, name: 'POP DIRECTIONAL FORMATTING', what: BIDI },
  { from: 0x202d, name: 'LEFT-TO-RIGHT OVERRIDE', what: BIDI },
  { from: 0x202e, name: 'RIGHT-TO-LEFT OVERRIDE', what: BIDI },
  { from: 0x2066, name: 'LEFT-TO-RIGHT ISOLATE', what: BIDI },
  { from: 0x2067, name: 'RIGHT-TO-LEFT ISOLATE', what: BIDI },
  { from: 0x2068, name: 'FIRST STRONG ISOLATE', what: BIDI },
  { from: 0x2069, name: 'POP DIRECTIONAL ISOLATE', what: BIDI },
]);

/** The bidi controls. */
export const BIDI_CONTROLS = markedSet(BIDI_CONTROL_RANGES);

/** What every text the page draws from the server shows as markers: bidi and C0/C1 controls. */
export const TEXT_MARKED = markedSet([...BIDI_CONTROL_RANGES, ...CONTROL_RANGES]);

/** What chat text (a prompt, a reply) shows as markers: the C0/C1 controls only. */
export const CHAT_MARKED = markedSet(CONTROL_RANGES);

/** Marker elements one text draws at most; the rest of its markers are written as text. */
export const MAX_MARKERS = 200;
// The kinds of character a run's marker lists before it only counts the rest.
const LISTED_GROUPS = 4;

/** True when `text` holds a bidi control. */
export function hasBidiControl(text) {
  return BIDI_CONTROLS.any.test(text);
}

/** The name of one character in markers: `U+202E`. */
function codeOf(codePoint) {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The marker shown for one bidi control: `⟨U+202E⟩`. */
export function bidiMarker(control) {
  return `⟨${codeOf(control.codePointAt(0))}⟩`;
}

/**
 * The marker and the tooltip of one run of marked characters: `⟨U+202E⟩` for one,
 * `⟨U+202E ×3 U+2066⟩` for a few, and past LISTED_GROUPS kinds the first ones and a count,
 * `⟨U+202E U+202D U+202E U+202D … 40000 in all⟩`. Its cost is the run's length, once.
 */
export function runMarker(run, set = TEXT_MARKED) {
  const groups = []; // {codePoint, count} of consecutive equal characters, the first few
  let total = 0;
  let more = false;
  for (const char of run) {
    total += 1;
    if (more) continue; // only counted from here on
    const codePoint = char.codePointAt(0);
    const last = groups.at(-1);
    if (last?.codePoint === codePoint) last.count += 1;
    else if (groups.length < LISTED_GROUPS) groups.push({ codePoint, count: 1 });
    else more = true;
  }
  const listed = groups.map(({ codePoint, count }) => (count > 1 ? `${codeOf(codePoint)} ×${count}` : codeOf(codePoint)));
  if (more) listed.push(`… ${total} in all`);
  const named = groups.map(({ codePoint, count }) => `${set.describe(codePoint).name}${count > 1 ? ` ×${count}` : ''}`);
  const title = total === 1
    ? `${named[0]} (${set.describe(groups[0].codePoint).what}, shown instead of applied)`
    : `${total} characters, shown instead of applied: ${named.join(', ')}${more ? ', …' : ''}`;
  const inner = listed.join(' ');
  return { marker: `⟨${inner}⟩`, asText: `<${inner}>`, title };
}

/**
 * `text` cut into stretches of text and runs of marked characters, a run with its marker and
 * tooltip (and `asText`, the marker as it is written into text past MAX_MARKERS). Concatenated,
 * the pieces' text is `text`.
 * @returns {Array<{text: string, marker: string|null, asText?: string, title: string|null}>}
 */
export function markedPieces(text, set = TEXT_MARKED) {
  const pieces = [];
  let from = 0;
  const runs = new RegExp(set.runs); // a copy: its lastIndex is this call's own
  for (let match = runs.exec(text); match; match = runs.exec(text)) {
    if (match.index > from) pieces.push({ text: text.slice(from, match.index), marker: null, title: null });
    pieces.push({ text: match[0], ...runMarker(match[0], set) });
    from = match.index + match[0].length;
  }
  if (from < text.length) pieces.push({ text: text.slice(from), marker: null, title: null });
  return pieces;
}

/** What is carried from one text to the next drawn with it: the marker elements drawn so far. */
export function markerCount() {
  return { markers: 0 };
}

/**
 * What is drawn for `text`: text, markers (at most MAX_MARKERS, counted in `count` with the
 * texts drawn before), and once past them a note (`limit`) after which each marker is part of
 * the text. No part holds a marked character.
 * @returns {Array<{kind: 'text'|'marker'|'limit', text: string, title?: string}>}
 */
export function shownParts(text, set = TEXT_MARKED, count = markerCount()) {
  if (!set.any.test(text)) return text === '' ? [] : [{ kind: 'text', text }];
  const parts = [];
  let plain = '';
  let { markers } = count;
  const flush = () => {
    if (plain !== '') parts.push({ kind: 'text', text: plain });
    plain = '';
  };
  for (const { text: piece, marker, asText, title } of markedPieces(text, set)) {
    if (marker === null) {
      plain += piece;
    } else if (markers < MAX_MARKERS) {
      flush();
      parts.push({ kind: 'marker', text: marker, title });
      markers += 1;
    } else {
      if (markers === MAX_MARKERS) {
        flush();
        parts.push({
          kind: 'limit',
          text: `⟨more than ${MAX_MARKERS} markers: the rest are written <U+…>⟩`,
          title: `This text holds more than ${MAX_MARKERS} runs of characters drawn as markers. `
            + 'After this note they are written into the text as <U+202E> (still shown, never applied).',
        });
        markers += 1;
      }
      plain += asText;
    }
  }
  flush();
  count.markers = markers;
  return parts;
}

const partDrawn = (doc, part) => partNode(doc, part, 'bidi-control');

/**
 * The nodes that show `text`: text nodes, a `.bidi-control` span per marker, a
 * `.combining-marks` span where a character's combining marks past MAX_MARKS are cut
 * (combining-marks.js), and a `.long-word` span around the rest of a long word
 * (long-words.js). `marks` and `words` carry a run of marks and a word from the text drawn
 * before it (a run of output in another colour); by default `text` is drawn on its own.
 */
export function visibleTextNodes(doc, text, set = TEXT_MARKED, marks = markState(), words = wordState()) {
  const nodes = shownParts(text, set).map((part) => partDrawn(doc, part));
  return breakLongWords(doc, boundedNodes(doc, nodes, marks), words);
}

/** Replaces the content of `el` with `text`, its controls shown as markers (`set`). */
export function setVisibleText(el, text, set = TEXT_MARKED) {
  el.replaceChildren(...visibleTextNodes(el.ownerDocument, text, set));
}

/**
 * Shows the characters of `set` in every text under `root` as markers, in document order, in
 * place (a Markdown reply, whose text sits in emphasis, links and code): at most MAX_MARKERS
 * marker elements in all (`count`), the rest written into the text. Walks the tree without
 * recursion; the markers it puts in are not walked again.
 */
export function markTextIn(root, set, count = markerCount()) {
  const doc = root.ownerDocument ?? root;
  return replaceTextNodesIn(root, (node) => (set.any.test(node.data)
    ? shownParts(node.data, set, count).map((part) => partDrawn(doc, part)) : null));
}
