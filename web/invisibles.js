// Characters a command or a working directory shows as markers besides the bidi controls
// (bidi.js): characters that draw nothing, or draw a space or a line break, where they are. A
// command is the record of what ran, so what the row shows must be what ran: `rm -rf /tmp/x\u200B`
// would look like `rm -rf /tmp/x`, tag characters (U+E0000-E007F) carry a whole hidden ASCII
// text, and a bare carriage return reads as a space in the page (a terminal would go back and
// overwrite). Each is drawn as a marker the way a bidi control is (`⟨U+200B⟩`, ADR 0125);
// copying still takes the real text.
//
// Only commands and working directories: they are ASCII-ish in practice, so a zero-width
// joiner there is no part of a word that needs it. Chat prose and titles keep theirs (emoji
// sequences and scripts such as Persian or Devanagari join with them), and output is drawn as
// a terminal draws it (ansi.js). The C0 and C1 controls are marked in every text
// (controls.js); they are here too so that a command's set says all it marks.

import { BIDI_CONTROL_RANGES, markedSet } from './bidi.js';
import { CONTROL_RANGES } from './controls.js';

const INVISIBLE = 'an invisible character';
const TAG = 'a tag character';

/** A tag character by what it spells: TAG LATIN SMALL LETTER A is `TAG 'a'`. */
function tagName(codePoint) {
  if (codePoint === 0xe0001) return 'LANGUAGE TAG';
  if (codePoint === 0xe007f) return 'CANCEL TAG';
  const spelled = codePoint - 0xe0000;
  return spelled >= 0x20 && spelled <= 0x7e ? `TAG '${String.fromCharCode(spelled)}'` : 'TAG CHARACTER';
}

/** The invisible characters marked in commands and working directories, bidi controls aside. */
export const INVISIBLE_RANGES = Object.freeze([
  ...CONTROL_RANGES, // the C0 and C1 controls, which every text marks (controls.js)
  { from: 0x00ad, name: 'SOFT HYPHEN', what: INVISIBLE },
  { from: 0x200b, name: 'ZERO WIDTH SPACE', what: INVISIBLE },
  { from: 0x200c, name: 'ZERO WIDTH NON-JOINER', what: INVISIBLE },
  { from: 0x200d, name: 'ZERO WIDTH JOINER', what: INVISIBLE },
  { from: 0x2028, name: 'LINE SEPARATOR', what: INVISIBLE },
  { from: 0x2029, name: 'PARAGRAPH SEPARATOR', what: INVISIBLE },
  { from: 0x2060, name: 'WORD JOINER', what: INVISIBLE },
  { from: 0x2061, name: 'FUNCTION APPLICATION', what: INVISIBLE },
  { from: 0x2062, name: 'INVISIBLE TIMES', what: INVISIBLE },
  { from: 0x2063, name: 'INVISIBLE SEPARATOR', what: INVISIBLE },
  { from: 0x2064, name: 'INVISIBLE PLUS', what: INVISIBLE },
  { from: 0xfeff, name: 'ZERO WIDTH NO-BREAK SPACE (BYTE ORDER MARK)', what: INVISIBLE },
  { from: 0xe0000, to: 0xe007f, name: tagName, what: TAG },
]);

/** What a command and a working directory show as markers: bidi controls and the above. */
export const COMMAND_MARKED = markedSet([...BIDI_CONTROL_RANGES, ...INVISIBLE_RANGES]);
