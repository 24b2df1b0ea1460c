// Unit tests of which chunks of an output region stay when a newer text comes (output-chunks.js).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { CHUNK_LINES, chunkStarts, commonPrefix, planChunks } from '../output-chunks.js';

const lines = (from, to) => Array.from({ length: to - from }, (_, i) => `line ${from + i}\n`).join('');

/** The plan of `after` against `before` chunked as the page chunks a text it draws at first. */
function plan(before, after) {
  return planChunks(before, chunkStarts(before), after);
}

/** Each chunk's text in `after`, and the old chunk's text in `before`. */
function texts(before, after, chunks) {
  const starts = chunkStarts(before);
  const oldText = (i) => before.slice(starts[i], starts[i + 1] ?? before.length);
  return chunks.map((chunk, k) => ({
    text: after.slice(chunk.start, chunks[k + 1]?.start ?? after.length),
    old: chunk.from >= 0 ? oldText(chunk.from) : null,
  }));
}

describe('chunk starts', () => {
  test('from a line start, after every CHUNK_LINES-th line break, before an end', () => {
    const text = lines(0, 70);
    const all = chunkStarts(text);
    assert.equal(all.length, 4);
    assert.deepEqual(chunkStarts(text, all[1]), all.slice(1));
    assert.deepEqual(chunkStarts(text, 0, all[2]), all.slice(0, 2), 'no start at the end itself');
  });
});

describe('a newer text keeps the chunks whose text did not change', () => {
  test('the same text keeps every chunk as it is', () => {
    const text = lines(0, 45);
    const chunks = plan(text, text);
    assert.deepEqual(chunks.map((c) => [c.from, c.same, c.settled]), [[0, true, true], [1, true, true], [2, true, true]]);
  });

  test('output appended keeps every chunk but the last, which goes on, and adds chunks after it', () => {
    const before = lines(0, 45);
    const after = before + lines(45, 90);
    const result = plan(before, after);
    assert.deepEqual(result.map((c) => [c.start, c.from, c.same, c.settled]), [
      [0, 0, true, true],
      [chunkStarts(before)[1], 1, true, true],
      [chunkStarts(before)[2], 2, false, false], // lines 40-44, then 45-59
      ...chunkStarts(after).slice(3).map((start) => [start, -1, false, false]),
    ]);
    assert.deepEqual(result.map((c) => c.start), chunkStarts(after), 'as if drawn at first');
  });

  test('a line completed at the end redraws only the last chunk', () => {
    const before = `${lines(0, 30)}compiling 4`;
    const after = `${lines(0, 30)}compiling 42%\n`;
    const chunks = plan(before, after);
    assert.deepEqual(chunks.map((c) => [c.from, c.same]), [[0, true], [1, false]]);
  });

  test('a last chunk that was whole is kept when output goes on after it', () => {
    const before = lines(0, 2 * CHUNK_LINES);
    const after = before + lines(40, 45);
    const chunks = plan(before, after);
    assert.deepEqual(chunks.map((c) => [c.from, c.same, c.settled]), [[0, true, true], [1, true, true], [-1, false, false]]);
  });

  test('a head cut (the server keeps the newest 256 KiB) keeps the chunks after it, moved up', () => {
    const before = lines(0, 70);
    const after = lines(5, 75);
    const starts = chunkStarts(before);
    const cut = before.indexOf('line 5\n');
    const result = plan(before, after);
    assert.deepEqual(result.map((c) => [c.start, c.from, c.same, c.settled]), [
      [0, 0, false, false], // lines 5-19: what is left of the first chunk
      [starts[1] - cut, 1, true, false], // the styles before it may differ: not settled
      [starts[2] - cut, 2, true, false],
      [starts[3] - cut, 3, false, false], // lines 60-69 go on with 70-74
    ]);
    for (const { text, old } of texts(before, after, result).slice(1, 3)) assert.equal(text, old);
  });

  test('a head cut past the first chunks drops them', () => {
    const before = lines(0, 70);
    const after = lines(45, 85);
    const result = plan(before, after);
    assert.deepEqual(result.map((c) => [c.from, c.same]), [[2, false], [3, false], [-1, false]]);
    assert.ok(!result.some((c) => c.from === 0 || c.from === 1));
  });

  test('a head cut whose first line is masked anew (a secret may have been cut) keeps the chunks after it', () => {
    // The server shows the first line of a text whose head it cut as `***`.
    const before = `***\n${lines(10, 80)}`;
    const after = `***\n${lines(15, 85)}`;
    const result = plan(before, after);
    assert.deepEqual(result.map((c) => [c.from, c.same]), [[0, false], [1, true], [2, true], [3, false]]);
    for (const { text, old } of texts(before, after, result).slice(1, 3)) assert.equal(text, old);
  });

  test('a head cut inside the last chunk keeps its nodes from the cut on', () => {
    const before = lines(0, 70);
    const after = lines(61, 75);
    const result = plan(before, after);
    assert.deepEqual(result.map((c) => [c.start, c.from, c.same]), [[0, 3, false]]);
  });

  test('a stretch changed in between (masking) keeps the chunks before and after it', () => {
    const before = lines(0, 100);
    const after = before.replace('line 50\n', 'line ******** 50\n');
    const result = plan(before, after);
    assert.deepEqual(result.map((c) => [c.from, c.same, c.settled]), [
      [0, true, true], [1, true, true], [2, false, false], [3, true, false], [4, true, false],
    ]);
    for (const { text, old } of texts(before, after, result).filter((_, k) => k !== 2)) assert.equal(text, old);
  });

  test('a text with nothing in common keeps no chunk, reusing the first element only', () => {
    const result = plan(lines(0, 45), 'other\n'.repeat(30));
    assert.deepEqual(result.map((c) => [c.from, c.same]), [[0, false], [-1, false]]);
  });

  test('an emptied text is one empty chunk', () => {
    const result = plan(lines(0, 45), '');
    assert.deepEqual(result.map((c) => c.start), [0]);
  });

  test('for any edit, the chunks start at line starts, in order, of at most CHUNK_LINES lines, and a kept one holds its old text', () => {
    let seed = 7;
    const random = (n) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const word = () => ['a', 'bb', 'ccc\n', '\n', 'x\r', '\x1b[32m', 'y'][random(7)];
    const text = (n) => Array.from({ length: n }, word).join('');
    for (let round = 0; round < 1000; round += 1) {
      const before = text(random(400));
      let after;
      switch (random(5)) {
        case 0: after = before + text(random(200)); break;
        case 1: after = before.slice(random(before.length + 1)) + text(random(200)); break;
        case 4: {
          const cut = before.slice(random(before.length + 1));
          after = `***${cut.slice(cut.indexOf('\n') < 0 ? cut.length : cut.indexOf('\n'))}${text(random(200))}`;
          break;
        }
        case 2: {
          const at = random(before.length + 1);
          after = before.slice(0, at) + text(random(20)) + before.slice(at + random(20));
          break;
        }
        default: after = text(random(400));
      }
      const result = plan(before, after);
      const starts = result.map((c) => c.start);
      assert.equal(starts[0], 0);
      starts.forEach((start, k) => {
        if (k > 0) {
          assert.ok(start > starts[k - 1], 'in order');
          assert.equal(after[start - 1], '\n', 'at a line start');
        }
        const end = starts[k + 1] ?? after.length;
        const breaks = after.slice(start, end).split('\n').length - 1;
        assert.ok(breaks <= CHUNK_LINES, `${breaks} lines`);
      });
      const froms = result.map((c) => c.from).filter((from) => from >= 0);
      assert.deepEqual(froms, [...froms].sort((a, b) => a - b), 'old chunks keep their order');
      assert.equal(new Set(froms).size, froms.length, 'each old chunk at most once');
      for (const [k, { text: shown, old }] of texts(before, after, result).entries()) {
        if (result[k].same) assert.equal(shown, old);
      }
    }
  });
});

describe('commonPrefix', () => {
  const naive = (a, aFrom, b, bFrom) => {
    let n = 0;
    while (aFrom + n < a.length && bFrom + n < b.length && a[aFrom + n] === b[bFrom + n]) n += 1;
    return n;
  };

  test('counts the characters alike, a block at a time, wherever the first difference is', () => {
    const base = 'build log line\n'.repeat(2000);
    for (const at of [0, 1, 63, 64, 65, 127, 128, 129, 1000, 4095, 4096, 20000, base.length - 1]) {
      const other = `${base.slice(0, at)}#${base.slice(at + 1)}`;
      for (const [aFrom, bFrom] of [[0, 0], [15, 15], [3, 3]]) {
        assert.equal(commonPrefix(base, aFrom, other, bFrom), naive(base, aFrom, other, bFrom), `at ${at}`);
      }
    }
    assert.equal(commonPrefix(base, 0, base, 0), base.length);
    assert.equal(commonPrefix(base, 15, base, 0), base.length - 15); // one line on: periodic
    assert.equal(commonPrefix('', 0, base, 0), 0);
  });
});
