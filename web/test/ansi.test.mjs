// Unit tests of the terminal-output parser: SGR styles, carriage returns, dropped sequences, the
// cursor's right margin, the line as cells (and what hostile input costs), drawing safely.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { CHUNK_LINES, chunkStarts } from '../ansi-dom.js';
import {
  MAX_COLUMN, applySgr, applySgrCodes, createChunkStyles, paletteColour, parseAnsi, plainText, strippedText, styleBefore,
  terminalRuns,
} from '../ansi.js';

const E = '\x1b';
const shown = (text) => plainText(parseAnsi(text));
/** [text, classes, colour, background] per run, for compact assertions. */
const looks = (text) => parseAnsi(text).map(({ text: t, style }) =>
  style === null ? [t] : [t, style.classes, style.colour, style.background]);

describe('plain text', () => {
  test('text without controls is one plain run, unchanged', () => {
    assert.deepEqual(parseAnsi('hello\tworld\n'), [{ text: 'hello\tworld\n', style: null }]);
  });

  test('empty and non-string input give no runs', () => {
    assert.deepEqual(parseAnsi(''), []);
    assert.deepEqual(parseAnsi(undefined), []);
  });

  test('markup stays text: nothing is interpreted as HTML', () => {
    assert.equal(shown(`${E}[31m<img src=x onerror=alert(1)>${E}[0m`), '<img src=x onerror=alert(1)>');
  });
});

describe('SGR', () => {
  test('the 8 colours and their bright variants become classes', () => {
    assert.deepEqual(looks(`${E}[31mred${E}[0m ok ${E}[92mgreen`), [
      ['red', 'ansi-fg-1', null, null], [' ok '], ['green', 'ansi-fg-10', null, null],
    ]);
    assert.deepEqual(looks(`${E}[44;97mx`), [['x', 'ansi-fg-15 ansi-bg-4', null, null]]);
    assert.deepEqual(looks(`${E}[101mx`), [['x', 'ansi-bg-9', null, null]]);
  });

  test('bold, dim, italic, underline and their resets', () => {
    assert.deepEqual(looks(`${E}[1mb${E}[22m${E}[2md${E}[22m${E}[3mi${E}[23m${E}[4mu${E}[24mn`), [
      ['b', 'ansi-bold', null, null], ['d', 'ansi-dim', null, null], ['i', 'ansi-italic', null, null],
      ['u', 'ansi-underline', null, null], ['n'],
    ]);
  });

  test('an empty SGR and 0 reset everything; 39/49 reset one colour', () => {
    assert.deepEqual(looks(`${E}[1;31ma${E}[mb`), [['a', 'ansi-bold ansi-fg-1', null, null], ['b']]);
    assert.deepEqual(looks(`${E}[31;42ma${E}[39mb${E}[49mc`), [
      ['a', 'ansi-fg-1 ansi-bg-2', null, null], ['b', 'ansi-bg-2', null, null], ['c'],
    ]);
  });

  test('256 colours: the first 16 are classes, the cube and greys are computed colours', () => {
    assert.deepEqual(looks(`${E}[38;5;1ma${E}[38;5;196mb${E}[48;5;244mc`), [
      ['a', 'ansi-fg-1', null, null],
      ['b', '', 'rgb(255, 0, 0)', null],
      ['c', '', 'rgb(255, 0, 0)', 'rgb(128, 128, 128)'],
    ]);
    assert.equal(paletteColour(16), 'rgb(0, 0, 0)');
    assert.equal(paletteColour(231), 'rgb(255, 255, 255)');
    assert.equal(paletteColour(232), 'rgb(8, 8, 8)');
    assert.equal(paletteColour(255), 'rgb(238, 238, 238)');
  });

  test('24-bit colour, in semicolon and colon form', () => {
    assert.deepEqual(looks(`${E}[38;2;10;20;30ma${E}[0;48:2::1:2:3mb${E}[38:2:4:5:6mc`), [
      ['a', '', 'rgb(10, 20, 30)', null],
      ['b', '', null, 'rgb(1, 2, 3)'],
      ['c', '', 'rgb(4, 5, 6)', 'rgb(1, 2, 3)'],
    ]);
  });

  test('codes after an extended colour still apply', () => {
    assert.deepEqual(looks(`${E}[38;5;208;1mx`), [['x', 'ansi-bold', 'rgb(255, 135, 0)', null]]);
  });

  test('out-of-range and malformed colours are ignored', () => {
    assert.deepEqual(looks(`${E}[38;5;300ma${E}[38;2;1;2mb${E}[38;9mc`), [['abc']]);
  });

  test('inverse swaps the colours, defaults included', () => {
    assert.deepEqual(looks(`${E}[31;7mx`), [['x', 'ansi-fg-reverse ansi-bg-1', null, null]]);
  });

  test('equal styles merge into one run', () => {
    const runs = parseAnsi(`${E}[31ma${E}[31mb${E}[0;31mc`);
    assert.equal(runs.length, 1);
    assert.equal(runs[0].text, 'abc');
  });

  test('applySgr is pure', () => {
    const before = applySgr({ fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, inverse: false, strike: false }, '1');
    const after = applySgr(before, '0');
    assert.equal(before.bold, true);
    assert.equal(after.bold, false);
  });

  test('applySgrCodes gives what applySgr gives, for the codes split at semicolons and colons', () => {
    const params = '1;38;5;208;48:2::1:2:3;58;2;4;5;6;38;9;4';
    const codes = params.split(';').map((part) => part.split(':'));
    assert.deepEqual(applySgrCodes({}, codes), applySgr({}, params));
  });
});

// The work of one SGR sequence, counted rather than timed: the codes are handed to
// applySgrCodes through a proxy that counts every read of one of them (a copy of the codes
// after a code reads each of them too). Linear work reads each code a bounded number of times
// whatever the sequence's length; copying the rest of the codes at each extended colour read
// some n²/6 of them (one sequence of 37,000 `38;5;1` in 256 KiB took 17 s).
describe('the work of an SGR sequence', () => {
  /** `params` as codes, and how many times a code was read. */
  const counted = (params) => {
    const codes = params.split(';').map((part) => part.split(':'));
    const count = { reads: 0 };
    const proxy = new Proxy(codes, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) count.reads += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    return { codes: proxy, size: codes.length, count };
  };
  const repeated = (unit, times) => Array(times).fill(unit).join(';');

  for (const unit of ['38;5;1', '48;2;1;2;3', '58;5;7', '38;9', '38', '38;5;300;1', '38:5:1', '48:2::1:2:3']) {
    test(`each code is read once however many there are (${unit}, repeated)`, () => {
      for (const times of [10, 1_000, 10_000]) {
        const { codes, size, count } = counted(repeated(unit, times));
        applySgrCodes({}, codes);
        assert.equal(count.reads, size, `${times} times: ${count.reads} reads of ${size} codes`);
      }
    });
  }

  test('a sequence of 37,000 extended colours in 256 KiB takes its last colour', () => {
    const params = repeated('38;5;1', 37_000);
    assert.ok(params.length <= 256 * 1024);
    assert.deepEqual(looks(`${E}[${params};48;5;196mX\n`), [['X', 'ansi-fg-1', null, 'rgb(255, 0, 0)'], ['\n']]);
    assert.equal(applySgr({}, `${repeated('38;2;1;2;3', 20_000)};1`).fg, 'rgb(1, 2, 3)');
  });
});

describe('carriage returns and line editing', () => {
  test('a progress bar ends as its final state', () => {
    assert.equal(shown('[#   ] 25%\r[##  ] 50%\r[####] 100%\ndone\n'), '[####] 100%\ndone\n');
  });

  test('a shorter rewrite overwrites only what it covers, as a terminal does', () => {
    assert.equal(shown('abcdef\rXY'), 'XYcdef');
  });

  test('CRLF is a plain line break', () => {
    assert.equal(shown('one\r\ntwo\r\n'), 'one\ntwo\n');
  });

  test('a trailing carriage return keeps the line', () => {
    assert.equal(shown('50%\r'), '50%');
  });

  test('erase in line: to the end, to the cursor, whole line', () => {
    assert.equal(shown(`long line\r${E}[Kshort`), 'short');
    assert.equal(shown(`abcdef\rabc${E}[0K`), 'abc');
    assert.equal(shown(`abcdef\rabc${E}[1K`), '   def');
    assert.equal(shown(`abcdef${E}[2K\rxy`), 'xy');
  });

  test('column moves (CSI G) and backspace', () => {
    assert.equal(shown(`abcdef${E}[1Gxy`), 'xycdef');
    assert.equal(shown(`abc${E}[5Gz`), 'abc z');
    assert.equal(shown('abc\b\bX'), 'aXc');
  });

  test('a rewrite keeps the styles of what it does not cover', () => {
    assert.deepEqual(looks(`${E}[32mgreen${E}[0m\rRE`), [['RE'], ['een', 'ansi-fg-2', null, null]]);
  });

  test('lines before a rewritten line are untouched', () => {
    assert.equal(shown('first\nsecond 1/3\rsecond 3/3\n'), 'first\nsecond 3/3\n');
  });
});

describe('hostile cursor movement', () => {
  test('a column past the right margin stops at it: one sequence pads at most MAX_COLUMN spaces', () => {
    assert.equal(MAX_COLUMN, 1024);
    const text = `first\nsecond\n${E}[999999999Gx\n`;
    assert.equal(shown(text), `first\nsecond\n${' '.repeat(MAX_COLUMN)}x\n`);
    assert.equal(shown(`${E}[${'9'.repeat(400)}Gy`), `${' '.repeat(MAX_COLUMN)}y`); // Infinity too
    assert.equal(shown(`${E}[${MAX_COLUMN + 1}Gz`), `${' '.repeat(MAX_COLUMN)}z`); // the last column itself
  });

  test('column moves cannot lengthen a line past the margin however often they repeat', () => {
    const line = plainText(parseAnsi(`${E}[99999Ga`.repeat(1000)));
    assert.equal(line, `${' '.repeat(MAX_COLUMN)}a`);
  });

  test('text written past the margin is kept, and a column move brings the cursor back within it', () => {
    const long = 'x'.repeat(MAX_COLUMN + 10);
    assert.equal(shown(`${long}${E}[99999GY`), `${'x'.repeat(MAX_COLUMN)}Y${'x'.repeat(9)}`);
  });

  test('erasing up to a far column pads to the margin only', () => {
    assert.equal(shown(`ab${E}[99999G${E}[1K`), ' '.repeat(MAX_COLUMN));
  });
});

describe('the line as cells', () => {
  test('a rewrite of the first column keeps the many styled runs after it', () => {
    const colourful = Array.from({ length: 6 }, (_, i) => `${E}[3${i % 2}ma`).join('');
    assert.deepEqual(looks(`${colourful}\r${E}[0mb`), [
      ['b'], ['a', 'ansi-fg-1', null, null], ['a', 'ansi-fg-0', null, null], ['a', 'ansi-fg-1', null, null],
      ['a', 'ansi-fg-0', null, null], ['a', 'ansi-fg-1', null, null],
    ]);
  });

  test('a rewrite in the middle of a run splits it, and equal neighbours join again', () => {
    assert.deepEqual(looks(`${E}[32mgreen${E}[0m\b\b\bX${E}[32mE`), [
      ['gr', 'ansi-fg-2', null, null], ['X'], ['En', 'ansi-fg-2', null, null],
    ]);
    assert.deepEqual(looks(`${E}[32mab${E}[0m\r${E}[32mA`), [['Ab', 'ansi-fg-2', null, null]]);
  });

  test('writing past the end of the line pads with plain spaces, then styles what it writes', () => {
    assert.deepEqual(looks(`ab\r${E}[4G${E}[31mz`), [['ab '], ['z', 'ansi-fg-1', null, null]]);
  });

  test('erasing up to the cursor blanks what was written before, not what comes after', () => {
    assert.equal(shown(`abcdef\rab${E}[1KXY`), '  XYef');
    assert.equal(shown(`abcdef${E}[4G${E}[1K\rZ`), 'Z  def');
    assert.deepEqual(looks(`${E}[31mabcdef${E}[3G${E}[1K${E}[0m`), [['  '], ['cdef', 'ansi-fg-1', null, null]]);
  });

  test('a later erasure reaching less far leaves the earlier one in force', () => {
    assert.equal(shown(`abcdef${E}[5G${E}[1K\rxyz${E}[3G${E}[1K`), '  z ef');
  });

  test('erase to the end after a rewrite drops the tail, and text may grow the line again', () => {
    assert.equal(shown(`abcdef\rab${E}[K${E}[5Gz`), 'ab  z');
  });

  // The bound on the work. A linear screen parses each of these in about 0.1 s; rebuilding the
  // line's runs at every rewrite took some 50 s for the first, and blanking the cells eagerly at
  // every erasure would take minutes for the second. The bound sits far from both, so a busy
  // machine does not make it flaky, and a quadratic screen cannot pass it.
  const BOUND_MS = 5_000;
  const parsedWithinBound = (text) => {
    const started = performance.now();
    const runs = parseAnsi(text);
    const took = performance.now() - started;
    assert.ok(took < BOUND_MS, `parsing ${text.length} characters took ${Math.round(took)} ms`);
    return runs;
  };

  test('a carriage return over a line of 12,000 runs, rewritten 40,000 times, costs what it writes', () => {
    const colourful = Array.from({ length: 12_000 }, (_, i) => `${E}[3${i % 2}ma`).join('');
    const runs = parsedWithinBound(`${colourful}${'\rb'.repeat(40_000)}${E}[0m\ndone\n`);
    assert.equal(runs.length, 12_000); // `b` takes the last colour, so it joins the second `a`
    assert.equal(plainText(runs), `b${'a'.repeat(11_999)}\ndone\n`);
  });

  test('erasing up to the cursor at the end of a long line, many times over, is linear', () => {
    const runs = parsedWithinBound(`${'a'.repeat(200_000)}${`${E}[1K`.repeat(50_000)}z`);
    assert.equal(plainText(runs), `${' '.repeat(200_000)}z`);
  });
});

describe('drawing safely', () => {
  test('when the parser fails, the output is shown as text without escapes and controls', () => {
    const errors = [];
    const parse = () => {
      throw new RangeError('Invalid string length');
    };
    const runs = terminalRuns(`${E}[31mred${E}[0m\x07 ok\r\n\tnext`, { parse, onError: (e) => errors.push(e) });
    assert.deepEqual(runs, [{ text: 'red ok\n\tnext', style: null }]);
    assert.equal(errors.length, 1);
    assert.deepEqual(terminalRuns('', { parse }), []);
  });

  test('when the parser works, the runs are its runs', () => {
    assert.deepEqual(terminalRuns(`${E}[1mx`), parseAnsi(`${E}[1mx`));
  });

  test('stripped text keeps tabs and newlines and drops 8-bit CSI too', () => {
    assert.equal(strippedText('a\x9b1;2mb\x1b[?25lc\x00d\te\n'), 'abcd\te\n');
  });
});

describe('dropped sequences', () => {
  test('cursor movement, modes and other CSI sequences show nothing', () => {
    assert.equal(shown(`a${E}[2Ab${E}[?25lc${E}[?25hd${E}[10;20He${E}[Jf`), 'abcdef');
  });

  test('OSC titles end at BEL or ST', () => {
    assert.equal(shown(`${E}]0;my title\x07text${E}]2;other${E}\\ more`), 'text more');
  });

  test('an OSC never terminated ends at the end of its line: the lines after it show', () => {
    assert.equal(shown(`a${E}]0;no terminator\nnext line\nand more\n`), 'a\nnext line\nand more\n');
    assert.equal(shown(`a\x9d0;8-bit too\nnext`), 'a\nnext');
    // A title that ends as it should still hides only itself, on one line or several.
    assert.equal(shown(`${E}]0;t\x07x\ny`), 'x\ny');
  });

  test('an ESC ends a string and begins the next sequence, as in a terminal', () => {
    assert.equal(shown(`${E}]0;title${E}[31mred`), 'red');
    assert.deepEqual(looks(`${E}]0;title${E}[31mred`), [['red', 'ansi-fg-1', null, null]]);
    assert.equal(shown(`a${E}Pdata${E}[mb`), 'ab');
  });

  test('a malformed CSI is consumed whole, to its final byte, and ignored', () => {
    assert.equal(shown(`a${E}[38;2;999;-1;0mb`), 'ab');
    assert.deepEqual(looks(`${E}[1 ;31mx`), [['x']], 'a parameter after an intermediate: no SGR');
    assert.equal(shown(`AKIA${E}[-1234567890ABCDEF`), 'AKIABCDEF');
    assert.equal(shown('a\x9b-1mb'), 'ab');
    // A character that is no part of a CSI ends it and is itself.
    assert.equal(shown(`a${E}[12\tb`), 'a\tb');
    assert.equal(shown(`a${E}[1;é`), 'aé');
    assert.equal(strippedText(`a${E}[38;2;999;-1;0mb${E}[1`), 'ab');
  });

  test('ESC followed by no sequence drops the ESC only, and the character after it is itself', () => {
    assert.equal(shown(`AKIA${E}\tIOSF`), 'AKIA\tIOSF');
    assert.equal(shown(`ghp_${E}é${'A'.repeat(3)}`), 'ghp_éAAA');
    assert.equal(shown(`a${E}${E}[31mb`), 'ab');
    assert.deepEqual(looks(`${E}${E}[31mb`), [['b', 'ansi-fg-1', null, null]]);
    assert.equal(shown(`a${E}\x7fb`), 'ab', 'DEL is dropped as a control of its own');
    assert.equal(shown(`a${E}(\nb`), 'a(\nb', 'intermediates without a final byte are text');
    // ESC, intermediates and a final byte (0x30-0x7E) still make a sequence.
    assert.equal(shown(`a${E}(Bb${E}7c${E} Fd${E}\\e`), 'abcde');
    assert.equal(shown(`cut${E}(`), 'cut');
  });

  test('a hyperlink keeps its text', () => {
    assert.equal(shown(`see ${E}]8;;https://example.com/x\x07the docs${E}]8;;\x07.`), 'see the docs.');
    assert.equal(shown(`${E}]8;id=1;https://e.x${E}\\link${E}]8;;${E}\\`), 'link');
  });

  test('DCS strings, charset switches and keypad modes are dropped', () => {
    assert.equal(shown(`a${E}P1$r0m${E}\\b${E}(Bc${E}=d${E}>e${E}7f${E}8`), 'abcdef');
  });

  test('8-bit CSI and OSC are understood too', () => {
    assert.equal(shown('\x9b31mred\x9b0m \x9d0;t\x07ok'), 'red ok');
    assert.deepEqual(looks('\x9b31mred')[0], ['red', 'ansi-fg-1', null, null]);
  });

  test('other control characters are dropped, tabs kept', () => {
    assert.equal(shown('a\x07b\x00c\x7fd\te'), 'abcd\te');
  });

  test('a sequence cut off at the end (truncation) shows nothing', () => {
    assert.equal(shown(`ok${E}[38;5`), 'ok');
    assert.equal(shown(`ok${E}`), 'ok');
    assert.equal(shown(`ok${E}]0;unterminated title`), 'ok');
  });
});

describe('styles across chunks', () => {
  test('styleBefore reads back from the last full reset', () => {
    const E = '\x1b';
    const text = `${E}[1ma${E}[0m${E}[31mred\nstill red\n`;
    const at = text.indexOf('still');
    const runs = parseAnsi(text.slice(at), styleBefore(text, at));
    assert.equal(runs[0].style.classes, 'ansi-fg-1');
    assert.equal(parseAnsi('plain', styleBefore(`${E}[32mx\n`, 6))[0].style.classes, 'ansi-fg-2');
  });

  test('nothing before: the default style', () => {
    assert.equal(parseAnsi('x', styleBefore('x', 0))[0].style, null);
  });

  // Bodies whose chunk starts are reached in every way: resets in some chunks and not others,
  // a reset right at a line start, output that never resets, 8-bit CSI, attributes only.
  const lines = (count, line) => Array.from({ length: count }, (_, i) => line(i)).join('\n');
  const BODIES = {
    'never reset': `${E}[32m${lines(CHUNK_LINES * 9, (i) => `build ${E}[1m${i}${E}[22m ${E}[3${i % 8}mw${E}[39m`)}`,
    'reset every line': lines(CHUNK_LINES * 9, (i) => `${E}[1;3${i % 8}mok${E}[0m ${E}[4m${i}`),
    'reset now and then': lines(CHUNK_LINES * 9, (i) =>
      `${i % 47 === 0 ? `${E}[m` : ''}${E}[38;5;${i % 256}m${i}${i % 31 === 0 ? `${E}[0m` : ''} \x9b1mb\x9b22m`),
    'reset at a line start': lines(CHUNK_LINES * 9, (i) => (i % CHUNK_LINES === 0 ? `${E}[0m${E}[7mx` : `${E}[35my`)),
    'no colour at all': lines(CHUNK_LINES * 9, (i) => `plain ${i}`),
  };
  const ORDERS = {
    'in order': (n) => [...Array(n).keys()],
    'from the tail up': (n) => [...Array(n).keys()].reverse(),
    'the tail, then the top, then the middle': (n) => [n - 1, 0, Math.floor(n / 2), 1, n - 2, ...Array(n).keys()],
  };

  for (const [bodyName, text] of Object.entries(BODIES)) {
    for (const [orderName, order] of Object.entries(ORDERS)) {
      test(`createChunkStyles gives styleBefore's styles (${bodyName}, ${orderName})`, () => {
        const starts = chunkStarts(text);
        assert.ok(starts.length >= 9);
        const styles = createChunkStyles(text, starts);
        for (const k of order(starts.length)) {
          const drawn = text.slice(starts[k], starts[k + 1] ?? text.length);
          assert.deepEqual(parseAnsi(drawn, styles.at(k)), parseAnsi(drawn, styleBefore(text, starts[k])), `chunk ${k}`);
        }
      });
    }
  }

  test('each chunk gets a state of its own: parsing one does not move another', () => {
    const text = `${E}[32m${lines(CHUNK_LINES * 4, (i) => `line ${i}`)}`;
    const styles = createChunkStyles(text, chunkStarts(text));
    const first = styles.at(3);
    first.apply('0');
    assert.equal(first.style, null);
    assert.equal(styles.at(3).style.classes, 'ansi-fg-2');
  });

  test('drawing every chunk of output that never resets reads it about once, in any order', () => {
    // 400 chunks: styleBefore per chunk reads some 200 bodies' worth.
    const text = `${E}[32m${lines(CHUNK_LINES * 400, (i) => `compiling ${E}[1mmodule_${i}${E}[22m`)}`;
    for (const order of Object.values(ORDERS)) {
      const starts = chunkStarts(text);
      const styles = createChunkStyles(text, starts);
      for (const k of order(starts.length)) styles.at(k);
      assert.ok(styles.read <= 2 * text.length, `read ${styles.read} of ${text.length}`);
    }
  });

  test('a chunk after one drawn costs its own length', () => {
    const text = `${E}[32m${lines(CHUNK_LINES * 400, (i) => `compiling ${E}[1mmodule_${i}${E}[22m`)}`;
    const starts = chunkStarts(text);
    const styles = createChunkStyles(text, starts);
    styles.at(200);
    const before = styles.read;
    styles.at(201);
    assert.ok(styles.read - before <= 2 * (starts[201] - starts[200]));
  });

  test('chunks start after every CHUNK_LINES-th line break', () => {
    const text = 'line\n'.repeat(CHUNK_LINES * 2 + 10);
    assert.deepEqual(chunkStarts(text), [0, CHUNK_LINES * 5, CHUNK_LINES * 10]);
    assert.deepEqual(chunkStarts('line\n'.repeat(CHUNK_LINES)), [0]); // nothing after the last break
    assert.deepEqual(chunkStarts(''), [0]);
  });
});
