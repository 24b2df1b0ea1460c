// Markdown of agent replies as a small tree (pure, no DOM): the CommonMark blocks agents use
// (paragraphs, ATX and setext headings, fenced code, block quotes, bullet and ordered lists,
// thematic breaks), GitHub tables, and inline code, emphasis, strong, strikethrough, links,
// autolinks and hard breaks.
//
// Sanitized by construction: the tree has only the node types below, text stays text (raw HTML
// is shown as written), and a link keeps its `href` only when it is an absolute http, https or
// mailto URL; any other link (javascript:, data:, relative...) is shown as its text alone.
// Images are shown as their alt text: the page loads nothing a reply names.
//
// Block nodes: {type: 'paragraph'|'heading'|'code'|'quote'|'list'|'hr'|'table', ...}
// Inline nodes: {type: 'text'|'code'|'em'|'strong'|'del'|'link'|'br'|'group', ...} ('group': children
// without an element of their own, what an unsafe link or an image leaves)

const SAFE_SCHEMES = new Set(['http:', 'https:', 'mailto:']);

const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^`]*?)[ \t]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*)|[ \t]*$)/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const TABLE_DELIMITER = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const BLANK = /^[ \t]*$/;

/** @returns {{type: 'root', children: object[]}} */
export function parseMarkdown(source) {
  const text = typeof source === 'string' ? source : '';
  return { type: 'root', children: parseBlocks(text.replace(/\r\n?/g, '\n').split('\n')) };
}

// ---- blocks ---------------------------------------------------------------------------------

function parseBlocks(lines) {
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (BLANK.test(line)) {
      i += 1;
      continue;
    }
    const parsed = fencedCode(lines, i) ?? heading(line, i) ?? rule(line, i) ?? quote(lines, i) ?? list(lines, i)
      ?? table(lines, i) ?? paragraph(lines, i);
    blocks.push(parsed.node);
    i = parsed.next;
  }
  return blocks;
}

function fencedCode(lines, start) {
  const open = FENCE.exec(lines[start]);
  if (!open) return null;
  const [, indent, fence, info] = open;
  if (fence[0] === '`' && info.includes('`')) return null;
  const body = [];
  let i = start + 1;
  for (; i < lines.length; i += 1) {
    const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(lines[i]);
    if (close && close[1][0] === fence[0] && close[1].length >= fence.length) {
      i += 1;
      break;
    }
    body.push(stripIndent(lines[i], indent.length));
  }
  const language = info.split(/[ \t]/)[0];
  return { node: { type: 'code', language, text: body.join('\n') }, next: i };
}

function heading(line, i) {
  const match = HEADING.exec(line);
  if (!match) return null;
  return { node: { type: 'heading', level: match[1].length, children: parseInline(match[2] ?? '') }, next: i + 1 };
}

function rule(line, i) {
  return RULE.test(line) ? { node: { type: 'hr' }, next: i + 1 } : null;
}

function quote(lines, start) {
  if (!QUOTE.test(lines[start])) return null;
  const inner = [];
  let i = start;
  for (; i < lines.length && !BLANK.test(lines[i]); i += 1) {
    if (QUOTE.test(lines[i])) inner.push(lines[i].replace(QUOTE, ''));
    else if (startsBlock(lines, i)) break;
    else inner.push(lines[i]); // a lazy continuation line
  }
  return { node: { type: 'quote', children: parseBlocks(inner) }, next: i };
}

function list(lines, start) {
  const first = ITEM.exec(lines[start]);
  if (!first) return null;
  const ordered = /\d/.test(first[2]);
  const delimiter = first[2].at(-1);
  const items = [];
  let loose = false;
  let i = start;
  let blankBefore = false; // the previous item ended with a blank line
  while (i < lines.length) {
    const marker = ITEM.exec(lines[i]);
    if (!marker || /\d/.test(marker[2]) !== ordered || marker[2].at(-1) !== delimiter) break;
    if (blankBefore) loose = true;
    const spacing = marker[3] ?? ' ';
    const width = marker[1].length + marker[2].length + (spacing.length > 4 ? 1 : spacing.length);
    const body = [marker[4] ?? ''];
    i += 1;
    let sawBlank = false;
    for (; i < lines.length; i += 1) {
      const line = lines[i];
      if (BLANK.test(line)) {
        sawBlank = true;
        body.push('');
        continue;
      }
      if (indentOf(line) >= width) {
        if (sawBlank) loose = true;
        sawBlank = false;
        body.push(stripIndent(line, width));
        continue;
      }
      if (sawBlank || ITEM.test(line) || startsBlock(lines, i)) break;
      body.push(line); // a lazy continuation of the item's paragraph
    }
    while (body.length > 0 && BLANK.test(body.at(-1))) body.pop();
    items.push({ children: parseBlocks(body) });
    blankBefore = sawBlank;
  }
  const startNumber = ordered ? Number.parseInt(first[2], 10) : null;
  return { node: { type: 'list', ordered, start: startNumber, loose, items }, next: i };
}

function table(lines, start) {
  if (start + 1 >= lines.length || !lines[start].includes('|') || !TABLE_DELIMITER.test(lines[start + 1])) return null;
  const head = splitRow(lines[start]);
  const align = splitRow(lines[start + 1]).map((cell) => {
    const left = cell.startsWith(':');
    const right = cell.endsWith(':');
    return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
  });
  if (head.length !== align.length) return null;
  const rows = [];
  let i = start + 2;
  for (; i < lines.length && !BLANK.test(lines[i]) && lines[i].includes('|'); i += 1) {
    const cells = splitRow(lines[i]);
    rows.push(head.map((_, column) => parseInline(cells[column] ?? '')));
  }
  return { node: { type: 'table', align, head: head.map(parseInline), rows }, next: i };
}

function paragraph(lines, start) {
  const text = [lines[start]];
  let i = start + 1;
  for (; i < lines.length && !BLANK.test(lines[i]); i += 1) {
    const setext = SETEXT.exec(lines[i]);
    if (setext) {
      const level = setext[1][0] === '=' ? 1 : 2;
      return { node: { type: 'heading', level, children: parseInline(text.join('\n').trim()) }, next: i + 1 };
    }
    if (startsBlock(lines, i)) break;
    text.push(lines[i]);
  }
  return { node: { type: 'paragraph', children: parseInline(text.map((l) => l.replace(/^[ \t]+/, '')).join('\n')) }, next: i };
}

/** Whether line `i` interrupts a paragraph (an ordered list only when it starts at 1). */
function startsBlock(lines, i) {
  const line = lines[i];
  if (FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line)) return true;
  const item = ITEM.exec(line);
  if (item && item[4] !== undefined && item[4] !== '') return !/\d/.test(item[2]) || Number.parseInt(item[2], 10) === 1;
  return false;
}

function splitRow(line) {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  const cells = [];
  let cell = '';
  for (let i = 0; i < row.length; i += 1) {
    if (row[i] === '\\' && row[i + 1] === '|') {
      cell += '|';
      i += 1;
    } else if (row[i] === '|') {
      cells.push(cell.trim());
      cell = '';
    } else {
      cell += row[i];
    }
  }
  cells.push(cell.trim());
  return cells;
}

function indentOf(line) {
  let width = 0;
  for (const ch of line) {
    if (ch === ' ') width += 1;
    else if (ch === '\t') width += 4 - (width % 4);
    else break;
  }
  return width;
}

function stripIndent(line, width) {
  let i = 0;
  let removed = 0;
  while (i < line.length && removed < width && (line[i] === ' ' || line[i] === '\t')) {
    removed += line[i] === '\t' ? 4 - (removed % 4) : 1;
    i += 1;
  }
  return line.slice(i);
}

// ---- inlines --------------------------------------------------------------------------------

const ESCAPABLE = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/;
const BARE_URL = /^https?:\/\/[^\s<>]*[^\s<>.,:;"')\]!?*_~]/;
const AUTOLINK = /^<((?:https?|mailto):[^\s<>]*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>/i;
const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', '#39': "'" };

/** Inline nodes of `text`. */
export function parseInline(text) {
  const nodes = [];
  let plain = '';
  const flush = () => {
    if (plain) nodes.push({ type: 'text', text: decodeEntities(plain) });
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    if (text[i] === '\n') {
      // Two or more spaces before a line break make a hard break; the spaces are dropped.
      const hard = / {2,}$/.test(plain);
      plain = plain.replace(/ +$/, '');
      if (hard) {
        flush();
        nodes.push({ type: 'br' });
      } else {
        plain += '\n';
      }
      i += 1;
      continue;
    }
    const found = inlineAt(text, i);
    if (found) {
      flush();
      if (found.node) nodes.push(found.node);
      i = found.next;
    } else {
      plain += text[i];
      i += 1;
    }
  }
  flush();
  return nodes;
}

function inlineAt(text, i) {
  const ch = text[i];
  if (ch === '\\') {
    if (text[i + 1] === '\n') return { node: { type: 'br' }, next: i + 2 };
    if (ESCAPABLE.test(text[i + 1] ?? '')) return { node: { type: 'text', text: text[i + 1] }, next: i + 2 };
    return null;
  }
  if (ch === '`') return codeSpan(text, i);
  if (ch === '*' || ch === '_' || ch === '~') return emphasis(text, i);
  if (ch === '[') return link(text, i, false);
  if (ch === '!' && text[i + 1] === '[') return link(text, i + 1, true);
  if (ch === '<') return autolink(text, i);
  if (ch === 'h' && (i === 0 || !/[\w/]/.test(text[i - 1]))) return bareUrl(text, i);
  return null;
}

function codeSpan(text, i) {
  const run = /^`+/.exec(text.slice(i))[0];
  let search = i + run.length;
  for (;;) {
    const close = text.indexOf(run, search);
    if (close < 0) return { node: { type: 'text', text: run }, next: i + run.length };
    if (text[close + run.length] === '`') {
      search = close + run.length + /^`+/.exec(text.slice(close + run.length))[0].length;
      continue;
    }
    let code = text.slice(i + run.length, close).replace(/\n/g, ' ');
    if (/^ .*[^ ].* $|^ [^ ] $/.test(code)) code = code.slice(1, -1);
    return { node: { type: 'code', text: code }, next: close + run.length };
  }
}

function emphasis(text, i) {
  const ch = text[i];
  const run = new RegExp(`^\\${ch}+`).exec(text.slice(i))[0];
  const before = text[i - 1] ?? ' ';
  const after = text[i + run.length] ?? ' ';
  if (/\s/.test(after)) return null; // not left-flanking: literal
  if (ch === '_' && /[\p{L}\p{N}]/u.test(before)) return null; // intraword underscore
  const size = ch === '~' ? (run.length === 2 ? 2 : 0) : Math.min(run.length, 2);
  if (size === 0) return null;
  const delimiter = ch.repeat(size);
  const close = closingDelimiter(text, i + size, delimiter);
  if (close < 0) return null;
  const type = ch === '~' ? 'del' : size === 2 ? 'strong' : 'em';
  return { node: { type, children: parseInline(text.slice(i + size, close)) }, next: close + size };
}

/** The index of a right-flanking `delimiter` closing an emphasis opened before `from`. */
function closingDelimiter(text, from, delimiter) {
  const ch = delimiter[0];
  for (let j = from; j < text.length; j += 1) {
    if (text[j] === '`') {
      const skipped = codeSpan(text, j);
      if (skipped.node.type === 'code') j = skipped.next - 1;
      continue;
    }
    if (text[j] === '\\') {
      j += 1;
      continue;
    }
    if (!text.startsWith(delimiter, j) || j === from) continue;
    const run = new RegExp(`^\\${ch}+`).exec(text.slice(j))[0];
    const before = text[j - 1];
    const after = text[j + run.length] ?? ' ';
    if (/\s/.test(before)) {
      j += run.length - 1;
      continue;
    }
    if (ch === '_' && /[\p{L}\p{N}]/u.test(after)) {
      j += run.length - 1;
      continue;
    }
    // `**a *b* c**`: a single closer inside a double run belongs to the inner emphasis.
    if (run.length === delimiter.length || (delimiter.length === 2 && run.length === 3)) return j + run.length - delimiter.length;
    if (delimiter.length === 1 && run.length >= 2) {
      j += run.length - 1;
      continue;
    }
    return j;
  }
  return -1;
}

function link(text, open, image) {
  const close = matchingBracket(text, open);
  if (close < 0 || text[close + 1] !== '(') return null;
  const target = /^\(\s*(<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+("[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/.exec(text.slice(close + 1));
  if (!target) return null;
  const rawHref = target[1].startsWith('<') ? target[1].slice(1, -1) : target[1];
  const label = text.slice(open + 1, close);
  const next = close + 1 + target[0].length;
  const title = target[2] ? decodeEntities(target[2].slice(1, -1)) : null;
  const href = safeHref(unescape(rawHref));
  const children = image ? [{ type: 'text', text: decodeEntities(label) }] : parseInline(label);
  // An unsafe or relative link, and every image, is shown as its label alone.
  if (href === null || image) return { node: { type: 'group', children }, next };
  return { node: { type: 'link', href, title, children }, next };
}

function matchingBracket(text, open) {
  let depth = 0;
  for (let j = open; j < text.length; j += 1) {
    if (text[j] === '\\') j += 1;
    else if (text[j] === '`') {
      const skipped = codeSpan(text, j);
      if (skipped.node.type === 'code') j = skipped.next - 1;
    } else if (text[j] === '[') depth += 1;
    else if (text[j] === ']') {
      depth -= 1;
      if (depth === 0) return j;
    }
  }
  return -1;
}

function autolink(text, i) {
  const match = AUTOLINK.exec(text.slice(i));
  if (!match) return null;
  const address = match[1];
  const href = safeHref(address.includes(':') ? address : `mailto:${address}`);
  const label = [{ type: 'text', text: address }];
  const node = href ? { type: 'link', href, title: null, children: label } : label[0];
  return { node, next: i + match[0].length };
}

function bareUrl(text, i) {
  const match = BARE_URL.exec(text.slice(i));
  if (!match) return null;
  const href = safeHref(match[0]);
  if (!href) return null;
  return { node: { type: 'link', href, title: null, children: [{ type: 'text', text: match[0] }] }, next: i + match[0].length };
}

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
