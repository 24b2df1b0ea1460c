// Unit tests of the bound on combining marks: a character draws at most MAX_MARKS of them, the
// rest of its run is one marker, real text in any script is drawn as it is.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { visibleTextNodes } from '../bidi.js';
import {
  MAX_MARKS, MAX_MARK_MARKERS, boundTextIn, boundedNodes, boundedParts, isMark, markState, marksMarker,
} from '../combining-marks.js';
import { fakeDocument } from './fake-document.mjs';

const ACUTE = '\u0301';
const TONE = '\u{1F3FB}'; // EMOJI MODIFIER FITZPATRICK TYPE-1-2: a surrogate pair, category Sk

/** What the parts draw, markers in place of the marks they stand for. */
const drawn = (parts) => parts.map((part) => part.text).join('');
/** The real text the parts stand for. */
const real = (parts) => parts.map((part) => part.marks ?? part.text).join('');

describe('combining marks', () => {
  test('text in real scripts is drawn as it is', () => {
    const texts = {
      ascii: 'npm test -- --watch && echo done\n',
      vietnameseComposed: 'Tiếng Việt: người được những thường xuyên',
      vietnameseDecomposed: 'Tiếng Việt: người được những thường xuyên'.normalize('NFD'),
      devanagari: 'क्षत्रिय स्त्री हिन्दी द्वन्द्व',
      thai: 'ภาษาไทย กิ้ น้ำ ที่นี่',
      hebrewPointed: 'בְּרֵאשִׁ֖ית בָּרָ֣א אֱלֹהִ֑ים',
      arabicVowelled: 'بِسْمِ ٱللَّٰهِ ٱلرَّحْمَٰنِ ٱلرَّحِيمِ',
      tibetan: 'བསྒྲུབས་ སྐྱེས་',
      emojiModifier: '👍🏽 👩🏿‍💻',
      emojiFamily: '👨‍👩‍👧‍👦',
      emojiKissSkinTones: '👩🏽‍❤️‍💋‍👨🏻',
      englandFlag: '\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}',
      keycap: '1\uFE0F\u20E3',
      hangulJamo: '\u1100\u1161\u11A8',
      zalgoWithinBound: `Z${ACUTE.repeat(MAX_MARKS)}`,
    };
    for (const [name, text] of Object.entries(texts)) {
      assert.deepEqual(boundedParts(text), [{ kind: 'text', text }], name);
    }
    assert.deepEqual(boundedParts(''), []);
  });

  test('what counts as a mark: what continues a grapheme cluster', () => {
    for (const mark of [ACUTE, '\u20DD', '\u0903', '\u0E34', '\u0E33', '\u0EB3', '\u200C', '\u200D', '\uFE0F',
      '\u{E0100}', '\u{E0061}', TONE, '\u{1D167}',
      // what draws nothing: it neither ends a run nor hides one
      '\u200B', '\u2060', '\uFEFF', '\u00AD', '\u2061', '\u206A', '\u{1D173}', '\u202E']) {
      assert.equal(isMark(mark), true, mark.codePointAt(0).toString(16));
    }
    for (const base of ['a', ' ', '\n', '\u0E01', '\u1100', '\u0600', '\u{1F44D}']) {
      assert.equal(isMark(base), false, base.codePointAt(0).toString(16));
    }
  });

  test('a character that draws nothing between runs of marks does not start a new run', () => {
    // Chromium hung every mark on the one `a`: 126 KB froze the page 9 s.
    for (const joiner of ['\u2060', '\u200B', '\uFEFF', '\u00AD', '\u206A', '\u{1D173}']) {
      const text = `a${(joiner + ACUTE.repeat(MAX_MARKS)).repeat(200)}`;
      const parts = boundedParts(text);
      assert.deepEqual(parts.map((part) => part.kind), ['text', 'marks'], joiner.codePointAt(0).toString(16));
      assert.equal(real(parts), text);
      assert.ok(drawn(parts).length < 60, drawn(parts));
    }
  });

  test('a character draws its first marks; the rest of the run is one marker that counts them', () => {
    const text = `echo Z${ACUTE.repeat(131_000)} done`;
    const parts = boundedParts(text);
    assert.deepEqual(parts.map((part) => part.kind), ['text', 'marks', 'text']);
    assert.equal(parts[0].text, `echo Z${ACUTE.repeat(MAX_MARKS)}`);
    assert.equal(parts[1].text, '⟨+130,984 combining marks⟩');
    assert.equal(parts[1].marks, ACUTE.repeat(131_000 - MAX_MARKS), 'the part keeps the real marks');
    assert.match(parts[1].title, /^130,984 more combining marks on one character, not drawn \(a character shows at most 16\)/);
    assert.match(parts[1].title, /U\+0301 ×130984$/);
    assert.equal(parts[2].text, ' done');
    assert.equal(real(parts), text);

    const one = boundedParts(`Z${ACUTE.repeat(MAX_MARKS + 1)}`);
    assert.deepEqual(one.map((part) => part.text), [`Z${ACUTE.repeat(MAX_MARKS)}`, '⟨+1 combining mark⟩']);
  });

  test('the marker lists the first kinds of mark and counts them all', () => {
    assert.equal(marksMarker('\u0301\u0301\u0300').title.endsWith('U+0301 ×2 U+0300'), true);
    const { marker, asText, title, count } = marksMarker('\u0301\u0300\u0302\u0303\u0304\u0305');
    assert.equal(marker, '⟨+6 combining marks⟩');
    assert.equal(asText, '<+6 combining marks>');
    assert.equal(count, 6);
    assert.match(title, /U\+0301 U\+0300 U\+0302 U\+0303 …$/);
  });

  test('each character is bounded on its own, and one run of another kind of mark too', () => {
    const text = `a${ACUTE.repeat(20)}b${'\u0E34'.repeat(3)}c${'\u0E33'.repeat(30)}`;
    const parts = boundedParts(text);
    assert.deepEqual(parts.map((part) => part.text), [
      `a${ACUTE.repeat(16)}`, '⟨+4 combining marks⟩', `b${'\u0E34'.repeat(3)}c${'\u0E33'.repeat(16)}`,
      '⟨+14 combining marks⟩',
    ]);
    assert.equal(real(parts), text);
  });

  test('surrogate pairs are counted as one mark and never split', () => {
    const text = `\u{1F44D}${TONE.repeat(20)}!`;
    const parts = boundedParts(text);
    assert.deepEqual(parts.map((part) => part.text), [`\u{1F44D}${TONE.repeat(16)}`, '⟨+4 combining marks⟩', '!']);
    assert.equal(parts[1].marks, TONE.repeat(4));
    assert.match(parts[1].title, /U\+1F3FB ×4$/);
    // Marks of both planes in one run.
    const mixed = `x${`${ACUTE}\u{E0100}`.repeat(10)}`;
    const cut = boundedParts(mixed);
    assert.equal(cut[0].text, `x${`${ACUTE}\u{E0100}`.repeat(8)}`);
    assert.equal(cut[1].text, '⟨+4 combining marks⟩');
    assert.equal(real(cut), mixed);
  });

  test('marks at the very start of a text, with no base character, are bounded too', () => {
    const parts = boundedParts(TONE.repeat(65_000));
    assert.deepEqual(parts.map((part) => part.text), [TONE.repeat(16), '⟨+64,984 combining marks⟩']);
    assert.deepEqual(boundedParts(`${ACUTE.repeat(3)}abc`), [{ kind: 'text', text: `${ACUTE.repeat(3)}abc` }]);
  });

  test('a run goes on from one text to the next laid out after it', () => {
    const state = markState();
    assert.equal(drawn(boundedParts(`Z${ACUTE.repeat(10)}`, state)), `Z${ACUTE.repeat(10)}`);
    assert.equal(state.run, 10);
    assert.equal(drawn(boundedParts(ACUTE.repeat(10), state)), `${ACUTE.repeat(6)}⟨+4 combining marks⟩`);
    assert.equal(state.run, 20);
    assert.equal(drawn(boundedParts(ACUTE, state)), '⟨+1 combining mark⟩', 'still the same character');
    assert.equal(drawn(boundedParts(`\n${ACUTE.repeat(16)}`, state)), `\n${ACUTE.repeat(16)}`, 'a line feed ends it');
    assert.equal(drawn(boundedParts('x', state)), 'x');
    assert.equal(state.run, 0);
    assert.equal(drawn(boundedParts(ACUTE.repeat(16), state)), ACUTE.repeat(16));
  });

  test('one text draws at most MAX_MARK_MARKERS markers; past them a note, then the count as text', () => {
    const cluster = `a${ACUTE.repeat(MAX_MARKS + 1)}`;
    const text = cluster.repeat(MAX_MARK_MARKERS + 5);
    const parts = boundedParts(text);
    assert.equal(parts.filter((part) => part.kind === 'marks').length, MAX_MARK_MARKERS);
    const limits = parts.filter((part) => part.kind === 'limit');
    assert.equal(limits.length, 1);
    assert.match(limits[0].text, /^⟨more than 200 cut runs of combining marks/);
    const after = parts.slice(parts.indexOf(limits[0]) + 1);
    assert.deepEqual(after.map((part) => part.kind), ['text']);
    // The note stands where the 201st marker would: its character is drawn before it.
    assert.equal(parts[parts.indexOf(limits[0]) - 1].text.endsWith(`a${ACUTE.repeat(MAX_MARKS)}`), true);
    assert.equal(after[0].text, `<+1 combining mark>${`a${ACUTE.repeat(MAX_MARKS)}<+1 combining mark>`.repeat(4)}`);
  });

  test('the check is linear: 256 KiB of ordinary text and 131,000 marks take a few milliseconds', () => {
    const line = 'drwxr-xr-x  2 dev dev 4096 Dec  6 12:00 Tiếng Việt नमस्ते שָׁלוֹם file.txt\n';
    const ordinary = line.repeat(Math.ceil(262_144 / line.length));
    const cases = [ordinary, `Z${ACUTE.repeat(131_000)}`, `a${ACUTE.repeat(17)}`.repeat(7_000)];
    for (const text of cases) {
      const started = performance.now();
      const parts = boundedParts(text);
      const took = performance.now() - started;
      assert.ok(took < 1_000, `${took} ms`); // about 1-10 ms; quadratic work would take minutes
      assert.ok(parts.length >= 1);
    }
    assert.deepEqual(boundedParts(ordinary), [{ kind: 'text', text: ordinary }]);
  });
});

describe('combining marks in the DOM', () => {
  test('a text node left as it is stays the same node; a cut one becomes text and a marker', () => {
    const doc = fakeDocument();
    const plain = doc.createTextNode('ls -la');
    const [kept] = boundedNodes(doc, [plain]);
    assert.equal(kept, plain);
    const nodes = boundedNodes(doc, [doc.createTextNode(`Z${ACUTE.repeat(20)}`)]);
    assert.deepEqual(nodes.map((node) => node.nodeType), [3, 1]);
    assert.equal(nodes[1].className, 'combining-marks');
    assert.equal(nodes[1].textContent, '⟨+4 combining marks⟩');
    assert.match(nodes[1].title, /^4 more combining marks/);
  });

  test('a run split by elements (another colour, an emphasis) is one run', () => {
    const doc = fakeDocument();
    const p = doc.createElement('p');
    const em = doc.createElement('em');
    em.append(doc.createTextNode(ACUTE.repeat(10)));
    const empty = doc.createTextNode('');
    p.append(doc.createTextNode('Z'), em, empty, doc.createTextNode(ACUTE.repeat(10)));
    const fragment = doc.createDocumentFragment();
    fragment.append(p);
    boundTextIn(fragment);
    assert.equal(fragment.textContent, `Z${ACUTE.repeat(16)}⟨+4 combining marks⟩`);
    assert.equal(p.childNodes[2], empty, 'an empty text is left alone');
    assert.deepEqual(p.childNodes.map((node) => node.className ?? null), [null, '', null, null, 'combining-marks']);
  });

  test('past MAX_MARK_MARKERS, a text node whose marks are all cut is drawn as its count', () => {
    // 10,000 runs of output in alternating colours, 10 marks each, after one `Z`: one run.
    const doc = fakeDocument();
    const state = markState();
    const runs = [doc.createTextNode('Z')];
    for (let i = 0; i < 300; i += 1) runs.push(doc.createTextNode(ACUTE.repeat(10)));
    const nodes = boundedNodes(doc, runs, state);
    const text = nodes.map((node) => node.textContent).join('');
    assert.equal(new RegExp(`${ACUTE}{17}`, 'u').test(text), false);
    assert.equal(nodes.filter((node) => node.className === 'combining-marks').length, MAX_MARK_MARKERS);
    assert.equal(nodes.filter((node) => node.className?.includes('combining-marks--limit')).length, 1);
    // The first run is drawn, the second cut after 6 marks, the next 199 are markers.
    assert.equal(text.split('<+10 combining marks>').length - 1, 300 - 1 - MAX_MARK_MARKERS);
    // The same in a tree, in place.
    const p = doc.createElement('p');
    for (let i = 0; i < 300; i += 1) {
      const span = doc.createElement('span');
      span.append(doc.createTextNode(i === 0 ? `Z${ACUTE.repeat(10)}` : ACUTE.repeat(10)));
      p.append(span);
    }
    boundTextIn(p);
    assert.equal(new RegExp(`${ACUTE}{17}`, 'u').test(p.textContent), false);
  });

  test('bidi markers and combining-mark markers together, and a run across drawn texts', () => {
    const doc = fakeDocument();
    const nodes = visibleTextNodes(doc, `a\u202EZ${ACUTE.repeat(18)}`);
    assert.equal(nodes.map((node) => node.textContent).join(''), `a⟨U+202E⟩Z${ACUTE.repeat(16)}⟨+2 combining marks⟩`);
    assert.deepEqual(nodes.map((node) => node.className ?? null), [null, 'bidi-control', null, 'combining-marks']);
    // Two runs of output (two colours) drawn with one state, as a chunk of output is.
    const state = markState();
    const first = visibleTextNodes(doc, 'Z', undefined, state);
    const second = visibleTextNodes(doc, ACUTE.repeat(20), undefined, state);
    assert.equal([...first, ...second].map((node) => node.textContent).join(''), `Z${ACUTE.repeat(16)}⟨+4 combining marks⟩`);
    // A bidi marker is a character the marks after it sit on.
    assert.equal(visibleTextNodes(doc, `${ACUTE.repeat(16)}\u202E${ACUTE.repeat(16)}`).length, 3);
  });
});
