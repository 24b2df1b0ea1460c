// Long words in the scripts that write no space between words (Thai, Lao, Khmer, Myanmar, the
// Tai scripts) break anywhere past their first MAX_WORD characters. Chromium finds the line
// breaks in those scripts with a dictionary, and its cost grows faster than the word: 256 KiB of
// Thai with no space (87,000 characters, one "word") took 1.0 to 1.5 s of layout in a command,
// a reply, a prompt, a title or an output (2.4 to 3.9 s at a phone's width), Lao, Khmer and
// Myanmar 0.8 to 1.8 s; the same text in words of 1,000 between spaces lays out in 40 to 90 ms.
// `word-break: break-all` skips the dictionary (about 25 ms for the whole word in a blank page),
// but applied to every text it would break Thai prose inside its words, where a reader expects a
// line to end between them.
//
// So the page decides where the text is built: the characters of a word past its first MAX_WORD
// go in a `.long-word` span (`word-break: break-all`), when the word holds a character of those
// scripts. A word is what runs between two break opportunities that every text has (spaces,
// tabs, line ends, the zero-width space): punctuation, digits, other letters and joiners do not
// end it for the browser, which hands the dictionary everything between two such breaks, so
// they do not end it here. It goes on across the text nodes laid out together (an emphasis, a
// colour change in output: `wordState`), and a block element ends it. Real words stay far
// below the bound (a Thai sentence runs some tens of characters to a space), so wrapping is
// unchanged for real text; a word past it breaks at the line's end instead of between
// dictionary words. The text is unchanged: only elements are added around it.
//
// Only the first MAX_WORD characters of a word are left to the dictionary, and nothing after
// them: alternating plain and `.long-word` stretches of one word cost as much as the word
// unbroken (Chromium reads the whole word for each plain stretch).

import { isMark } from './combining-marks.js';

/** Characters of a word (UTF-16 units) left to the browser's own line breaking. */
export const MAX_WORD = 1000;

/** The class of the span that holds the rest of a long word. */
export const LONG_WORD_CLASS = 'long-word';

const TEXT = 3;
const ELEMENT = 1;
const FRAGMENT = 11;
const ZWJ = 0x200d;
// Elements a word goes on through; any other element (a paragraph, a list item, a line break,
// a table cell) ends it.
const INLINE = new Set(['a', 'abbr', 'b', 'code', 'del', 'em', 'i', 'kbd', 'mark', 's', 'small', 'span', 'strong',
  'sub', 'sup', 'time', 'u']);
// Markers drawn in place of characters (bidi.js, combining-marks.js): counted as part of the
// word, never split.
const MARKER = /(?:^|\s)(?:bidi-control|combining-marks)(?:\s|$)/;

/** A break opportunity in any text: a space (not a no-break one), a tab, a line end, U+200B. */
function isBreak(unit) {
  return unit === 0x20 || (unit >= 0x09 && unit <= 0x0d) || unit === 0x1680
    || (unit >= 0x2000 && unit <= 0x200b && unit !== 0x2007) || unit === 0x2028 || unit === 0x2029
    || unit === 0x205f || unit === 0x3000;
}

/**
 * A character of the scripts Unicode gives line break class SA (Complex_Context), which
 * Chromium breaks with a dictionary or looks up as such: Thai, Lao, Myanmar (and its two
 * extensions), Khmer (and its symbols), Tai Le, New Tai Lue, Tai Tham, Tai Viet.
 */
export function isDictionaryUnit(unit) {
  return (unit >= 0x0e00 && unit <= 0x0eff)
    || (unit >= 0x1000 && unit <= 0x109f)
    || (unit >= 0x1780 && unit <= 0x17ff)
    || (unit >= 0x1950 && unit <= 0x19ff)
    || (unit >= 0x1a20 && unit <= 0x1aaf)
    || (unit >= 0xa9e0 && unit <= 0xa9ff)
    || (unit >= 0xaa60 && unit <= 0xaadf);
}

/**
 * What is carried from one text to the next laid out with it: `run`, the length of the word
 * the text before ended with; `dictionary`, whether that word holds a dictionary script's
 * character; `long`, whether it is past MAX_WORD and in its `.long-word` stretch; `last`, its
 * last UTF-16 unit.
 */
export function wordState() {
  return { run: 0, dictionary: false, long: false, last: 0 };
}

/** The word ends (a block element, a line break element). */
function endWord(state) {
  state.run = 0;
  state.dictionary = false;
  state.long = false;
  state.last = 0;
}

/** True when a span may start at `at`: not inside a surrogate pair or a grapheme cluster. */
function startsCluster(text, at, before) {
  const unit = text.charCodeAt(at);
  if (unit >= 0xdc00 && unit <= 0xdfff) return false; // the second half of a pair
  if (before === ZWJ) return false; // an emoji sequence goes on
  return !isMark(String.fromCodePoint(text.codePointAt(at)));
}

/**
 * `text` as stretches of plain text and of the rest of long words (`long: true`), given the
 * word the text before ended with (`state`, updated for the next text). Concatenated, the
 * stretches' text is `text`. Linear in `text`: one pass over its UTF-16 units.
 * @returns {Array<{long: boolean, text: string}>}
 */
export function wordParts(text, state = wordState()) {
  if (text === '') return [];
  const parts = [];
  const push = (long, from, to) => {
    if (to > from) parts.push({ long, text: text.slice(from, to) });
  };
  let { run, dictionary, last } = state;
  let from = 0; // the start of what is not in `parts` yet
  let longFrom = state.long ? 0 : -1; // the start of the current `.long-word` stretch
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (isBreak(unit)) {
      if (longFrom >= 0) {
        push(false, from, longFrom);
        push(true, longFrom, i);
        from = i;
        longFrom = -1;
      }
      run = 0;
      dictionary = false;
    } else {
      run += 1;
      if (!dictionary && isDictionaryUnit(unit)) dictionary = true;
      if (longFrom < 0 && dictionary && run > MAX_WORD && startsCluster(text, i, last)) longFrom = i;
    }
    last = unit;
  }
  if (longFrom >= 0) {
    push(false, from, longFrom);
    push(true, longFrom, text.length);
  } else {
    push(false, from, text.length);
  }
  Object.assign(state, { run, dictionary, long: longFrom >= 0, last });
  return parts;
}

/** The nodes that draw `parts`: text nodes, and a `.long-word` span for each long stretch. */
function partNodes(doc, parts) {
  return parts.map(({ long, text }) => {
    const node = doc.createTextNode(text);
    if (!long) return node;
    const span = doc.createElement('span');
    span.className = LONG_WORD_CLASS;
    span.append(node);
    return span;
  });
}

/** True when `parts` draw `text` as one plain text node. */
const unchanged = (parts) => parts.length === 1 && !parts[0].long;

/** A marker goes in the word as text it holds, never split. */
function passMarker(node, state) {
  const { length } = node.textContent;
  if (length === 0) return;
  state.run += length;
  state.last = 0;
}

const isMarker = (node) => typeof node.className === 'string' && MARKER.test(node.className);
const isInline = (node) => INLINE.has(String(node.localName ?? node.tagName ?? '').toLowerCase());

/**
 * `nodes` (laid out one after the other) with the rest of every long word in a `.long-word`
 * span: a text node is replaced by the nodes that draw it, an element's (or a fragment's)
 * text is split in place, a marker counts as the text it shows. A text node left as it is
 * stays the same node.
 */
export function breakLongWords(doc, nodes, state = wordState()) {
  const out = [];
  for (const node of nodes) {
    if (node.nodeType === TEXT) {
      const parts = wordParts(node.data, state);
      if (parts.length === 0 || unchanged(parts)) out.push(node);
      else out.push(...partNodes(doc, parts));
      continue;
    }
    if (node.nodeType === ELEMENT && isMarker(node)) passMarker(node, state);
    else if (node.nodeType === ELEMENT || node.nodeType === FRAGMENT) breakLongWordsIn(node, state);
    out.push(node);
  }
  return out;
}

/**
 * Puts the rest of every long word under `root` in a `.long-word` span, in document order, in
 * place (a Markdown reply: its words go on through emphasis, links and code, and end at each
 * block). Walks the tree without recursion; the spans it puts in are not walked again.
 */
export function breakLongWordsIn(root, state = wordState()) {
  const doc = root.ownerDocument ?? root;
  const block = (node) => node.nodeType === ELEMENT && !isInline(node);
  if (block(root)) endWord(state);
  let node = root.firstChild;
  while (node) {
    if (node.nodeType === TEXT) {
      const parts = wordParts(node.data, state);
      if (parts.length > 0 && !unchanged(parts)) {
        const replacing = partNodes(doc, parts);
        node.replaceWith(...replacing);
        node = replacing.at(-1);
      }
    } else if (node.nodeType === ELEMENT && isMarker(node)) {
      passMarker(node, state);
    } else if (node.nodeType === ELEMENT) {
      if (block(node)) endWord(state);
      if (node.firstChild) {
        node = node.firstChild;
        continue;
      }
    }
    // Up and on: leaving a block ends the word in it.
    while (node !== root && !node.nextSibling) {
      node = node.parentNode;
      if (block(node)) endWord(state);
    }
    if (node === root) break;
    node = node.nextSibling;
  }
  return root;
}
