// Unit tests of the invisible characters a command or a working directory shows as markers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { BIDI_CONTROLS, markedPieces, shownParts } from '../bidi.js';
import { COMMAND_MARKED } from '../invisibles.js';

const INVISIBLES = {
  '\u200b': ['⟨U+200B⟩', 'ZERO WIDTH SPACE'],
  '\u200c': ['⟨U+200C⟩', 'ZERO WIDTH NON-JOINER'],
  '\u200d': ['⟨U+200D⟩', 'ZERO WIDTH JOINER'],
  '\u2060': ['⟨U+2060⟩', 'WORD JOINER'],
  '\u2061': ['⟨U+2061⟩', 'FUNCTION APPLICATION'],
  '\u2062': ['⟨U+2062⟩', 'INVISIBLE TIMES'],
  '\u2063': ['⟨U+2063⟩', 'INVISIBLE SEPARATOR'],
  '\u2064': ['⟨U+2064⟩', 'INVISIBLE PLUS'],
  '\ufeff': ['⟨U+FEFF⟩', 'ZERO WIDTH NO-BREAK SPACE'],
  '\u00ad': ['⟨U+00AD⟩', 'SOFT HYPHEN'],
  '\u2028': ['⟨U+2028⟩', 'LINE SEPARATOR'],
  '\u2029': ['⟨U+2029⟩', 'PARAGRAPH SEPARATOR'],
  '\u{e0000}': ['⟨U+E0000⟩', 'TAG CHARACTER'],
  '\u{e0001}': ['⟨U+E0001⟩', 'LANGUAGE TAG'],
  '\u{e0061}': ['⟨U+E0061⟩', "TAG 'a'"],
  '\u{e007f}': ['⟨U+E007F⟩', 'CANCEL TAG'],
  '\r': ['⟨U+000D⟩', 'CARRIAGE RETURN'],
  '\x1b': ['⟨U+001B⟩', 'ESCAPE'],
  '\x00': ['⟨U+0000⟩', 'NULL'],
  '\x9b': ['⟨U+009B⟩', 'CONTROL CHARACTER'],
  '\u202e': ['⟨U+202E⟩', 'RIGHT-TO-LEFT OVERRIDE'],
};

describe('invisible characters in a command', () => {
  test('each is a marker naming it, and the pieces join back to the real text', () => {
    for (const [char, [marker, name]] of Object.entries(INVISIBLES)) {
      const command = `rm -rf /tmp/x${char} y`;
      const pieces = markedPieces(command, COMMAND_MARKED);
      assert.deepEqual(pieces.map((p) => p.marker ?? p.text), ['rm -rf /tmp/x', marker, ' y'], name);
      assert.ok(pieces[1].title.startsWith(name), pieces[1].title);
      assert.equal(pieces.map((p) => p.text).join(''), command);
    }
  });

  test('a run of tag characters is one marker, spelled out in its tooltip', () => {
    const hidden = [...'hi'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
    const [, piece] = markedPieces(`echo ok${hidden}`, COMMAND_MARKED);
    assert.equal(piece.marker, '⟨U+E0068 U+E0069⟩');
    assert.match(piece.title, /TAG 'h', TAG 'i'/);
  });

  test('a carriage return is marked only when it ends no line; tab and line feed show as they are', () => {
    assert.deepEqual(markedPieces('a\r\nb\tc\nd', COMMAND_MARKED).map((p) => p.marker), [null]);
    assert.deepEqual(markedPieces('rm -rf ~\rls', COMMAND_MARKED).map((p) => p.marker ?? p.text),
      ['rm -rf ~', '⟨U+000D⟩', 'ls']);
    assert.deepEqual(markedPieces('ls\r', COMMAND_MARKED).map((p) => p.marker ?? p.text), ['ls', '⟨U+000D⟩']);
  });

  test('letters of any script are not marked, and nothing marked is drawn as itself', () => {
    const command = 'cp "résumé.txt" /srv/א/中文/ørsted-😀';
    assert.deepEqual(shownParts(command, COMMAND_MARKED), [{ kind: 'text', text: command }]);
    const hostile = Object.keys(INVISIBLES).join('x');
    for (const part of shownParts(hostile, COMMAND_MARKED)) {
      assert.equal(COMMAND_MARKED.any.test(part.text), false, part.text);
    }
  });

  test('titles and the other texts still mark bidi controls only', () => {
    assert.equal(BIDI_CONTROLS.any.test('👩\u200d💻 \u200b\ufeff'), false);
  });
});
