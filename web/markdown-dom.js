// The Markdown tree (markdown.js) as DOM. Only the elements below are ever created, text goes in
// as text nodes, and the only attributes come from the tree's checked values: a link's href
// (absolute http, https or mailto, checked by markdown.js), its title, a table cell's alignment
// class and a code block's language.

import { parseMarkdown } from './markdown.js';

const INLINE_TAGS = { em: 'em', strong: 'strong', del: 'del' };

/** Replace the content of `el` with `source` rendered as Markdown. */
export function renderMarkdown(el, source) {
  const doc = el.ownerDocument;
  const fragment = doc.createDocumentFragment();
  for (const block of parseMarkdown(source).children) fragment.append(blockNode(doc, block));
  el.replaceChildren(fragment);
}

function blockNode(doc, block, tight = false) {
  switch (block.type) {
    case 'paragraph':
      return tight ? inlineFragment(doc, block.children) : element(doc, 'p', inlineNodes(doc, block.children));
    case 'heading':
      // Reply headings sit under the page's own: h3 and below keep the outline intact.
      return element(doc, `h${Math.min(6, block.level + 2)}`, inlineNodes(doc, block.children));
    case 'code': {
      const code = element(doc, 'code', [doc.createTextNode(block.text)]);
      if (/^[\w+#.-]{1,32}$/.test(block.language)) code.dataset.language = block.language;
      const pre = element(doc, 'pre', [code]);
      pre.tabIndex = 0; // it scrolls sideways: keyboard users can scroll it too
      return pre;
    }
    case 'quote':
      return element(doc, 'blockquote', block.children.map((child) => blockNode(doc, child)));
    case 'list': {
      const list = element(doc, block.ordered ? 'ol' : 'ul',
        block.items.map((item) => element(doc, 'li', item.children.map((child) => blockNode(doc, child, !block.loose)))));
      if (block.ordered && block.start !== 1) list.start = block.start;
      return list;
    }
    case 'hr':
      return doc.createElement('hr');
    case 'table':
      return tableNode(doc, block);
    default:
      return doc.createTextNode('');
  }
}

function tableNode(doc, block) {
  const cell = (tag, children, column) => {
    const el = element(doc, tag, inlineNodes(doc, children));
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

function inlineNodes(doc, nodes) {
  return nodes.map((node) => inlineNode(doc, node));
}

function inlineFragment(doc, nodes) {
  const fragment = doc.createDocumentFragment();
  fragment.append(...inlineNodes(doc, nodes));
  return fragment;
}

function inlineNode(doc, node) {
  switch (node.type) {
    case 'text':
      return doc.createTextNode(node.text);
    case 'code':
      return element(doc, 'code', [doc.createTextNode(node.text)]);
    case 'br':
      return doc.createElement('br');
    case 'group':
      return inlineFragment(doc, node.children);
    case 'link': {
      const a = element(doc, 'a', inlineNodes(doc, node.children));
      a.href = node.href;
      a.rel = 'noopener noreferrer';
      a.target = '_blank';
      if (node.title) a.title = node.title;
      return a;
    }
    default:
      return INLINE_TAGS[node.type] ? element(doc, INLINE_TAGS[node.type], inlineNodes(doc, node.children)) : doc.createTextNode('');
  }
}

function element(doc, tag, children) {
  const el = doc.createElement(tag);
  el.append(...children);
  return el;
}
