// Bidi controls shown as what they are. An override, embedding, isolate or mark in a command, a
// path, a title or an output line would otherwise reorder the text around it on screen:
// `cat \u202Etxt.exe` reads `cat exe.txt`, another command than the one that ran. The page draws
// each one as a visible marker (`⟨U+202E⟩`, class `bidi-control`) instead of applying it; the
// text itself is unchanged, so copying takes the real characters.

/** The explicit bidi formatting characters of Unicode (UAX #9), and the three marks. */
const BIDI_CONTROL_NAMES = new Map([
  ['\u061c', 'ARABIC LETTER MARK'],
  ['\u200e', 'LEFT-TO-RIGHT MARK'],
  ['\u200f', 'RIGHT-TO-LEFT MARK'],
  ['\u202a', 'LEFT-TO-RIGHT EMBEDDING'],
  ['\u202b', 'RIGHT-TO-LEFT EMBEDDING'],
  ['\u202c', 'POP DIRECTIONAL FORMATTING'],
  ['\u202d', 'LEFT-TO-RIGHT OVERRIDE'],
  ['\u202e', 'RIGHT-TO-LEFT OVERRIDE'],
  ['\u2066', 'LEFT-TO-RIGHT ISOLATE'],
  ['\u2067', 'RIGHT-TO-LEFT ISOLATE'],
  ['\u2068', 'FIRST STRONG ISOLATE'],
  ['\u2069', 'POP DIRECTIONAL ISOLATE'],
]);
// One class of exactly the characters named above, to test for one and to find each.
const CONTROL_CLASS = `[${[...BIDI_CONTROL_NAMES.keys()].join('')}]`;
const BIDI_CONTROL = new RegExp(CONTROL_CLASS);
const BIDI_CONTROLS = new RegExp(CONTROL_CLASS, 'g');

/** True when `text` holds a bidi control. */
export function hasBidiControl(text) {
  return BIDI_CONTROL.test(text);
}

/** The marker shown for one bidi control: `⟨U+202E⟩`. */
export function bidiMarker(control) {
  const code = control.codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
  return `⟨U+${code}⟩`;
}

/**
 * `text` cut into what is drawn: stretches of text, and each bidi control on its own as
 * `{marker, name}` (`text` is the control itself). Concatenated, the pieces' text is `text`.
 * @returns {Array<{text: string, marker: string|null, name: string|null}>}
 */
export function bidiPieces(text) {
  const pieces = [];
  let from = 0;
  BIDI_CONTROLS.lastIndex = 0;
  for (let match = BIDI_CONTROLS.exec(text); match; match = BIDI_CONTROLS.exec(text)) {
    if (match.index > from) pieces.push({ text: text.slice(from, match.index), marker: null, name: null });
    const control = match[0];
    pieces.push({ text: control, marker: bidiMarker(control), name: BIDI_CONTROL_NAMES.get(control) });
    from = match.index + 1;
  }
  if (from < text.length) pieces.push({ text: text.slice(from), marker: null, name: null });
  return pieces;
}

/** The nodes that show `text`: text nodes, and a `.bidi-control` span per bidi control. */
export function visibleTextNodes(doc, text) {
  if (!hasBidiControl(text)) return [doc.createTextNode(text)];
  return bidiPieces(text).map(({ text: piece, marker, name }) => {
    if (marker === null) return doc.createTextNode(piece);
    const span = doc.createElement('span');
    span.className = 'bidi-control';
    span.title = `${name} (a bidi control, shown instead of applied)`;
    span.append(doc.createTextNode(marker));
    return span;
  });
}

/** Replaces the content of `el` with `text`, its bidi controls shown as markers. */
export function setVisibleText(el, text) {
  el.replaceChildren(...visibleTextNodes(el.ownerDocument, text));
}
