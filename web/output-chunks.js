// Where an output region's chunks start, and which chunks drawn for the text shown before stay
// as they are when a poll brings a newer text (pure).
//
// A running command's text grows at its end, and once past 256 KiB also loses its head (the
// server keeps the newest text); masking may change a stretch in between. The chunks that hold
// the same text keep their elements, so what is drawn, laid out and selected there stays put:
// the region was drawn again from scratch at every poll, its new chunks laid out at 0 px until
// drawn, and a reader who had scrolled up landed on the first line, their selection gone.

/** Lines per chunk: about one screen of the region (24rem, some 17 lines). */
export const CHUNK_LINES = 20;

/**
 * Offsets where chunks start: `from` (0, or a line start), then after every CHUNK_LINES-th line
 * break that is not the text's last character.
 * @param {string} text
 * @param {number} [from]
 * @param {number} [to] no start at or past this offset (the text's length by default)
 */
export function chunkStarts(text, from = 0, to = text.length) {
  const starts = [from];
  let lines = 0;
  for (let newline = text.indexOf('\n', from); newline >= 0 && newline + 1 < to; newline = text.indexOf('\n', newline + 1)) {
    lines += 1;
    if (lines % CHUNK_LINES === 0) starts.push(newline + 1);
  }
  return starts;
}

// Places in the old text tried for where the new text's head went on from.
const MAX_HEAD_CUTS = 16;
// What of the new text is looked for in the old text to find where its head was cut.
const PROBE = 64;
// The block `commonPrefix` starts comparing with, and below which it compares characters.
const BLOCK = 64;

/**
 * The chunks of `after`, given the chunks of `before` (`beforeStarts`, from `chunkStarts`).
 * Each is `{start, from, same, settled}`: `from` is the index of the old chunk whose element it
 * takes over (-1: a new one); `same` says it holds exactly that old chunk's text (nothing to
 * draw again, unless the styles in force at its start changed); `settled` says the text before
 * it is unchanged too, so its styles did not change either. The old chunks not named by any
 * `from` are gone.
 * @param {string} before
 * @param {number[]} beforeStarts
 * @param {string} after
 * @returns {{start: number, from: number, same: boolean, settled: boolean}[]}
 */
export function planChunks(before, beforeStarts, after) {
  const count = beforeStarts.length;
  const endOf = (i) => (i + 1 < count ? beforeStarts[i + 1] : before.length);
  if (before === after) return beforeStarts.map((start, i) => ({ start, from: i, same: true, settled: true }));
  // `after` from `from` on is `before` from `from + offset` on, for `common` characters.
  const { offset, from, common } = alignment(before, after);
  const settled = offset === 0 && from === 0; // the text before a kept chunk is unchanged too
  // A whole old chunk within that stretch, at a line start of `after` too (the last old chunk
  // is never whole: it ends with the text).
  const whole = (i) => i < count - 1 && beforeStarts[i] >= from + offset && endOf(i) <= from + offset + common
    && (beforeStarts[i] === offset || after[beforeStarts[i] - offset - 1] === '\n');
  let first = 0;
  while (first < count && !whole(first)) first += 1;
  let last = first; // the old chunks kept as they are: [first, last)
  while (last < count && whole(last)) last += 1;
  // `after` is then: a head that changed, [0, headEnd), taking over the element of old chunk
  // `headFrom`; the kept chunks; from `at`, a stretch that changed, taking over old chunk
  // `atFrom` (whose text may go on as it was: its nodes are kept as far as it does); and the
  // chunks kept at the end.
  let headEnd = 0;
  let headFrom = -1;
  let at = 0;
  let atFrom = 0;
  if (last > first) {
    headEnd = beforeStarts[first] - offset;
    headFrom = first - 1;
    at = endOf(last - 1) - offset;
    atFrom = last;
  } else {
    // No whole chunk is kept: the changed stretch still starts where an old chunk did when
    // it can (a head cut inside the last chunk), so that chunk's nodes are kept.
    const boundary = (i) => beforeStarts[i] >= from + offset && beforeStarts[i] <= from + offset + common
      && beforeStarts[i] > offset && after[beforeStarts[i] - offset - 1] === '\n';
    let i = 1;
    while (i < count && !boundary(i)) i += 1;
    if (i < count) {
      headEnd = at = beforeStarts[i] - offset;
      headFrom = i - 1;
      atFrom = i;
    } else {
      while (atFrom + 1 < count && beforeStarts[atFrom + 1] <= offset) atFrom += 1;
    }
  }
  // What both end with, past the stretch alike: the whole chunks there are kept too.
  const tail = commonSuffix(before, from + offset + common, after, from + common);
  const shift = after.length - before.length;
  let firstTail = count;
  for (let j = count - 1; j > atFrom; j -= 1) {
    const start = beforeStarts[j];
    if (start < before.length - tail || after[start + shift - 1] !== '\n' || start + shift <= at) break;
    firstTail = j;
  }
  const tailStart = firstTail < count ? beforeStarts[firstTail] + shift : after.length;
  const chunks = [];
  /** The stretch [start, end) of `after`, in chunks; the first takes over old chunk `reused`. */
  const changed = (start, end, reused) => {
    const starts = chunkStarts(after, start, end);
    starts.forEach((chunkStart, k) => {
      const old = k === 0 ? reused : -1;
      const same = old >= 0 && chunkStart === beforeStarts[old] - offset
        && after.slice(chunkStart, starts[k + 1] ?? end) === before.slice(beforeStarts[old], endOf(old));
      chunks.push({ start: chunkStart, from: old, same, settled: same && settled });
    });
  };
  if (headEnd > 0) changed(0, headEnd, headFrom);
  for (let i = first; i < last; i += 1) {
    chunks.push({ start: beforeStarts[i] - offset, from: i, same: true, settled });
  }
  if (at < tailStart || chunks.length === 0) changed(at, tailStart, atFrom < firstTail ? atFrom : -1);
  for (let j = firstTail; j < count; j += 1) {
    chunks.push({ start: beforeStarts[j] + shift, from: j, same: true, settled: false });
  }
  return chunks;
}

/**
 * How `after` lines up with `before`: `after` from `from` on is `before` from `from + offset`
 * on, for `common` characters. `offset` is 0 unless `before`'s head was cut (the server keeps
 * the newest text); `from` is 0 unless the head of `after` differs too (the server masks the
 * first line of a text whose head it cut: a secret may have been cut in two).
 */
function alignment(before, after) {
  if (after.startsWith(before)) return { offset: 0, from: 0, common: before.length };
  let best = { offset: 0, from: 0, common: commonPrefix(before, 0, after, 0) };
  for (const from of new Set([0, after.indexOf('\n') + 1])) {
    const probe = after.slice(from, from + PROBE);
    if (probe === '') continue;
    for (let tries = 0, at = before.indexOf(probe, from + 1); at > from && tries < MAX_HEAD_CUTS;
      tries += 1, at = before.indexOf(probe, at + 1)) {
      const common = commonPrefix(before, at, after, from);
      if (common > best.common) best = { offset: at - from, from, common };
      if (at + common === before.length) break; // all that is left of `before` goes on in `after`
    }
  }
  return best;
}

/** How many characters of `a` from `aFrom` and of `b` from `bFrom` are alike. Compared a
 * block at a time (a block twice the size of the last one alike, then halving the block that
 * differs): the engine compares a block natively, where a loop of single characters took up
 * to 130 ms a poll on 256 KiB of repetitive output, whose many alignments each ran far. */
export function commonPrefix(a, aFrom, b, bFrom) {
  const most = Math.min(a.length - aFrom, b.length - bFrom);
  const alike = (from, to) => a.slice(aFrom + from, aFrom + to) === b.slice(bFrom + from, bFrom + to);
  let n = 0;
  let end = n;
  for (let size = BLOCK; n < most; size *= 2) {
    end = Math.min(most, n + size);
    if (!alike(n, end)) break;
    n = end;
  }
  while (end - n > BLOCK) { // the first difference lies in [n, end)
    const middle = n + Math.floor((end - n) / 2);
    if (alike(n, middle)) n = middle;
    else end = middle;
  }
  while (n < most && a.charCodeAt(aFrom + n) === b.charCodeAt(bFrom + n)) n += 1;
  return n;
}

/** How many characters `a` (past `aFrom`) and `b` (past `bFrom`) end with alike. */
function commonSuffix(a, aFrom, b, bFrom) {
  const most = Math.min(a.length - aFrom, b.length - bFrom);
  let n = 0;
  while (n < most && a.charCodeAt(a.length - 1 - n) === b.charCodeAt(b.length - 1 - n)) n += 1;
  return n;
}
