// Inline Markdown (pure, no DOM) in time linear in the text, whatever the text (ADR 0124):
// code spans, emphasis, strong, strikethrough, links, autolinks, bare URLs and hard breaks.
//
// One left-to-right pass turns the text into a list of pieces: plain text, code spans,
// autolinks, breaks, and delimiter runs (`*`, `_`, `~~`) and brackets (`[`, `![`) kept as
// literal text for now. A `]` looks only at the nearest open bracket; emphasis is resolved with
// CommonMark's delimiter-run algorithm, whose look-back stops where an earlier look-back for
// the same kind of closer failed. So no opener scans the rest of the text for its closer, and
// an unclosed opener costs one step. Every step is charged to the message's work budget: when
// it runs out, the rest of the message is plain text (a backstop, never reached by a reply
// that is merely large). Nesting deeper than MAX_NESTING stays literal text.

export const MAX_NESTING = 32;
/** Work allowed per character of a message (the parser needs a handful). */
export const WORK_PER_CHARACTER = 32;
const WORK_BASE = 4096;

const SAFE_SCHEMES = new Set(['http:', 'https:', 'mailto:']);
const ESCAPABLE = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/;
const BARE_URL = /https?:\/\/[^\s<>]*/y;
const BARE_URL_IN_BRACKETS = /https?:\/\/[^\s<>\]]*/y; // inside `[...]` a bare URL stops at `]`
const URL_TAIL = /[.,:;"')\]!?*_~]/; // a bare URL does not end with these
const AUTOLINK = /<((?:https?|mailto):[^\s<>]*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>/iy;
const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', '#39': "'" };
const WHITESPACE = /\s/u;
const PUNCTUATION = /[\p{P}\p{S}]/u;
const SPECIAL = new Set(['\n', '\\', '`', '*', '_', '~', '[', ']', '!', '<']);
const TAGS = { '*': ['em', 'strong'], _: ['em', 'strong'], '~': [null, 'del'] };

/** The work a message may take: `spend(n)` charges n steps and says whether any are left. */
class WorkBudget {
  constructor(limit) {
    this.limit = limit;
    this.spent = 0;
  }

  spend(steps) {
    this.spent += steps;
    return this.spent <= this.limit;
  }

  get exhausted() {
    return this.spent > this.limit;
  }
}

/** A budget of `limit` steps (`spent` says how many were taken). */
export function workBudget(limit) {
  return new WorkBudget(limit);
}

/** The budget of a message of `length` characters. */
export function budgetFor(length) {
  return workBudget(WORK_PER_CHARACTER * length + WORK_BASE);
}

/** Inline nodes of `text`. */
export function parseInline(text, budget = budgetFor(text.length)) {
  if (budget.exhausted) return text ? [{ type: 'text', text }] : [];
  const pieces = scan(text, budget);
  processEmphasis(pieces, null, budget);
  return finish(pieces.nodes(), false);
}

// ---- the pass over the text -----------------------------------------------------------------

function scan(text, budget) {
  const pieces = new Pieces();
  const codeSpans = new CodeSpanFinder(text, budget);
  const brackets = new BracketStack();
  let plainFrom = 0; // the plain text not yet added runs from here to i
  let i = 0;
  const addPlain = (end) => {
    if (end > plainFrom) pieces.add({ type: 'text', text: decodeEntities(text.slice(plainFrom, end)) });
  };
  while (i < text.length) {
    if (!budget.spend(1)) break;
    const ch = text[i];
    const url = ch === 'h' ? bareUrl(text, i, brackets, budget) : null;
    if (url) {
      addPlain(i);
      pieces.add(url.node);
      i = plainFrom = url.next;
      continue;
    }
    if (!SPECIAL.has(ch) || (ch === '!' && text[i + 1] !== '[')) {
      i += 1;
      continue;
    }
    if (ch === '\n') {
      const spaces = trailingSpaces(text, plainFrom, i);
      addPlain(i - spaces);
      if (spaces >= 2) pieces.add({ type: 'br' });
      else pieces.add({ type: 'text', text: '\n' });
      plainFrom = i + 1;
      i += 1;
      continue;
    }
    addPlain(i);
    i = scanSpecial(text, i, { pieces, codeSpans, brackets, budget });
    plainFrom = i;
  }
  if (i < text.length) {
    addPlain(i);
    pieces.add({ type: 'text', text: text.slice(i) }); // out of budget: the rest as written
  } else {
    addPlain(text.length);
  }
  return pieces;
}

/** Handle the special character at `i`; returns where the scan goes on. */
function scanSpecial(text, i, parts) {
  const { pieces, codeSpans, brackets, budget } = parts;
  const ch = text[i];
  if (ch === '\\') {
    if (text[i + 1] === '\n') {
      pieces.add({ type: 'br' });
      return i + 2;
    }
    if (ESCAPABLE.test(text[i + 1] ?? '')) {
      pieces.add({ type: 'text', text: text[i + 1] });
      return i + 2;
    }
    pieces.add({ type: 'text', text: '\\' });
    return i + 1;
  }
  if (ch === '`') return codeSpan(text, i, pieces, codeSpans);
  if (ch === '*' || ch === '_' || ch === '~') return delimiterRun(text, i, pieces, budget);
  if (ch === '[' || ch === '!') {
    const image = ch === '!';
    const entry = pieces.add({ type: 'text', text: image ? '![' : '[' });
    brackets.push({ entry, image, delimiters: pieces.lastDelimiter });
    return i + (image ? 2 : 1);
  }
  if (ch === ']') return closeBracket(text, i, parts);
  return autolink(text, i, pieces, budget);
}

function trailingSpaces(text, from, end) {
  let count = 0;
  while (end - count > from && text[end - count - 1] === ' ') count += 1;
  return count;
}

// ---- code spans -----------------------------------------------------------------------------

function codeSpan(text, i, pieces, codeSpans) {
  let end = i;
  while (text[end] === '`') end += 1;
  const length = end - i;
  const close = codeSpans.closerOf(end, length);
  if (close < 0) {
    pieces.add({ type: 'text', text: text.slice(i, end) });
    return end;
  }
  let code = text.slice(end, close).replace(/\n/g, ' ');
  if (code.length >= 2 && code[0] === ' ' && code.at(-1) === ' ' && /[^ ]/.test(code)) code = code.slice(1, -1);
  pieces.add({ type: 'code', text: code });
  return close + length;
}

/**
 * Where the backtick run closing a code span starts. The text's runs are listed once, by
 * length; openers come in text order, so each length's position only moves forward.
 */
class CodeSpanFinder {
  constructor(text, budget) {
    this.text = text;
    this.budget = budget;
    this.runsByLength = null;
    this.passed = new Map(); // length -> how many of its runs lie before the last opener
  }

  listRuns() {
    const { text } = this;
    this.runsByLength = new Map();
    this.budget.spend(text.length);
    for (let i = text.indexOf('`'); i >= 0; i = text.indexOf('`', i)) {
      let end = i;
      while (text[end] === '`') end += 1;
      const runs = this.runsByLength.get(end - i) ?? [];
      runs.push(i);
      this.runsByLength.set(end - i, runs);
      i = end;
    }
  }

  closerOf(from, length) {
    if (!this.runsByLength) this.listRuns();
    const runs = this.runsByLength.get(length) ?? [];
    let k = this.passed.get(length) ?? 0;
    while (k < runs.length && runs[k] < from) {
      this.budget.spend(1);
      k += 1;
    }
    this.passed.set(length, k);
    return k < runs.length ? runs[k] : -1;
  }
}

// ---- emphasis -------------------------------------------------------------------------------

function delimiterRun(text, i, pieces, budget) {
  const ch = text[i];
  let end = i;
  while (text[end] === ch) end += 1;
  budget.spend(end - i);
  const length = end - i;
  const entry = pieces.add({ type: 'text', text: text.slice(i, end) });
  if (ch === '~' && length !== 2) return end; // only `~~` strikes through
  const before = i > 0 ? text[i - 1] : ' ';
  const after = end < text.length ? text[end] : ' ';
  const left = flanking(after, before);
  const right = flanking(before, after);
  const canOpen = ch === '_' ? left && (!right || PUNCTUATION.test(before)) : left;
  const canClose = ch === '_' ? right && (!left || PUNCTUATION.test(after)) : right;
  if (canOpen || canClose) pieces.pushDelimiter({ entry, ch, length, original: length, canOpen, canClose });
  return end;
}

/** CommonMark's flanking rule, seen from the side of `inside` (the run's other side is `outside`). */
function flanking(inside, outside) {
  if (WHITESPACE.test(inside)) return false;
  return !PUNCTUATION.test(inside) || WHITESPACE.test(outside) || PUNCTUATION.test(outside);
}

/**
 * CommonMark's "process emphasis" over the delimiters above `bottom`: each closer looks back
 * for an opener, no further than where the last failed look-back for its kind stopped.
 */
function processEmphasis(pieces, bottom, budget) {
  const openersBottom = new Map();
  let closer = bottom ? bottom.next : pieces.firstDelimiter;
  while (closer) {
    if (!closer.canClose) {
      closer = closer.next;
      continue;
    }
    const kind = `${closer.ch}${closer.canOpen ? 'o' : ''}${closer.original % 3}`;
    const floor = openersBottom.get(kind) ?? bottom;
    let opener = closer.prev;
    while (opener && opener !== floor && !matches(opener, closer)) {
      budget.spend(1);
      opener = opener.prev;
    }
    if (opener && opener !== floor && pieces.wrap(opener, closer, budget)) {
      closer = closer.length === 0 ? pieces.dropDelimiter(closer) : closer;
      continue;
    }
    openersBottom.set(kind, closer.prev);
    const next = closer.next;
    if (!closer.canOpen) pieces.dropDelimiter(closer);
    closer = next;
  }
  pieces.dropDelimitersAbove(bottom);
}

function matches(opener, closer) {
  if (opener.ch !== closer.ch || !opener.canOpen) return false;
  // CommonMark's rule of three: `*foo**bar*` is one emphasis, not two.
  const either = opener.canClose || closer.canOpen;
  return !(either && closer.original % 3 !== 0 && (opener.original + closer.original) % 3 === 0);
}

// ---- links ----------------------------------------------------------------------------------

class BracketStack {
  constructor() {
    this.stack = [];
    this.linksBefore = -1; // `[` openers at or below this index may not start a link (links do not nest)
  }

  push(bracket) {
    this.stack.push(bracket);
  }

  /** The nearest open bracket, if it may still start a link or image. */
  top() {
    const index = this.stack.length - 1;
    if (index < 0) return null;
    const bracket = this.stack[index];
    return bracket.image || index > this.linksBefore ? bracket : null;
  }

  pop() {
    this.stack.pop();
    if (this.linksBefore >= this.stack.length) this.linksBefore = this.stack.length - 1;
  }

  linkMade() {
    this.linksBefore = this.stack.length - 1;
  }

  get empty() {
    return this.stack.length === 0;
  }
}

function closeBracket(text, i, { pieces, brackets, budget }) {
  const opener = brackets.top();
  if (!brackets.empty) brackets.pop();
  const target = opener && text[i + 1] === '(' ? linkTarget(text, i + 1, budget) : null;
  if (!target) {
    pieces.add({ type: 'text', text: ']' });
    return i + 1;
  }
  processEmphasis(pieces, opener.delimiters, budget);
  // An image is drawn as its alt text alone: only a link's label can be too deep.
  const depth = opener.image ? 0 : pieces.nestingAfter(opener.entry, budget);
  if (depth + 1 > MAX_NESTING) {
    pieces.add({ type: 'text', text: ']' });
    return i + 1;
  }
  const children = pieces.takeAfter(opener.entry, budget);
  const href = safeHref(unescape(target.href));
  const title = target.title === null ? null : decodeEntities(target.title);
  // An unsafe or relative link, and every image, is shown as its label alone.
  let node;
  if (opener.image) node = { type: 'group', children: [{ type: 'text', text: plainText(children) }] };
  else if (href === null) node = { type: 'group', children };
  else node = { type: 'link', href, title, children };
  pieces.replace(opener.entry, node, opener.image ? 1 : depth + 1);
  if (!opener.image) brackets.linkMade();
  return target.next;
}

/**
 * `(destination "title")` at `open`: `{href, title, next}`, or null. Each part is read once:
 * an attempt costs what it reads, and attempts at different `](` read different text.
 */
function linkTarget(text, open, budget) {
  let i = skipSpace(text, open + 1);
  let href;
  if (text[i] === '<') {
    let end = i + 1;
    while (end < text.length && !'<>\n'.includes(text[end])) end += 1;
    if (text[end] !== '>') return spent(budget, end - open, null);
    href = text.slice(i + 1, end);
    i = end + 1;
  } else {
    const { end, ok } = bareDestination(text, i);
    if (!ok) return spent(budget, end - open, null);
    href = text.slice(i, end);
    i = end;
  }
  const spaced = skipSpace(text, i);
  let title = null;
  if (spaced > i && '"\'('.includes(text[spaced])) {
    const closeCh = text[spaced] === '(' ? ')' : text[spaced];
    let end = spaced + 1;
    while (end < text.length && text[end] !== closeCh && !(closeCh === ')' && text[end] === '(')) end += 1;
    if (text[end] !== closeCh) return spent(budget, end - open, null);
    title = text.slice(spaced + 1, end);
    i = skipSpace(text, end + 1);
  } else {
    i = spaced;
  }
  if (text[i] !== ')') return spent(budget, i - open, null);
  return spent(budget, i - open, { href, title, next: i + 1 });
}

/** Where a destination without `<>` ends (no spaces, parentheses one level deep), and whether it is one. */
function bareDestination(text, start) {
  let i = start;
  for (;;) {
    while (i < text.length && !/[\s()]/.test(text[i])) i += 1;
    if (text[i] !== '(') return { end: i, ok: true };
    i += 1;
    while (i < text.length && !/[\s()]/.test(text[i])) i += 1;
    if (text[i] !== ')') return { end: i, ok: false };
    i += 1;
  }
}

function skipSpace(text, i) {
  let end = i;
  while (end < text.length && WHITESPACE.test(text[end])) end += 1;
  return end;
}

function spent(budget, steps, value) {
  budget.spend(Math.max(steps, 1));
  return value;
}

function autolink(text, i, pieces, budget) {
  AUTOLINK.lastIndex = i;
  const match = AUTOLINK.exec(text);
  if (!match) {
    pieces.add({ type: 'text', text: '<' });
    return i + 1;
  }
  budget.spend(match[0].length);
  const address = match[1];
  const href = safeHref(address.includes(':') ? address : `mailto:${address}`);
  const label = { type: 'text', text: address };
  pieces.add(href ? { type: 'link', href, title: null, children: [label] } : label);
  return i + match[0].length;
}

/** A bare `http(s)://` URL at `i` (not inside a word or a path): `{node, next}`, or null. */
function bareUrl(text, i, brackets, budget) {
  if (i > 0 && /[\w/]/.test(text[i - 1])) return null;
  const pattern = brackets.empty ? BARE_URL : BARE_URL_IN_BRACKETS;
  pattern.lastIndex = i;
  const match = pattern.exec(text);
  if (!match) return null;
  budget.spend(match[0].length);
  let end = match[0].length;
  while (end > 0 && URL_TAIL.test(match[0][end - 1])) end -= 1;
  const address = match[0].slice(0, end);
  const href = /^https?:\/\/./.test(address) ? safeHref(address) : null;
  if (!href) return null;
  return { node: { type: 'link', href, title: null, children: [{ type: 'text', text: address }] }, next: i + end };
}

// ---- the finished tree ----------------------------------------------------------------------

/** Adjacent text joined; a link inside a link's label (a bare URL, an autolink) is its text. */
function finish(nodes, inLink) {
  const out = [];
  const append = (node) => {
    const last = out.at(-1);
    if (node.type === 'text' && last?.type === 'text') last.text += node.text;
    else out.push(node.type === 'text' ? { ...node } : node);
  };
  for (const node of nodes) {
    if (!node.children) append(node);
    else if (inLink && node.type === 'link') finish(node.children, true).forEach(append);
    else append({ ...node, children: finish(node.children, inLink || node.type === 'link' || node.type === 'group') });
  }
  return out;
}

function plainText(nodes) {
  return nodes.map((node) => (node.children ? plainText(node.children) : node.type === 'br' ? '\n' : node.text ?? '')).join('');
}

// ---- the pieces: a linked list of nodes, and the delimiter runs among them --------------------

/**
 * Pieces are `{node, depth, prev, next}` (depth: how deep the node's own nesting goes);
 * delimiters are `{entry, ch, length, original, canOpen, canClose, prev, next}`.
 */
class Pieces {
  constructor() {
    this.head = null;
    this.tail = null;
    this.firstDelimiter = null;
    this.lastDelimiter = null;
  }

  add(node) {
    return this.link({ node, depth: 0 }, this.tail);
  }

  link(entry, after) {
    entry.prev = after;
    entry.next = after ? after.next : this.head;
    if (entry.next) entry.next.prev = entry;
    else this.tail = entry;
    if (after) after.next = entry;
    else this.head = entry;
    return entry;
  }

  unlink(entry) {
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
  }

  pushDelimiter(delimiter) {
    delimiter.prev = this.lastDelimiter;
    delimiter.next = null;
    if (this.lastDelimiter) this.lastDelimiter.next = delimiter;
    else this.firstDelimiter = delimiter;
    this.lastDelimiter = delimiter;
  }

  /** Drop a delimiter from the stack (its text stays); returns the one after it. */
  dropDelimiter(delimiter) {
    const { next } = delimiter;
    if (delimiter.prev) delimiter.prev.next = next;
    else this.firstDelimiter = next;
    if (next) next.prev = delimiter.prev;
    else this.lastDelimiter = delimiter.prev;
    return next;
  }

  dropDelimitersAbove(bottom) {
    if (bottom) bottom.next = null;
    else this.firstDelimiter = null;
    this.lastDelimiter = bottom;
  }

  /** Wrap the pieces between two delimiter runs in emphasis; false when too deep. */
  wrap(opener, closer, budget) {
    const use = opener.length >= 2 && closer.length >= 2 ? 2 : 1;
    const depth = this.depthBetween(opener.entry, closer.entry, budget);
    if (depth + 1 > MAX_NESTING) return false;
    const nodes = this.take(opener.entry, closer.entry, budget);
    this.link({ node: { type: TAGS[opener.ch][use - 1], children: nodes }, depth: depth + 1 }, opener.entry);
    // Delimiters between the two are literal text now, inside the emphasis.
    opener.next = closer;
    closer.prev = opener;
    opener.length -= use;
    closer.length -= use;
    opener.entry.node.text = opener.ch.repeat(opener.length);
    closer.entry.node.text = closer.ch.repeat(closer.length);
    if (opener.length === 0) {
      this.unlink(opener.entry);
      this.dropDelimiter(opener);
    }
    if (closer.length === 0) this.unlink(closer.entry);
    return true;
  }

  /** How deep the nesting of the pieces after `entry` goes. */
  nestingAfter(entry, budget) {
    return this.depthBetween(entry, null, budget);
  }

  /** The nodes of the pieces after `entry`, taken out of the list. */
  takeAfter(entry, budget) {
    return this.take(entry, null, budget);
  }

  replace(entry, node, depth) {
    entry.node = node;
    entry.depth = depth;
  }

  nodes() {
    const nodes = [];
    for (let entry = this.head; entry; entry = entry.next) nodes.push(entry.node);
    return nodes;
  }

  depthBetween(from, to, budget) {
    let depth = 0;
    for (let entry = from.next; entry !== to; entry = entry.next) {
      budget.spend(1);
      depth = Math.max(depth, entry.depth);
    }
    return depth;
  }

  /** The nodes strictly between `from` and `to` (null: the end), taken out of the list. */
  take(from, to, budget) {
    const nodes = [];
    for (let entry = from.next; entry !== to; entry = entry.next) {
      budget.spend(1);
      nodes.push(entry.node);
    }
    from.next = to;
    if (to) to.prev = from;
    else this.tail = from;
    return nodes;
  }
}

// ---- text helpers ---------------------------------------------------------------------------

/** The URL when it is absolute http, https or mailto (after the browser's own clean-up), else null. */
export function safeHref(raw) {
  const candidate = decodeEntities(String(raw ?? '')).trim();
  let url;
  try {
    url = new URL(candidate);
  } catch {
    return null; // relative, or not a URL at all
  }
  return SAFE_SCHEMES.has(url.protocol) ? url.href : null;
}

function unescape(text) {
  return text.replace(/\\([!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~])/g, '$1');
}

function decodeEntities(text) {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]+|#39);/gi, (whole, name) => {
    const lower = name.toLowerCase();
    if (Object.hasOwn(ENTITIES, lower)) return ENTITIES[lower];
    if (lower.startsWith('#')) {
      const code = lower[1] === 'x' ? Number.parseInt(lower.slice(2), 16) : Number.parseInt(lower.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
    }
    return whole;
  });
}
