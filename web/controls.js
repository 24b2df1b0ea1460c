// The C0 and C1 control characters every text the page draws from the server shows as markers
// (`⟨U+0008⟩`, bidi.js), but tab and line feed, which show as what they are, and a carriage
// return before a line feed, which ends a line with it. A control has no glyph: Chromium draws
// each as a box of its own, laid out on its own, so a text alternating letters and controls costs
// one shaped run per control. `a\b` repeated 87,000 times (the backspaces of overstruck `man`
// output, 174 KB) took 1.9 to 2.5 s of layout in a reply, a prompt or a title (2.5 to 2.8 s at
// a phone's width), and letters between DELETEs (U+007F) or C1 controls 1.6 to 1.8 s. Drawn as
// markers, a run of them costs one element, and past MAX_MARKERS per text what ASCII text costs:
// 0.13 to 0.32 s for the same texts.
//
// Data only (no imports): bidi.js builds the sets that mark these (with the bidi controls, or
// alone in chat text), invisibles.js adds them to what a command marks.

const CONTROL = 'a control character';

// The names a marker's tooltip gives the controls one meets in practice.
const CONTROL_NAMES = new Map([
  [0x00, 'NULL'], [0x07, 'BELL'], [0x08, 'BACKSPACE'], [0x0b, 'LINE TABULATION'], [0x0c, 'FORM FEED'],
  [0x1b, 'ESCAPE'], [0x7f, 'DELETE'], [0x85, 'NEXT LINE'],
]);
const controlName = (codePoint) => CONTROL_NAMES.get(codePoint) ?? 'CONTROL CHARACTER';

/**
 * The controls drawn as markers, as ranges of code points (bidi.js, `markedSet`): every C0
 * control but tab (U+0009) and line feed (U+000A), a carriage return that ends no line, DELETE
 * and the C1 controls (U+0080-009F).
 */
export const CONTROL_RANGES = Object.freeze([
  { from: 0x00, to: 0x08, name: controlName, what: CONTROL },
  { from: 0x0b, to: 0x0c, name: controlName, what: CONTROL },
  { from: 0x0d, name: 'CARRIAGE RETURN', what: CONTROL, pattern: '\\r(?!\\n)' }, // bare: not a line end
  { from: 0x0e, to: 0x1f, name: controlName, what: CONTROL },
  { from: 0x7f, to: 0x9f, name: controlName, what: CONTROL },
]);
