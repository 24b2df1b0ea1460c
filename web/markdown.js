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
// Hostile replies cost no more than ordinary ones (ADR 0124): containers (quotes, lists) nest at
// most MAX_NESTING deep, deeper markers are text; every line pattern reads a line once (no
// pattern backtracks over a run of spaces); inlines are parsed in linear time
// (markdown-inline.js), all charged to one work budget per message. Tables draw at most
// MAX_TABLE_CELLS cells per message: a row holds as many cells as the header has, even an
// empty row, so a reply of lines holding only `|` under a wide header would otherwise draw
// the square of its length.
//
// Block nodes: {type: 'paragraph'|'heading'|'code'|'quote'|'list'|'hr'|'table', ...}
// Inline nodes: {type: 'text'|'code'|'em'|'strong'|'del'|'link'|'br'|'group', ...} ('group': children
// without an element of their own, what an unsafe link or an image leaves)

import { MAX_NESTING, budgetFor, parseInline } from './markdown-inline.js';

export { MAX_NESTING, WORK_PER_CHARACTER, parseInline, safeHref, workBudget } from './markdown-inline.js';

/** The most table cells one message draws, headers included; rows past them are text. */
export const MAX_TABLE_CELLS = 10_000;

// Each pattern either is anchored and reads forward once, or only looks at a line's start.
const FENCE = /^( {0,3})(`{3,}|~{3,})/;
const HEADING = /^ {0,3}(#{1,6})(?=[ \t]|$)/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*)|[ \t]*$)/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const TABLE_DELIMITER_CELL = /^:?-+:?$/;
const BLANK = /^[ \t]*$/;

/**
 * @param {unknown} source
 * @param {{budget?: ReturnType<typeof import('./markdown-inline.js').workBudget>}} [options]
 *   the work the message may take (defaults to what its length gets).
 * @returns {{type: 'root', children: object[]}}
 */
export function parseMarkdown(source, { budget } = {}) {
  const text = typeof source === 'string' ? source : '';
  const context = { budget: budget ?? budgetFor(text.length), depth: 0, tableCells: { left: MAX_TABLE_CELLS } };
  return { type: 'root', children: parseBlocks(text.replace(/\r\n?/g, '\n').split('\n'), context) };
}

// ---- blocks ---------------------------------------------------------------------------------

function parseBlocks(lines, context) {
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (BLANK.test(line)) {
      i += 1;
      continue;
    }
    const parsed = fencedCode(lines, i) ?? heading(line, i, context) ?? rule(line, i) ?? quote(lines, i, context)
      ?? list(lines, i, context) ?? table(lines, i, context) ?? paragraph(lines, i, context);
    blocks.push(parsed.node);
    i = parsed.next;
  }
  return blocks;
}

function fencedCode(lines, start) {
  const open = fenceOpening(lines[start]);
  if (!open) return null;
  const { indent, fence, info } = open;
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

/** A fence's opening line: its indent, fence and info string (no backtick in a backtick fence's). */
function fenceOpening(line) {
  const match = FENCE.exec(line);
  if (!match) return null;
  const [whole, indent, fence] = match;
  const info = trimTabs(line.slice(whole.length));
  if (fence[0] === '`' && info.includes('`')) return null;
  return { indent, fence, info };
}

function heading(line, i, context) {
  const match = HEADING.exec(line);
  if (!match) return null;
  let title = trimTabs(line.slice(match[0].length));
  // An optional closing run of `#`, when it stands alone: `# Title ##`.
  let hashes = title.length;
  while (hashes > 0 && title[hashes - 1] === '#') hashes -= 1;
  if (hashes === 0 || title[hashes - 1] === ' ' || title[hashes - 1] === '\t') title = trimTabs(title.slice(0, hashes));
  return { node: { type: 'heading', level: match[1].length, children: parseInline(title, context.budget) }, next: i + 1 };
}

function rule(line, i) {
  return RULE.test(line) ? { node: { type: 'hr' }, next: i + 1 } : null;
}

function quote(lines, start, context) {
  if (context.depth >= MAX_NESTING || !QUOTE.test(lines[start])) return null;
  const inner = [];
  let i = start;
  for (; i < lines.length && !BLANK.test(lines[i]); i += 1) {
    if (QUOTE.test(lines[i])) inner.push(lines[i].replace(QUOTE, ''));
    else if (startsBlock(lines, i)) break;
    else inner.push(lines[i]); // a lazy continuation line
  }
  return { node: { type: 'quote', children: parseBlocks(inner, nested(context)) }, next: i };
}

function list(lines, start, context) {
  if (context.depth >= MAX_NESTING) return null;
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
    items.push({ children: parseBlocks(body, nested(context)) });
    blankBefore = sawBlank;
  }
  const startNumber = ordered ? Number.parseInt(first[2], 10) : null;
  return { node: { type: 'list', ordered, start: startNumber, loose, items }, next: i };
}

function table(lines, start, context) {
  if (start + 1 >= lines.length || !lines[start].includes('|') || !isDelimiterRow(lines[start + 1])) return null;
  const head = splitRow(lines[start]);
  const align = splitRow(lines[start + 1]).map((cell) => {
    const left = cell.startsWith(':');
    const right = cell.endsWith(':');
    return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
  });
  if (head.length !== align.length || !drawsCells(context, head.length)) return null;
  const rows = [];
  let i = start + 2;
  for (; i < lines.length && !BLANK.test(lines[i]) && lines[i].includes('|'); i += 1) {
    if (!drawsCells(context, head.length)) break; // the rest is text
    const cells = splitRow(lines[i]);
    rows.push(head.map((_, column) => parseInline(cells[column] ?? '', context.budget)));
  }
  return { node: { type: 'table', align, head: head.map((cell) => parseInline(cell, context.budget)), rows }, next: i };
}

/** Whether the message may draw `count` more table cells; takes them from its allowance and
 * charges a step for each to its work budget. */
function drawsCells(context, count) {
  if (count > context.tableCells.left || !context.budget.spend(count)) return false;
  context.tableCells.left -= count;
  return true;
}

/** A table's delimiter row: `| :--- | ---: |`, the outer pipes optional. */
function isDelimiterRow(line) {
  let row = trimTabs(line);
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|')) row = row.slice(0, -1);
  return row.split('|').every((cell) => TABLE_DELIMITER_CELL.test(trimTabs(cell)));
}

function paragraph(lines, start, context) {
  const text = [lines[start]];
  let i = start + 1;
  for (; i < lines.length && !BLANK.test(lines[i]); i += 1) {
    const setext = SETEXT.exec(lines[i]);
    if (setext) {
      const level = setext[1][0] === '=' ? 1 : 2;
      return { node: { type: 'heading', level, children: parseInline(text.join('\n').trim(), context.budget) }, next: i + 1 };
    }
    if (startsBlock(lines, i)) break;
    text.push(lines[i]);
  }
  const joined = text.map((l) => l.replace(/^[ \t]+/, '')).join('\n');
  return { node: { type: 'paragraph', children: parseInline(joined, context.budget) }, next: i };
}

function nested(context) {
  return { ...context, depth: context.depth + 1 };
}

/** Whether line `i` interrupts a paragraph (an ordered list only when it starts at 1). */
function startsBlock(lines, i) {
  const line = lines[i];
  if (fenceOpening(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line)) return true;
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

/** `text` without the spaces and tabs at its ends (a loop: `/[ \t]+$/` is quadratic on spaces). */
function trimTabs(text) {
  let start = 0;
  let end = text.length;
  while (start < end && (text[start] === ' ' || text[start] === '\t')) start += 1;
  while (end > start && (text[end - 1] === ' ' || text[end - 1] === '\t')) end -= 1;
  return text.slice(start, end);
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

