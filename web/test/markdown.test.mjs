// Unit tests of the Markdown tree: ordinary Markdown renders, hostile input stays inert.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { MAX_NESTING, MAX_TABLE_CELLS, WORK_PER_CHARACTER, parseInline, parseMarkdown, safeHref, workBudget } from '../markdown.js';

const blocks = (source) => parseMarkdown(source).children;
/** Inline nodes as compact strings: text as is, elements as `<type>...</type>`. */
const flat = (nodes) => nodes.map((node) => {
  if (node.type === 'text') return node.text;
  if (node.type === 'br') return '<br>';
  if (node.type === 'code') return `<code>${node.text}</code>`;
  if (node.type === 'link') return `<a ${node.href}>${flat(node.children)}</a>`;
  if (node.type === 'group') return flat(node.children);
  return `<${node.type}>${flat(node.children)}</${node.type}>`;
}).join('');
const inline = (text) => flat(parseInline(text));
/** Every href anywhere in the tree. */
const hrefs = (value) => JSON.stringify(value).match(/"href":"[^"]*"/g) ?? [];

describe('ordinary Markdown renders', () => {
  test('emphasis, strong, strikethrough and code spans', () => {
    assert.equal(inline('a *b* _c_ **d** __e__ ~~f~~ `g`'), 'a <em>b</em> <em>c</em> <strong>d</strong> <strong>e</strong> <del>f</del> <code>g</code>');
    assert.equal(inline('**bold *and em* inside**'), '<strong>bold <em>and em</em> inside</strong>');
    assert.equal(inline('`` a ` b ``'), '<code>a ` b</code>');
  });

  test('what is not emphasis stays text', () => {
    assert.equal(inline('snake_case_name and 2 * 3 * 4'), 'snake_case_name and 2 * 3 * 4');
    assert.equal(inline('**unclosed'), '**unclosed');
    assert.equal(inline('\\*not em\\*'), '*not em*');
    assert.equal(inline('`*not em*`'), '<code>*not em*</code>');
  });

  test('links, autolinks and bare URLs', () => {
    assert.equal(inline('[docs](https://example.com/a_b "Title")'), '<a https://example.com/a_b>docs</a>');
    assert.equal(inline('see <https://example.com> or <dev@example.com>'),
      'see <a https://example.com/>https://example.com</a> or <a mailto:dev@example.com>dev@example.com</a>');
    assert.equal(inline('at https://example.com/x.'), 'at <a https://example.com/x>https://example.com/x</a>.');
    assert.equal(parseInline('[t](https://e.x "the title")')[0].title, 'the title');
  });

  test('hard line breaks and soft ones', () => {
    assert.equal(inline('one  \ntwo\\\nthree\nfour'), 'one<br>two<br>three\nfour');
  });

  test('entities decode in text, not in code', () => {
    assert.equal(inline('a &amp; b &lt; c &#65; `&amp;`'), 'a & b < c A <code>&amp;</code>');
  });

  test('headings, ATX and setext', () => {
    const [h1, h2, h3] = blocks('# One #\nTwo\n---\n### Three');
    assert.deepEqual([h1.level, flat(h1.children)], [1, 'One']);
    assert.deepEqual([h2.level, flat(h2.children)], [2, 'Two']);
    assert.deepEqual([h3.level, flat(h3.children)], [3, 'Three']);
  });

  test('fenced code keeps its text verbatim, with its language', () => {
    const [code, after] = blocks('```python\ndef f():\n    return "<b>*x*</b>"\n```\nafter');
    assert.deepEqual(code, { type: 'code', language: 'python', text: 'def f():\n    return "<b>*x*</b>"' });
    assert.equal(flat(after.children), 'after');
    assert.equal(blocks('~~~\nunclosed\n')[0].text, 'unclosed\n');
  });

  test('bullet and ordered lists, nested, tight and loose', () => {
    const [bullets, numbers] = blocks('- a\n- b\n  - nested\n\n3. three\n4. four');
    assert.equal(bullets.ordered, false);
    assert.equal(bullets.loose, false);
    assert.equal(bullets.items.length, 2);
    assert.equal(bullets.items[1].children[1].type, 'list');
    assert.equal(numbers.ordered, true);
    assert.equal(numbers.start, 3);
    assert.equal(blocks('- a\n\n- b')[0].loose, true);
  });

  test('a list item continues over indented and lazy lines', () => {
    const [list] = blocks('1. first line\n   second line\nlazy line\n2. next');
    assert.equal(flat(list.items[0].children[0].children), 'first line\nsecond line\nlazy line');
    assert.equal(list.items.length, 2);
  });

  test('block quotes and thematic breaks', () => {
    const [quote, rule, para] = blocks('> quoted *text*\n> more\n\n***\n\nend');
    assert.equal(quote.type, 'quote');
    assert.equal(flat(quote.children[0].children), 'quoted <em>text</em>\nmore');
    assert.equal(rule.type, 'hr');
    assert.equal(para.type, 'paragraph');
  });

  test('tables with alignment, escaped pipes and short rows', () => {
    const [table] = blocks('| name | size | note |\n|:---|---:|:-:|\n| `a\\|b` | 1 KiB |\n| c | 2 | **x** |');
    assert.equal(table.type, 'table');
    assert.deepEqual(table.align, ['left', 'right', 'center']);
    assert.deepEqual(table.head.map(flat), ['name', 'size', 'note']);
    assert.deepEqual(table.rows.map((row) => row.map(flat)), [['<code>a|b</code>', '1 KiB', ''], ['c', '2', '<strong>x</strong>']]);
  });

  test('a paragraph is interrupted by a list, a heading or a fence', () => {
    const kinds = blocks('text\n- item\n# head\n```\ncode\n```').map((b) => b.type);
    assert.deepEqual(kinds, ['paragraph', 'list', 'heading', 'code']);
    assert.deepEqual(blocks('year\n2026. was good').map((b) => b.type), ['paragraph']);
  });
});

describe('hostile input stays inert', () => {
  test('raw HTML is text', () => {
    const tree = parseMarkdown('<script>alert(1)</script>\n\n<img src=x onerror=alert(1)> <a href="javascript:x">y</a>');
    assert.deepEqual(tree.children.map((b) => flat(b.children)), [
      '<script>alert(1)</script>', '<img src=x onerror=alert(1)> <a href="javascript:x">y</a>',
    ]);
    assert.deepEqual(hrefs(tree), []);
  });

  test('script, data and other schemes never become links, however spelled', () => {
    const tree = parseMarkdown([
      '[a](javascript:alert(1))', '[b](JaVaScRiPt:alert(1))', '[c](java\tscript:alert(1))',
      '[d](&#106;avascript:alert(1))', '[e](data:text/html,<script>alert(1)</script>)',
      '[f](vbscript:x)', '[g](/relative)', '[h](//evil.example)', '<javascript:alert(1)>',
      '[i]( javascript:alert(1) )', '[j](file:///etc/passwd)',
    ].join('\n\n'));
    assert.deepEqual(hrefs(tree), []);
    assert.equal(flat(tree.children[0].children), 'a');
  });

  test('images show their alt text and load nothing', () => {
    const tree = parseMarkdown('![a cat](https://example.com/cat.png)');
    assert.equal(flat(tree.children[0].children), 'a cat');
    assert.deepEqual(hrefs(tree), []);
  });

  test('safeHref keeps only absolute http, https and mailto', () => {
    assert.equal(safeHref('https://example.com/a?b#c'), 'https://example.com/a?b#c');
    assert.equal(safeHref('mailto:dev@example.com'), 'mailto:dev@example.com');
    for (const bad of ['javascript:alert(1)', ' javascript:1', 'data:,x', 'ftp://x', '/x', '', null]) {
      assert.equal(safeHref(bad), null, String(bad));
    }
  });

  test('non-string input is an empty document', () => {
    assert.deepEqual(parseMarkdown(undefined).children, []);
    assert.deepEqual(parseMarkdown({ toString: () => '# x' }).children, []);
  });
});

describe('hostile input costs no more than ordinary input', () => {
  const KIB_256 = 256 * 1024;
  // Steps per character do not depend on the size when the parser is linear; 64 KiB keeps the
  // tests quick and would still show a quadratic parser taking thousands of steps per character.
  const fill = (unit, size = 64 * 1024) => unit.repeat(Math.floor(size / unit.length));
  /** How deep containers (quotes, lists) nest in a block tree. */
  const containerDepth = (nodes) => {
    let deepest = 0;
    for (const node of nodes) {
      if (node.type === 'quote') deepest = Math.max(deepest, 1 + containerDepth(node.children));
      if (node.type === 'list') deepest = Math.max(deepest, 1 + Math.max(0, ...node.items.map((item) => containerDepth(item.children))));
    }
    return deepest;
  };
  /** How deep inline nodes nest. */
  const inlineDepth = (nodes) => Math.max(0, ...nodes.map((node) => (node.children ? 1 + inlineDepth(node.children) : 0)));
  /** The innermost blocks, following the first child of each container. */
  const innermost = (nodes) => {
    const [first] = nodes;
    if (first?.type === 'quote') return innermost(first.children);
    if (first?.type === 'list') return innermost(first.items[0].children);
    return nodes;
  };

  test('quotes and lists nest at most MAX_NESTING deep; deeper markers are text', () => {
    for (const source of ['>'.repeat(6000) + ' deep', '- '.repeat(6000) + 'deep', '> - '.repeat(3000) + 'deep']) {
      const tree = blocks(source);
      assert.equal(containerDepth(tree), MAX_NESTING);
      const [paragraph] = innermost(tree);
      assert.equal(paragraph.type, 'paragraph');
      assert.match(flat(paragraph.children), /^[->\s]+deep$/);
    }
    assert.equal(containerDepth(blocks('> '.repeat(MAX_NESTING) + 'x')), MAX_NESTING); // up to the cap, as before
  });

  test('emphasis and links nest at most MAX_NESTING deep; deeper delimiters stay text', () => {
    const emphasis = parseInline('*a '.repeat(5000) + 'b' + ' a*'.repeat(5000));
    assert.equal(inlineDepth(emphasis), MAX_NESTING);
    assert.equal(flat(emphasis).replace(/<\/?em>/g, '').length, 5000 * 6 + 1 - 2 * MAX_NESTING);
    const images = parseInline('!['.repeat(5000) + 'x' + '](https://e.x/i.png)'.repeat(5000));
    assert.ok(inlineDepth(images) <= MAX_NESTING);
    assert.deepEqual(hrefs(images), []);
  });

  // Each of these kept the old parser busy for minutes, or threw: every opener scanned the rest.
  const WORST_CASES = {
    'underscore openers': fill('a _'),
    'star openers': fill('a *'),
    'strong openers': fill('**a'),
    'unclosed brackets': fill('['),
    'unclosed images': fill('!['),
    'brackets with a bad target': fill('[a]('),
    'titles that never close': fill('[](u ('),
    'quoted titles that never close': fill('[](u "'),
    'closers without openers': fill('a_ b* c]'),
    'backtick runs of every length': Array.from({ length: 700 }, (_, k) => '`'.repeat(k + 1) + 'a').join(''),
    'nested emphasis': fill('*a ') + fill(' a*'),
    'nested brackets': fill('[') + fill('](https://e.x)'),
    'a mix of openers': fill('*_~~[`<!'),
    'autolinks that never close': fill('<http:a'),
    'bare URLs inside brackets': fill('[http://a.b]'),
    'hard breaks': fill('a  \n'),
  };

  test('a reply takes a few steps per character, whatever it holds', () => {
    for (const [name, source] of Object.entries(WORST_CASES)) {
      const budget = workBudget(Infinity);
      parseMarkdown(source, { budget });
      assert.ok(budget.spent <= 4 * source.length, `${name}: ${budget.spent} steps for ${source.length} characters`);
    }
  });

  test('a 256 KiB reply of the worst kinds stays inside its default budget', () => {
    for (const source of [fill('a _', KIB_256), fill('[', KIB_256), fill('*a ', KIB_256 / 2) + fill(' a*', KIB_256 / 2)]) {
      const budget = workBudget(Infinity);
      parseMarkdown(source, { budget });
      assert.ok(budget.spent < WORK_PER_CHARACTER * source.length);
    }
  });

  test('a message draws at most MAX_TABLE_CELLS table cells; the rows past them are text', () => {
    // Every row gets as many cells as the header, even a row holding only `|`: 24 KB of this
    // drew 16 million cells, and the page never finished loading.
    const width = 4000;
    const source = `${'a|'.repeat(width)}\n${'-|'.repeat(width)}\n${'|\n'.repeat(width)}`;
    const [table, ...rest] = blocks(source);
    assert.equal(table.type, 'table');
    assert.ok((table.rows.length + 1) * table.head.length <= MAX_TABLE_CELLS);
    assert.deepEqual(rest.map((block) => block.type), ['paragraph']);
    // Later tables of the same message share the allowance.
    const narrow = '| a | b |\n|---|---|\n| 1 | 2 |\n';
    const many = blocks(`${narrow}\n`.repeat(MAX_TABLE_CELLS / 4));
    assert.equal(many.filter((block) => block.type === 'table').length, MAX_TABLE_CELLS / 4);
    const tooMany = blocks(`${narrow}\n`.repeat(MAX_TABLE_CELLS / 4 + 1));
    assert.equal(tooMany.filter((block) => block.type === 'table').length, MAX_TABLE_CELLS / 4);
    assert.equal(tooMany.at(-1).type, 'paragraph');
  });

  test('an ordinary reply stays well inside its own budget', () => {
    const budget = workBudget(Infinity);
    const source = fill('Some **bold**, `code`, a [link](https://e.x/a_b) and *em*.\n\n- item _one_\n- item ~~two~~\n\n');
    parseMarkdown(source, { budget });
    assert.ok(budget.spent < 2 * source.length, `${budget.spent} steps for ${source.length} characters`);
  });

  test('once the budget is spent the rest of the reply is plain text', () => {
    const source = '*a* '.repeat(50);
    const [paragraph] = parseMarkdown(`${source}\n\n# *later*`, { budget: workBudget(40) }).children.map((b) => b);
    const drawn = flat(paragraph.children);
    assert.match(drawn, /^<em>a<\/em> /);
    assert.ok(drawn.endsWith('*a* *a* '), drawn);
    const later = parseMarkdown(`${source}\n\n# *later*`, { budget: workBudget(40) }).children[1];
    assert.equal(flat(later.children), '*later*');
  });

  // Line patterns that backtracked over a run of spaces took minutes on one long line. These
  // finish in milliseconds; the timeout only turns a regression into a failure, not a hang.
  test('a line of spaces is read once by every line pattern', { timeout: 60_000 }, () => {
    const spaces = ' '.repeat(KIB_256);
    assert.equal(blocks(`#${spaces}x`)[0].type, 'heading');
    assert.equal(blocks(`\`\`\`${spaces}x\`\ncode`)[0].type, 'paragraph');
    assert.equal(blocks(`~~~${spaces}x\ncode\n~~~`)[0].language, 'x');
    assert.equal(blocks(`a|b\n${spaces}x`)[0].type, 'paragraph');
    assert.equal(blocks(`[a](u${spaces}x`)[0].type, 'paragraph');
    assert.equal(inline(`\` a${spaces}b \``), `<code>a${spaces}b</code>`);
  });
});

describe('what the linear parser keeps from CommonMark', () => {
  test('emphasis follows the delimiter-run rules', () => {
    assert.equal(inline('***both***'), '<em><strong>both</strong></em>');
    assert.equal(inline('*foo**bar**baz*'), '<em>foo<strong>bar</strong>baz</em>');
    assert.equal(inline('**"quoted"** and *(paren)*'), '<strong>"quoted"</strong> and <em>(paren)</em>');
    assert.equal(inline('snake_case_name and a * b*'), 'snake_case_name and a * b*');
    assert.equal(inline('~~a~~ ~b~ ~~~c~~~'), '<del>a</del> ~b~ ~~~c~~~');
  });

  test('a link takes precedence over emphasis that crosses it, and links do not nest', () => {
    assert.equal(inline('*[a*](https://e.x)'), '*<a https://e.x/>a*</a>');
    assert.equal(inline('[https://e.x](https://e.x)'), '<a https://e.x/>https://e.x</a>');
    assert.equal(inline('[a [b] c](https://e.x/(d))'), '<a https://e.x/(d)>a [b] c</a>');
    assert.equal(inline('[`]`](https://e.x)'), '<a https://e.x/><code>]</code></a>');
  });

  test('bare URLs keep their underscores and stars, and end before trailing punctuation', () => {
    assert.equal(inline('see https://e.x/__init__.py, or (https://e.x/a_b*c).'),
      'see <a https://e.x/__init__.py>https://e.x/__init__.py</a>, or (<a https://e.x/a_b*c>https://e.x/a_b*c</a>).');
  });
});
