// Unit tests of how bidi controls are shown: every control becomes a marker, the text is kept.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { MAX_MARKERS, bidiMarker, hasBidiControl, markedPieces, runMarker, shownParts } from '../bidi.js';

const CONTROLS = ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e',
  '\u2066', '\u2067', '\u2068', '\u2069'];

describe('bidi controls', () => {
  test('each explicit formatting character and mark is a control, with a marker and a name', () => {
    for (const control of CONTROLS) {
      assert.equal(hasBidiControl(`a${control}b`), true, bidiMarker(control));
      const [, piece] = markedPieces(`a${control}b`);
      assert.equal(piece.text, control);
      assert.equal(piece.marker, bidiMarker(control));
      assert.match(piece.title, /^[A-Z -]+ \(a bidi control, shown instead of applied\)$/);
    }
    assert.equal(bidiMarker('\u202e'), '⟨U+202E⟩');
    assert.equal(bidiMarker('\u061c'), '⟨U+061C⟩');
  });

  test('text without controls is one piece; other format characters are not controls', () => {
    assert.equal(hasBidiControl('cat txt.exe \u200b\u200d\u05d0\u0627'), false);
    assert.deepEqual(markedPieces('cat txt.exe'), [{ text: 'cat txt.exe', marker: null, title: null }]);
    assert.deepEqual(markedPieces(''), []);
  });

  test('an override is cut out on its own, and the pieces join back to the real text', () => {
    const command = 'cat \u202etxt.exe\u202c && ls\u2067\u2069';
    const pieces = markedPieces(command);
    assert.deepEqual(pieces.map((p) => p.marker ?? p.text),
      ['cat ', '⟨U+202E⟩', 'txt.exe', '⟨U+202C⟩', ' && ls', '⟨U+2067 U+2069⟩']);
    assert.equal(pieces.map((p) => p.text).join(''), command);
  });

  test('a run of controls is one marker that says how many', () => {
    assert.deepEqual(markedPieces('\u202e\u202e').map((p) => p.marker), ['⟨U+202E ×2⟩']);
    const run = '\u202e'.repeat(20_000);
    const pieces = markedPieces(`a${run}b`);
    assert.deepEqual(pieces.map((p) => p.marker ?? p.text), ['a', '⟨U+202E ×20000⟩', 'b']);
    assert.equal(pieces[1].text, run, 'the piece keeps the real text');
    assert.match(pieces[1].title, /^20000 characters, shown instead of applied: RIGHT-TO-LEFT OVERRIDE ×20000$/);
  });

  test('a run of many kinds lists the first few and counts them all', () => {
    assert.equal(runMarker('\u202e\u202e\u2066\u202c').marker, '⟨U+202E ×2 U+2066 U+202C⟩');
    const { marker, title } = runMarker('\u202e\u202d'.repeat(10_000));
    assert.equal(marker, '⟨U+202E U+202D U+202E U+202D … 20000 in all⟩');
    assert.match(title, /^20000 characters, .*RIGHT-TO-LEFT OVERRIDE, LEFT-TO-RIGHT OVERRIDE, .*, …$/);
  });

  test('one text draws at most MAX_MARKERS markers, says so once, and writes the rest as text', () => {
    const text = 'a\u202e'.repeat(1_000);
    const parts = shownParts(text);
    assert.equal(parts.filter((p) => p.kind === 'marker').length, MAX_MARKERS);
    assert.equal(parts.filter((p) => p.kind === 'limit').length, 1);
    assert.ok(parts.length <= 2 * MAX_MARKERS + 3, `${parts.length} parts`); // text around each, the note
    const [last] = parts.slice(-1);
    assert.equal(last.kind, 'text');
    const rest = 1_000 - MAX_MARKERS - 1; // after the note's own marker
    assert.equal(last.text, `<U+202E>${'a<U+202E>'.repeat(rest)}`, 'past the bound, markers as (ASCII) text');
    assert.ok(parts.every((p) => !hasBidiControl(p.text)), 'no control is drawn as itself');
  });

  test('parts are text only without a control, and none for empty text', () => {
    assert.deepEqual(shownParts('ls -la'), [{ kind: 'text', text: 'ls -la' }]);
    assert.deepEqual(shownParts(''), []);
  });
});
