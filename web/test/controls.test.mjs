// Unit tests of C0 and C1 control characters in the texts the page draws: every text shows them
// as markers (but tab and line feed), chat text too, and a run of them is one marker.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  BIDI_CONTROLS, CHAT_MARKED, MAX_MARKERS, TEXT_MARKED, markTextIn, markedPieces, markerCount, shownParts,
  visibleTextNodes,
} from '../bidi.js';
import { CONTROL_RANGES } from '../controls.js';
import { COMMAND_MARKED } from '../invisibles.js';
import { LONG_WORD_CLASS, MAX_WORD } from '../long-words.js';
import { renderMarkdown } from '../markdown-dom.js';
import { fakeDocument } from './fake-document.mjs';

/** Every control the page marks: C0 but tab and line feed, DELETE, C1 (a bare CR aside). */
const CONTROLS = [];
for (let code = 0; code <= 0x9f; code += 1) {
  if (code === 0x09 || code === 0x0a || code === 0x0d || (code >= 0x20 && code < 0x7f)) continue;
  CONTROLS.push(String.fromCharCode(code));
}
const hex = (char) => `U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

describe('control characters', () => {
  test('every C0 and C1 control but tab and line feed is a marker naming it, in every text and in chat text', () => {
    assert.equal(CONTROLS.length, 32 - 3 + 1 + 32); // C0 but tab, LF and CR; DELETE; C1
    for (const set of [TEXT_MARKED, CHAT_MARKED, COMMAND_MARKED]) {
      for (const control of CONTROLS) {
        const pieces = markedPieces(`a${control}b`, set);
        assert.deepEqual(pieces.map((p) => p.marker ?? p.text), ['a', `⟨${hex(control)}⟩`, 'b'], hex(control));
        assert.match(pieces[1].title, /^[A-Z ]+ \(a control character, shown instead of applied\)$/);
      }
      assert.deepEqual(markedPieces('a\tb\nc\r\nd', set).map((p) => p.marker), [null]);
      assert.deepEqual(markedPieces('a\rb', set).map((p) => p.marker ?? p.text), ['a', '⟨U+000D⟩', 'b']);
    }
    assert.match(markedPieces('\b', CHAT_MARKED)[0].title, /^BACKSPACE/);
    assert.match(markedPieces('\x85', CHAT_MARKED)[0].title, /^NEXT LINE/);
    assert.match(markedPieces('\x1b', CHAT_MARKED)[0].title, /^ESCAPE/);
    assert.match(markedPieces('\x7f', CHAT_MARKED)[0].title, /^DELETE/);
    assert.ok(CONTROL_RANGES.every((range) => Object.isFrozen(CONTROL_RANGES) && range.what === 'a control character'));
  });

  test('chat text keeps its bidi controls and joiners; titles mark bidi controls and controls, not joiners', () => {
    const prose = 'שלום \u200f(1)\u200f, نص\u061c و 👩\u200d💻 \u200b\u2060 क्‍ष';
    assert.deepEqual(shownParts(prose, CHAT_MARKED), [{ kind: 'text', text: prose }]);
    assert.deepEqual(markedPieces('a\u202eb\u200dc', TEXT_MARKED).map((p) => p.marker ?? p.text), ['a', '⟨U+202E⟩', 'b\u200dc']);
    assert.equal(BIDI_CONTROLS.any.test('\b'), false, 'the bidi set alone is unchanged');
  });

  test('a run of 87,000 backspaces is one marker that counts them', () => {
    const text = `x${'\b'.repeat(87_000)}y`;
    const parts = shownParts(text, CHAT_MARKED);
    assert.deepEqual(parts.map((p) => p.text), ['x', '⟨U+0008 ×87000⟩', 'y']);
    assert.match(parts[1].title, /^87000 characters, shown instead of applied: BACKSPACE ×87000$/);
  });

  test('past MAX_MARKERS the markers of one text are written into it, counted across the texts drawn together', () => {
    const count = markerCount();
    const first = shownParts('a\b'.repeat(150), CHAT_MARKED, count);
    const second = shownParts('a\b'.repeat(150), CHAT_MARKED, count);
    const markers = [...first, ...second].filter((p) => p.kind === 'marker').length;
    assert.equal(markers, MAX_MARKERS);
    assert.equal(second.filter((p) => p.kind === 'limit').length, 1);
    assert.equal(second.at(-1).text.endsWith('a<U+0008>'.repeat(99)), true);
    assert.ok([...first, ...second].every((p) => !CHAT_MARKED.any.test(p.text)), 'no control drawn as itself');
  });
});

describe('control characters in the DOM', () => {
  test('markTextIn marks a tree in place, its markers counted across its text nodes', () => {
    const doc = fakeDocument();
    const p = doc.createElement('p');
    const em = doc.createElement('em');
    em.append(doc.createTextNode('a\b'.repeat(150)));
    const code = doc.createElement('code');
    code.append(doc.createTextNode(`\x1b[31m${'a\b'.repeat(150)}`));
    p.append(doc.createTextNode('x\b\b\by '), em, code);
    markTextIn(p, CHAT_MARKED);
    assert.equal(p.childNodes[1].className, 'bidi-control');
    assert.equal(p.childNodes[1].textContent, '⟨U+0008 ×3⟩');
    assert.equal(p.childNodes[1].dir, 'ltr', 'an element dir=auto skips it');
    assert.equal(p.withClass('bidi-control').length, MAX_MARKERS + 1, 'the markers and the note');
    assert.equal(p.withClass('bidi-control--limit').length, 1);
    assert.equal(CHAT_MARKED.any.test(p.textContent), false);
    assert.ok(code.textContent.endsWith('a<U+0008>'), code.textContent.slice(-20));
  });

  test('a reply draws its controls as markers, in code and emphasis too, and breaks its long words', () => {
    const doc = fakeDocument();
    const el = doc.createElement('div');
    const thai = 'ก'.repeat(3_000);
    const source = `Reply x${'\b'.repeat(87_000)}y\n\n*em\x07* \`code\x1b[0m\`\n\n\`\`\`\nblock\x00\n\`\`\`\n\n${thai}\n\nשלום\u200f.`;
    assert.equal(renderMarkdown(el, source), 'markdown');
    const markers = el.withClass('bidi-control').map((node) => node.textContent);
    assert.deepEqual(markers, ['⟨U+0008 ×87000⟩', '⟨U+0007⟩', '⟨U+001B⟩', '⟨U+0000⟩']);
    assert.equal(CHAT_MARKED.any.test(el.textContent), false);
    assert.ok(el.textContent.includes('שלום\u200f.'), 'a reply keeps its bidi marks');
    const [long] = el.withClass(LONG_WORD_CLASS);
    assert.equal(long.textContent, thai.slice(MAX_WORD));
    // A prompt (plain text) and the plain fallback draw the same.
    const nodes = visibleTextNodes(doc, `x${'\b'.repeat(10)}y ${thai}`, CHAT_MARKED);
    assert.deepEqual(nodes.map((node) => node.className ?? null), [null, 'bidi-control', null, LONG_WORD_CLASS]);
  });

  test('a reply of letters and controls draws MAX_MARKERS markers in all', () => {
    const doc = fakeDocument();
    const el = doc.createElement('div');
    renderMarkdown(el, `${'a\b'.repeat(300)}\n\n${'b\b'.repeat(300)}`);
    assert.equal(el.withClass('bidi-control').length, MAX_MARKERS + 1);
    assert.equal(el.textContent.split('<U+0008>').length - 1, 600 - MAX_MARKERS);
  });
});
