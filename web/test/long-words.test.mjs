// Unit tests of long words: past MAX_WORD characters without a break, a word holding a character
// of a script Chromium breaks with a dictionary (Thai, Lao, Khmer, Myanmar, the Tai scripts)
// goes on in a `.long-word` span; every other text, and real text in those scripts, is drawn as
// it is.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { visibleTextNodes } from '../bidi.js';
import {
  LONG_WORD_CLASS, MAX_WORD, breakLongWords, breakLongWordsIn, isDictionaryUnit, wordParts, wordState,
} from '../long-words.js';
import { fakeDocument } from './fake-document.mjs';

const THAI = 'ภาษาไทยเป็นภาษาที่ไม่มีการเว้นวรรคระหว่างคำ';
const KO = 'ก'; // a Thai letter with no mark after it: stretches start where the count says
const SCRIPTS = {
  thai: THAI,
  lao: 'ພາສາລາວເປັນພາສາທີ່ບໍ່ມີການຍະຫວ່າງ',
  khmer: 'ភាសាខ្មែរមិនមានដកឃ្លារវាងពាក្យ',
  myanmar: 'မြန်မာဘာသာစကားသည်စကားလုံးများကြား',
  taiTham: '\u1a20\u1a61\u1a26\u1a63\u1a3e',
  newTaiLue: '\u1980\u19b1\u1986\u19b5',
  taiViet: '\uaa80\uaab0\uaa86\uaab5',
  taiLe: '\u1950\u1951\u1952',
  myanmarExtendedA: '\uaa60\uaa61\uaa62',
  myanmarExtendedB: '\ua9e0\ua9e1\ua9e2',
};

/** `unit` repeated to `length` UTF-16 units. */
const word = (unit, length) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
const joined = (parts) => parts.map((part) => part.text).join('');
const kinds = (parts) => parts.map((part) => (part.long ? 'long' : 'text'));

describe('long words', () => {
  test('real text is drawn as it is: prose with spaces, and long words of scripts without a dictionary', () => {
    const texts = {
      thaiProse: Array.from({ length: 400 }, () => THAI).join(' '),
      thaiWordAtTheBound: word(THAI, MAX_WORD),
      latinWord: 'x'.repeat(50_000),
      url: `https://example.com/${'a/'.repeat(5_000)}`,
      chinese: word('中文句子之间通常没有空格', 20_000),
      japanese: word('日本語の文章には単語の間にスペースがありません', 20_000),
      devanagari: word('क्षत्रियस्त्रीहिन्दी', 20_000),
      thaiLinesOfTheBound: Array.from({ length: 50 }, () => word(THAI, MAX_WORD)).join('\n'),
    };
    for (const [name, text] of Object.entries(texts)) {
      assert.deepEqual(wordParts(text), [{ long: false, text }], name);
    }
    assert.deepEqual(wordParts(''), []);
  });

  test('a longer word in any of those scripts goes on in a long stretch after its first MAX_WORD', () => {
    for (const [name, unit] of Object.entries(SCRIPTS)) {
      assert.ok([...unit].some((char) => isDictionaryUnit(char.charCodeAt(0))), name);
      const text = `echo ${word(unit, 87_000)} done`;
      const parts = wordParts(text);
      assert.deepEqual(kinds(parts), ['text', 'long', 'text'], name);
      assert.ok(parts[0].text.length >= 5 + MAX_WORD && parts[0].text.length <= 5 + MAX_WORD + 4, `${name}: ${parts[0].text.length}`);
      assert.equal(parts[2].text, ' done', name);
      assert.equal(joined(parts), text, name);
    }
  });

  test('only spaces, tabs, line ends and the zero-width space end a word', () => {
    for (const separator of [' ', '\t', '\n', '\r', '\f', '\u200b', '\u3000', '\u2002', '\u1680', '\u2028']) {
      const text = Array.from({ length: 5 }, () => word(THAI, 900)).join(separator);
      assert.deepEqual(kinds(wordParts(text)), ['text'], `U+${separator.codePointAt(0).toString(16)}`);
    }
    // What Chromium's line breaker does not break at either: the word goes on.
    for (const glue of ['\u00a0', '\u2007', '\u202f', '\ufeff', '\u200d', '.', '-', '1', 'a', '中']) {
      const text = Array.from({ length: 5 }, () => word(THAI, 900)).join(glue);
      const parts = wordParts(text);
      assert.deepEqual(kinds(parts), ['text', 'long'], `U+${glue.codePointAt(0).toString(16)}`);
      assert.equal(joined(parts), text);
    }
  });

  test('a word holding no such character is never split, whatever its length; one that does from there on', () => {
    const text = `${'x'.repeat(1_500)}${word(THAI, 500)}`;
    const parts = wordParts(text);
    assert.deepEqual(parts, [{ long: false, text: 'x'.repeat(1_500) }, { long: true, text: word(THAI, 500) }]);
  });

  test('every word of a text is measured on its own', () => {
    const long = word(THAI, 3_000);
    const text = `${long} ${word(THAI, 200)} ${long}`;
    const parts = wordParts(text);
    assert.deepEqual(kinds(parts), ['text', 'long', 'text', 'long']);
    assert.equal(parts[1].text.length + MAX_WORD, long.length);
    assert.equal(parts[2].text, ` ${word(THAI, 200)} ${long.slice(0, MAX_WORD)}`);
    assert.equal(joined(parts), text);
  });

  test('a word goes on across the texts drawn together, and a long one stays long', () => {
    const state = wordState();
    const first = wordParts(word(THAI, 600), state);
    const second = wordParts(word(THAI, 600), state);
    const third = wordParts(`${word(THAI, 50)} after`, state);
    assert.deepEqual(kinds(first), ['text']);
    assert.deepEqual(kinds(second), ['text', 'long']);
    assert.equal(second[0].text.length, MAX_WORD - 600);
    assert.deepEqual(third, [{ long: true, text: word(THAI, 50) }, { long: false, text: ' after' }]);
    assert.equal(state.run, 'after'.length);
    assert.equal(state.long, false);
  });

  test('a stretch never starts inside a grapheme cluster or a surrogate pair', () => {
    // Thai marks (U+0E34, U+0E48) and SARA AM (U+0E33) right at the bound stay on their letter.
    const marked = `${'ก'.repeat(MAX_WORD)}\u0e34\u0e48\u0e33ข${'ก'.repeat(100)}`;
    assert.equal(wordParts(marked)[1].text.slice(0, 1), 'ข');
    // An emoji (a pair) and a ZWJ sequence at the bound.
    const emoji = `${'ก'.repeat(MAX_WORD - 2)}\u{1F469}\u200d\u{1F4BB}ข`;
    assert.equal(wordParts(emoji)[1].text, 'ข');
    const pair = `${'ก'.repeat(MAX_WORD)}\u{1F600}ข`;
    assert.equal(wordParts(pair)[1].text, '\u{1F600}ข');
  });
});

describe('long words in the DOM', () => {
  test('a text node left as it is stays the same node; a long word becomes text and a span', () => {
    const doc = fakeDocument();
    const plain = doc.createTextNode(`ls ${word(KO, MAX_WORD)}`);
    assert.equal(breakLongWords(doc, [plain])[0], plain);
    const text = word(KO, 5_000);
    const nodes = breakLongWords(doc, [doc.createTextNode(text)]);
    assert.deepEqual(nodes.map((node) => node.nodeType), [3, 1]);
    assert.equal(nodes[1].className, LONG_WORD_CLASS);
    assert.equal(nodes[1].textContent.length, 5_000 - MAX_WORD);
    assert.equal(nodes.map((node) => node.textContent).join(''), text);
  });

  test('a marker is part of the word, never split', () => {
    const doc = fakeDocument();
    const marker = doc.createElement('span');
    marker.className = 'bidi-control';
    marker.append(doc.createTextNode('⟨U+202E ×3⟩'));
    const nodes = breakLongWords(doc, [doc.createTextNode(word(KO, 980)), marker, doc.createTextNode(word(KO, 100))]);
    assert.equal(nodes[1], marker);
    assert.equal(marker.childNodes.length, 1);
    assert.deepEqual(nodes.slice(2).map((node) => node.className ?? null), [null, LONG_WORD_CLASS]);
    assert.equal(nodes[2].textContent.length, MAX_WORD - 980 - '⟨U+202E ×3⟩'.length);
  });

  test('in a tree a word goes on through emphasis and code, and a block or a line break ends it', () => {
    const doc = fakeDocument();
    const root = doc.createDocumentFragment();
    const p = doc.createElement('p');
    const em = doc.createElement('em');
    em.append(doc.createTextNode(word(KO, 700)));
    const code = doc.createElement('code');
    code.append(doc.createTextNode(word(KO, 700)));
    p.append(doc.createTextNode(word(KO, 700)), em, code);
    const second = doc.createElement('p');
    second.append(doc.createTextNode(word(KO, 700)), doc.createElement('br'), doc.createTextNode(word(KO, 700)));
    root.append(p, second);
    breakLongWordsIn(root);
    const spans = root.withClass(LONG_WORD_CLASS);
    assert.equal(spans.length, 2, 'in the emphasis and in the code');
    assert.equal(em.childNodes[1], spans[0]);
    assert.equal(spans[0].textContent.length, 700 - (MAX_WORD - 700));
    assert.equal(code.childNodes[0], spans[1], 'the code is all past the bound');
    assert.equal(second.withClass(LONG_WORD_CLASS).length, 0, 'a paragraph, then a line break, end the word');
  });

  test('a word split by colours of output is one word (visibleTextNodes with a carried state)', () => {
    const doc = fakeDocument();
    const words = wordState();
    const nodes = [];
    for (let i = 0; i < 10; i += 1) nodes.push(...visibleTextNodes(doc, word(KO, 500), undefined, undefined, words));
    const longs = nodes.filter((node) => node.className === LONG_WORD_CLASS);
    assert.equal(longs.length, 8, 'the first two runs hold the first MAX_WORD');
    assert.equal(nodes.map((node) => node.textContent).join(''), word(KO, 500).repeat(10));
  });
});
