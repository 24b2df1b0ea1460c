// Unit tests of how bidi controls are shown: every control becomes a marker, the text is kept.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { bidiMarker, bidiPieces, hasBidiControl } from '../bidi.js';

const CONTROLS = ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e',
  '\u2066', '\u2067', '\u2068', '\u2069'];

describe('bidi controls', () => {
  test('each explicit formatting character and mark is a control, with a marker and a name', () => {
    for (const control of CONTROLS) {
      assert.equal(hasBidiControl(`a${control}b`), true, bidiMarker(control));
      const [, piece] = bidiPieces(`a${control}b`);
      assert.equal(piece.text, control);
      assert.equal(piece.marker, bidiMarker(control));
      assert.match(piece.name, /^[A-Z -]+$/);
    }
    assert.equal(bidiMarker('\u202e'), '⟨U+202E⟩');
    assert.equal(bidiMarker('\u061c'), '⟨U+061C⟩');
  });

  test('text without controls is one piece; other format characters are not controls', () => {
    assert.equal(hasBidiControl('cat txt.exe \u200b\u200d\u05d0\u0627'), false);
    assert.deepEqual(bidiPieces('cat txt.exe'), [{ text: 'cat txt.exe', marker: null, name: null }]);
    assert.deepEqual(bidiPieces(''), []);
  });

  test('an override is cut out on its own, and the pieces join back to the real text', () => {
    const command = 'cat \u202etxt.exe\u202c && ls\u2067\u2069';
    const pieces = bidiPieces(command);
    assert.deepEqual(pieces.map((p) => p.marker ?? p.text),
      ['cat ', '⟨U+202E⟩', 'txt.exe', '⟨U+202C⟩', ' && ls', '⟨U+2067⟩', '⟨U+2069⟩']);
    assert.equal(pieces.map((p) => p.text).join(''), command);
  });

  test('a string of controls only is all markers', () => {
    assert.deepEqual(bidiPieces('\u202e\u202e').map((p) => p.marker), ['⟨U+202E⟩', '⟨U+202E⟩']);
  });
});
