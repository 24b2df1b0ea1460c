// Combining marks drawn at most MAX_MARKS per character. Chromium lays out one grapheme cluster
// in time that grows faster than its length: `Z` and 131,000 U+0301 (256 KiB, within a field's
// limit) blocked the page's main thread 19 to 43 s in a command, a title, a reply or an output,
// and 10,000 emoji skin-tone modifiers in a row a minute. The same marks cut into clusters of
// 16 lay out in a few milliseconds. So wherever the page draws text from the server, a
// character shows its first MAX_MARKS marks and the rest of its run is one marker that counts
// them (`⟨+130,984 combining marks⟩`, class `combining-marks`, the marks named in its tooltip),
// as bidi controls are (bidi.js). The text itself is unchanged: `Copy` and `Copy output` take
// the real characters, as they do for bidi controls.
//
// What counts as a mark is what continues a grapheme cluster (UAX #29): the marks (Mn, Mc, Me),
// the other Grapheme_Extend characters (the zero-width non-joiner, tag characters...), the
// emoji modifiers, the zero-width joiner, and the two spacing marks that are letters (U+0E33,
// U+0EB3, whose runs cost as much); and every character that draws nothing
// (Default_Ignorable_Code_Point: the zero-width space, the word joiner, the soft hyphen...),
// since Chromium hangs the marks on both sides of one on the same base: `a` and runs of 16
// marks each behind a word joiner froze the page 9 s for 126 KB, and crashed the tab at 259. Real text stays far below the bound: Vietnamese puts two
// marks on a letter, Hebrew with cantillation or Quranic Arabic four or five, an emoji flag
// six or seven tag characters.
//
// A run can go on from one text node to the next (a colour change in the middle of it, a
// Markdown emphasis): the count is carried across the texts laid out together (`markState`).
// Like bidi markers, one text draws at most MAX_MARK_MARKERS marker elements; past them one note
// says so and each later cut is written into the text as `<+5 combining marks>` (ASCII: a text
// node of 40,000 `⟨` took 3.5 s to lay out, one font fallback each).

import { partNode, replaceTextNodesIn } from './text-nodes.js';

/** Marks one character shows; the rest of its run is counted in a marker. */
export const MAX_MARKS = 16;
/** Marker elements one text draws at most; later cuts are written into the text. */
export const MAX_MARK_MARKERS = 200;
// The kinds of mark a marker's tooltip lists before it only counts the rest.
const LISTED_GROUPS = 4;

const MARK = String.raw`[\p{M}\p{Grapheme_Extend}\p{Emoji_Modifier}\p{Default_Ignorable_Code_Point}\u0E33\u0EB3]`;
const RUNS = new RegExp(`${MARK}+`, 'gu');
const LONG = new RegExp(`${MARK}{${MAX_MARKS + 1}}`, 'u');
const LEADING = new RegExp(`^${MARK}+`, 'u');
const ONE = new RegExp(`^${MARK}$`, 'u');
const EXTRA = new RegExp(`(${MARK}{${MAX_MARKS}})${MARK}+`, 'gu');

const TEXT = 3;
const ELEMENT = 1;
const FRAGMENT = 11;

/**
 * What is carried from one text to the next laid out with it: `run`, the marks at the end of
 * what came before (on its last character), and `markers`, the marker elements drawn so far.
 */
export function markState() {
  return { run: 0, markers: 0 };
}

/** True when `ch` (one code point) continues a grapheme cluster: it counts as a mark. */
export function isMark(ch) {
  return ONE.test(ch);
}

/**
 * `text` with every run of marks cut to its first MAX_MARKS, with no marker: for a name made of
 * a bounded part of a text (a command in an accessible name), which says what it names, not all.
 */
export function withoutExtraMarks(text) {
  return text.replace(EXTRA, '$1');
}

/** The name of one code point in markers: `U+0301`. */
function codeOf(codePoint) {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The marker of `marks`, the marks a character does not draw: `⟨+130,984 combining marks⟩`,
 * the same as ASCII for past MAX_MARK_MARKERS (`<+130,984 combining marks>`), and a tooltip
 * naming the first kinds (`U+0301 ×130984`). Its cost is the marks' length, once.
 */
export function marksMarker(marks) {
  const groups = []; // {codePoint, count} of consecutive equal marks, the first few
  let total = 0;
  let more = false;
  for (const char of marks) {
    total += 1;
    if (more) continue;
    const codePoint = char.codePointAt(0);
    const last = groups.at(-1);
    if (last?.codePoint === codePoint) last.count += 1;
    else if (groups.length < LISTED_GROUPS) groups.push({ codePoint, count: 1 });
    else more = true;
  }
  const count = total.toLocaleString('en-US');
  const inner = `+${count} combining mark${total === 1 ? '' : 's'}`;
  const listed = groups.map(({ codePoint, count: n }) => (n > 1 ? `${codeOf(codePoint)} ×${n}` : codeOf(codePoint)));
  if (more) listed.push('…');
  const title = `${count} more combining mark${total === 1 ? '' : 's'} on one character, not drawn `
    + `(a character shows at most ${MAX_MARKS}); the text still holds them: ${listed.join(' ')}`;
  return { marker: `⟨${inner}⟩`, asText: `<${inner}>`, title, count: total };
}

/** The marks (code points) in `run`, a string of marks. */
function countMarks(run) {
  let count = 0;
  for (let i = 0; i < run.length; i += 1) {
    const unit = run.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdbff) count += 1; // a high surrogate counts with its pair
  }
  return count;
}

/** Where `run` (marks) ends its first `n` code points. */
function afterMarks(run, n) {
  let at = 0;
  for (let seen = 0; seen < n && at < run.length; seen += 1) {
    const unit = run.charCodeAt(at);
    at += unit >= 0xd800 && unit <= 0xdbff && at + 1 < run.length ? 2 : 1;
  }
  return at;
}

/** The marks at the end of `text` (at most a short run: called when no run is long). */
function trailingMarks(text) {
  let count = 0;
  let end = text.length;
  while (end > 0) {
    let start = end - 1;
    const unit = text.charCodeAt(start);
    if (unit >= 0xdc00 && unit <= 0xdfff && start > 0) {
      const high = text.charCodeAt(start - 1);
      if (high >= 0xd800 && high <= 0xdbff) start -= 1;
    }
    if (!ONE.test(text.slice(start, end))) break;
    count += 1;
    end = start;
  }
  return count;
}

/**
 * `text` as drawn: its stretches of text, and in place of the marks a character has past
 * MAX_MARKS, a marker (`kind: 'marks'`, with `marks`, the real marks it stands for), or past
 * MAX_MARK_MARKERS the marker written into the text after one note (`kind: 'limit'`). Marks at
 * the start of `text` go on the run `state` carries (a text with no base character before them
 * starts at 0); `state` is updated for the next text. Linear in `text`; a text with no run
 * longer than the bound is one regular expression test and is returned whole.
 * @returns {Array<{kind: 'text'|'marks'|'limit', text: string, title?: string, marks?: string}>}
 */
export function boundedParts(text, state = markState()) {
  if (text === '') return [];
  if (!LONG.test(text)) {
    const leading = LEADING.exec(text)?.[0] ?? '';
    const before = state.run;
    const leadingCount = countMarks(leading);
    if (before + leadingCount <= MAX_MARKS) {
      state.run = leading.length === text.length ? before + leadingCount : trailingMarks(text);
      return [{ kind: 'text', text }];
    }
  }
  const parts = [];
  let plain = '';
  let from = 0;
  let trailing = 0;
  const flush = () => {
    if (plain !== '') parts.push({ kind: 'text', text: plain });
    plain = '';
  };
  const runs = new RegExp(RUNS); // a copy: its lastIndex is this call's own
  for (let match = runs.exec(text); match; match = runs.exec(text)) {
    const run = match[0];
    const before = match.index === 0 ? state.run : 0;
    const end = match.index + run.length;
    const allowed = Math.max(0, MAX_MARKS - before);
    const cut = run.length <= allowed ? run.length : afterMarks(run, allowed);
    if (end === text.length) trailing = before + countMarks(run);
    if (cut === run.length) continue; // within the bound
    const marks = run.slice(cut);
    const { marker, asText, title } = marksMarker(marks);
    plain += text.slice(from, match.index + cut);
    from = end;
    if (state.markers < MAX_MARK_MARKERS) {
      flush();
      parts.push({ kind: 'marks', text: marker, title, marks });
    } else {
      if (state.markers === MAX_MARK_MARKERS) {
        flush();
        parts.push({
          kind: 'limit',
          text: `⟨more than ${MAX_MARK_MARKERS} cut runs of combining marks: the rest are written <+N combining marks>⟩`,
          title: `This text has more than ${MAX_MARK_MARKERS} characters with more than ${MAX_MARKS} combining marks. `
            + 'After this note their extra marks are counted in the text as <+5 combining marks>.',
        });
      }
      plain += asText;
    }
    state.markers += 1;
  }
  plain += text.slice(from);
  flush();
  state.run = trailing;
  return parts;
}

const partDrawn = (doc, part) => partNode(doc, part, 'combining-marks');

/** True when `parts` draw `text` as it is (past MAX_MARK_MARKERS, one stretch of text may hold
 * a count written in place of marks). */
function unchanged(parts, text) {
  return parts.length === 0 || (parts.length === 1 && parts[0].kind === 'text' && parts[0].text === text);
}

/**
 * `nodes` (laid out one after the other) with every text in them bounded: a text node is
 * replaced by the nodes that draw it, an element's (or fragment's) text is bounded in place.
 * A text node left as it is stays the same node.
 */
export function boundedNodes(doc, nodes, state = markState()) {
  const out = [];
  for (const node of nodes) {
    if (node.nodeType === TEXT) {
      const parts = boundedParts(node.data, state);
      if (unchanged(parts, node.data)) out.push(node);
      else out.push(...parts.map((part) => partDrawn(doc, part)));
    } else {
      if (node.nodeType === ELEMENT || node.nodeType === FRAGMENT) boundTextIn(node, state);
      out.push(node);
    }
  }
  return out;
}

/**
 * Bounds the marks of every text under `root`, in document order, in place (a Markdown reply,
 * whose text nodes sit in emphasis, links and code). Walks the tree without recursion; the
 * markers it puts in are not walked again.
 */
export function boundTextIn(root, state = markState()) {
  const doc = root.ownerDocument ?? root;
  return replaceTextNodesIn(root, (node) => {
    const parts = boundedParts(node.data, state);
    // A text with marks cut draws a marker at least.
    return unchanged(parts, node.data) ? null : parts.map((part) => partDrawn(doc, part));
  });
}
