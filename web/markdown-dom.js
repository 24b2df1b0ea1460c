// The Markdown tree (markdown.js) as DOM. Only the elements below are ever created, text goes in
// as text nodes, and the only attributes come from the tree's checked values: a link's href
// (absolute http, https or mailto, checked by markdown.js), its title, a table cell's alignment
// class and a code block's language.
//
// The tree from parseMarkdown nests at most MAX_NESTING containers and MAX_NESTING inlines; a
// deeper tree (not from the parser) is drawn as its text below MAX_DEPTH, so no tree can
// overflow the stack here. A reply that cannot be drawn at all is shown as the text it is.
//
// Each character draws at most MAX_MARKS combining marks, counted across the reply's text nodes
// in order (combining-marks.js): one cluster of 131,000 marks froze the page for half a minute.
// Its C0 and C1 controls (but tab and line feed) are drawn as markers, at most MAX_MARKERS of
// them for the whole reply (bidi.js, controls.js): 87,000 backspaces between letters took seconds
// to lay out. The rest of a word longer than MAX_WORD in a script broken with a dictionary goes
// in a `.long-word` span (long-words.js): 256 KiB of Thai with no space took seconds too.

import { CHAT_MARKED, markTextIn, visibleTextNodes } from './bidi.js';
import { boundTextIn } from './combining-marks.js';
import { breakLongWordsIn } from './long-words.js';
import { MAX_NESTING, parseMarkdown } from './markdown.js';

const INLINE_TAGS = { em: 'em', strong: 'strong', del: 'del' };
/** Elements a block may nest: its containers, a list's item, a table's rows, the inlines. */
const MAX_DEPTH = 2 * MAX_NESTING + 8;

/**
 * Replace the content of `el` with `source` rendered as Markdown; when that fails, with
 * `source` as plain text (`onError` hears why). Returns which of the two it drew.
 * @returns {'markdown'|'plain'}
 */
export function renderMarkdown(el, source, { onError = reportError } = {}) {
  const doc = el.ownerDocument;
  try {
    const fragment = doc.createDocumentFragment();
    for (const block of parseMarkdown(source).children) fragment.append(blockNode(doc, block, false, 1));
    el.replaceChildren(breakLongWordsIn(boundTextIn(markTextIn(fragment, CHAT_MARKED))));
    return 'markdown';
  } catch (error) {
    onError(error);
    el.replaceChildren(...visibleTextNodes(doc, typeof source === 'string' ? source : '', CHAT_MARKED));
    return 'plain';
  }
}

function reportError(error) {
  console.error('A reply could not be drawn as Markdown; it is shown as plain text.', error);
}

function blockNode(doc, block, tight, depth) {
  if (depth > MAX_DEPTH) return doc.createTextNode(textOf(block));
  const blocks = (children, childTight = false) => children.map((child) => blockNode(doc, child, childTight, depth + 1));
  const inlines = (children) => inlineNodes(doc, children, depth + 1);
  switch (block.type) {
    case 'paragraph':
      return tight ? inlineFragment(doc, block.children, depth) : element(doc, 'p', inlines(block.children));
    case 'heading':
      // Reply headings sit under the page's own: h3 and below keep the outline intact.
      return element(doc, `h${Math.min(6, block.level + 2)}`, inlines(block.children));
    case 'code': {
      const code = element(doc, 'code', [doc.createTextNode(block.text)]);
      if (/^[\w+#.-]{1,32}$/.test(block.language)) code.dataset.language = block.language;
      const pre = element(doc, 'pre', [code]);
      pre.tabIndex = 0; // it scrolls sideways: keyboard users can scroll it too
      return pre;
    }
    case 'quote':
      return element(doc, 'blockquote', blocks(block.children));
    case 'list': {
      const list = element(doc, block.ordered ? 'ol' : 'ul',
        block.items.map((item) => element(doc, 'li', blocks(item.children, !block.loose))));
      if (block.ordered && block.start !== 1) list.start = block.start;
      return list;
    }
    case 'hr':
      return doc.createElement('hr');
    case 'table':
      return tableNode(doc, block, depth);
    default:
      return doc.createTextNode('');
  }
}

function tableNode(doc, block, depth) {
  const cell = (tag, children, column) => {
    const el = element(doc, tag, inlineNodes(doc, children, depth + 4));
    if (block.align[column]) el.className = `align-${block.align[column]}`;
    return el;
  };
  const head = element(doc, 'thead', [element(doc, 'tr', block.head.map((children, i) => cell('th', children, i)))]);
  const body = element(doc, 'tbody', block.rows.map((row) => element(doc, 'tr', row.map((children, i) => cell('td', children, i)))));
  const wrapper = element(doc, 'div', [element(doc, 'table', [head, body])]);
  wrapper.className = 'md-table';
  wrapper.tabIndex = 0; // a wide table scrolls inside its wrapper
  return wrapper;
}

function inlineNodes(doc, nodes, depth) {
  return nodes.map((node) => inlineNode(doc, node, depth));
}

function inlineFragment(doc, nodes, depth) {
  return appendAll(doc.createDocumentFragment(), inlineNodes(doc, nodes, depth));
}

function inlineNode(doc, node, depth) {
  if (depth > MAX_DEPTH) return doc.createTextNode(textOf(node));
  const inlines = (children) => inlineNodes(doc, children, depth + 1);
  switch (node.type) {
    case 'text':
      return doc.createTextNode(node.text);
    case 'code':
      return element(doc, 'code', [doc.createTextNode(node.text)]);
    case 'br':
      return doc.createElement('br');
    case 'group':
      return inlineFragment(doc, node.children, depth);
    case 'link': {
      const a = element(doc, 'a', inlines(node.children));
      a.href = node.href;
      a.rel = 'noopener noreferrer';
      a.target = '_blank';
      if (node.title) a.title = node.title;
      return a;
    }
    default:
      return INLINE_TAGS[node.type] ? element(doc, INLINE_TAGS[node.type], inlines(node.children)) : doc.createTextNode('');
  }
}

/** The text of a tree, read with a stack of its own (the tree may be deeper than the call stack). */
function textOf(root) {
  const parts = [];
  const pending = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node?.text === 'string') parts.push(node.text);
    else if (node?.type === 'br') parts.push('\n');
    const children = [...(node?.children ?? []), ...(node?.items ?? []), ...(node?.head ?? []).flat(), ...(node?.rows ?? []).flat(2)];
    for (let i = children.length - 1; i >= 0; i -= 1) pending.push(children[i]);
  }
  return parts.join('');
}

function element(doc, tag, children) {
  return appendAll(doc.createElement(tag), children);
}

/** One by one: a reply may have more nodes than a call may take arguments. */
function appendAll(parent, children) {
  for (const child of children) parent.append(child);
  return parent;
}
