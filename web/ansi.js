// Terminal output as styled runs, the way a terminal would show it (pure, no DOM).
//
// Commands run in a PTY print ANSI escape sequences. `parseAnsi(text)` keeps what a reader
// needs and drops the rest:
// - SGR (`ESC [ ... m`): the 16 and 256 colours, 24-bit colour, bold, dim, italic, underline,
//   inverse, strikethrough and their resets become the style of each run;
// - a carriage return moves back to the start of the line, so the next text overwrites it (a
//   progress bar ends as its last state); backspace steps back one column; `ESC [ K` erases the
//   line (to its end, to the cursor, or whole) and `ESC [ n G` moves to column n (at most
//   MAX_COLUMN), because progress printers use them instead of a carriage return;
// - every other escape sequence (cursor movement, OSC titles and hyperlinks, DCS, charset
//   switches) and every other control character is dropped; a hyperlink keeps its text.
// Text is only ever text: runs are strings for text nodes, never HTML.

/** The 16 colours are classes (the stylesheet themes them); the rest are computed colours. */
const BASIC_COLOURS = 16;

/**
 * The right margin of the cursor (0-based): `ESC [ n G` past it stops there, as a terminal
 * stops at its last column. Real column moves stay within a terminal's width; this bounds what
 * one sequence can add to a line (at most this many padding spaces) however large its n.
 */
export const MAX_COLUMN = 1024;

const ESC = '\x1b';
const CSI_8BIT = '\x9b';
const OSC_8BIT = '\x9d';
const BEL = '\x07';
// Characters that need more than "append as text": every C0 control but tab and every C1.
const SPECIAL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;
const ANY_SPECIAL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;
// DCS, SOS, PM, APC: strings that run to ST (ESC \) and show nothing.
const STRING_STARTS = new Set(['P', 'X', '^', '_', '\x90', '\x98', '\x9e', '\x9f']);

/**
 * @typedef {{fg: number|string|null, bg: number|string|null, bold: boolean, dim: boolean,
 *   italic: boolean, underline: boolean, inverse: boolean, strike: boolean,
 *   classes: string, colour: string|null, background: string|null}} Style
 *   `fg`/`bg`: a palette index 0-255, a `rgb(r, g, b)` string, or null (the default).
 *   `classes`, `colour`, `background`: what a renderer applies (class names for the 16
 *   colours and the attributes, computed CSS colours for the others).
 * @typedef {{text: string, style: Style|null}} Run   `style` null is plain text.
 */

/**
 * @param {string} text the stored output.
 * @param {ReturnType<typeof createSgrState>} [sgr] the styles in force where `text` starts
 *   (`styleBefore`), left as they are where it ends.
 * @returns {Run[]} adjacent runs never share a style; concatenated, their text is what shows.
 */
export function parseAnsi(text, sgr = createSgrState()) {
  if (typeof text !== 'string' || text === '') return [];
  if (!ANY_SPECIAL.test(text)) return [{ text, style: sgr.style }];
  const screen = createScreen();
  let i = 0;
  SPECIAL.lastIndex = 0;
  while (i < text.length) {
    SPECIAL.lastIndex = i;
    const match = SPECIAL.exec(text);
    const stop = match ? match.index : text.length;
    if (stop > i) screen.write(text.slice(i, stop), sgr.style);
    if (!match) break;
    i = control(text, stop, screen, sgr);
  }
  return screen.finish();
}

/**
 * `parseAnsi`, made safe to draw: should the parser fail on some output, the output is still
 * shown, as its text without escape sequences and control characters, unstyled.
 * @param {string} text
 * @param {object} [options]
 * @param {ReturnType<typeof createSgrState>} [options.sgr] as for `parseAnsi`.
 * @param {(error: unknown) => void} [options.onError] told when the parser failed.
 * @param {typeof parseAnsi} [options.parse] the parser (a test passes a failing one).
 * @returns {Run[]}
 */
export function terminalRuns(text, { sgr = createSgrState(), onError = () => {}, parse = parseAnsi } = {}) {
  try {
    return parse(text, sgr);
  } catch (error) {
    onError(error);
    return typeof text === 'string' && text !== '' ? [{ text: strippedText(text), style: null }] : [];
  }
}

// Every CSI as the parser consumes it, malformed ones and ones cut off at the end included.
const CSI_SEQUENCES = /(?:\x1b\[|\x9b)[\x20-\x3f]*[\x40-\x7e]?/g;
const STRIPPED_CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** `text` without CSI sequences and without control characters but tab and newline. */
export function strippedText(text) {
  return text.replace(CSI_SEQUENCES, '').replace(STRIPPED_CONTROLS, '');
}

/** The plain text a reader sees: the runs' text without any styling. */
export function plainText(runs) {
  let out = '';
  for (const run of runs) out += run.text;
  return out;
}

/** Handles the control character at `at`; returns the index after what it consumed. */
function control(text, at, screen, sgr) {
  const ch = text[at];
  switch (ch) {
    case '\n':
      screen.newline();
      return at + 1;
    case '\r':
      screen.column(0);
      return at + 1;
    case '\b':
      screen.back();
      return at + 1;
    case CSI_8BIT:
      return csi(text, at + 1, screen, sgr);
    case OSC_8BIT:
      return skipString(text, at + 1, true);
    case ESC:
      return escape(text, at + 1, screen, sgr);
    default:
      return STRING_STARTS.has(ch) ? skipString(text, at + 1, false) : at + 1;
  }
}

const between = (text, i, low, high) => i < text.length && text.charCodeAt(i) >= low && text.charCodeAt(i) <= high;

/**
 * After ESC, as ECMA-48 reads it: `[` a CSI, `]` an OSC string, `P X ^ _` the other strings,
 * and otherwise intermediates (0x20-0x2F) and one final byte (0x30-0x7E): charset switches,
 * keypad modes... Anything else is no sequence: the ESC alone is dropped and the character
 * after it is itself (a tab, another ESC, a letter of any script), as a terminal does. It
 * used to be swallowed with the ESC, so `ghp_ESCé` and 36 letters showed as a token that
 * masking, which keeps the `é`, never saw.
 */
function escape(text, at, screen, sgr) {
  const next = text[at];
  if (next === undefined) return at;
  if (next === '[') return csi(text, at + 1, screen, sgr);
  if (next === ']') return skipString(text, at + 1, true);
  if (STRING_STARTS.has(next)) return skipString(text, at + 1, false);
  let i = at;
  while (between(text, i, 0x20, 0x2f)) i += 1;
  if (i >= text.length) return i; // cut off by truncation: nothing to show
  return between(text, i, 0x30, 0x7e) ? i + 1 : at;
}

/**
 * `CSI params intermediates final`: SGR, erase-in-line and column are kept, the rest dropped.
 * A malformed one (a parameter byte after an intermediate: `ESC[38;2;999;-1;0m`) is consumed
 * whole, to its final byte, and ignored, as a terminal ignores it; it used to end at the odd
 * byte and show the rest (`1;0m`). Any other character ends the sequence and is itself.
 */
function csi(text, at, screen, sgr) {
  let i = at;
  while (between(text, i, 0x30, 0x3f)) i += 1;
  const params = text.slice(at, i);
  while (between(text, i, 0x20, 0x2f)) i += 1;
  const wellFormed = !between(text, i, 0x30, 0x3f);
  while (between(text, i, 0x20, 0x3f)) i += 1;
  if (i >= text.length) return i; // cut off by truncation: nothing to show
  if (!between(text, i, 0x40, 0x7e)) return i; // no final byte: dropped so far, the character is itself
  const final = text[i];
  const plain = wellFormed && /^[\d;:]*$/.test(params); // private modes (`?25l`) are never SGR
  if (final === 'm' && plain) sgr.apply(params);
  else if (final === 'K' && plain) screen.erase(firstNumber(params, 0));
  else if (final === 'G' && plain) screen.column(Math.max(1, firstNumber(params, 1)) - 1);
  return i + 1;
}

/**
 * Skips an OSC string (`osc`) or a DCS, SOS, PM or APC string. Each ends at ST (`ESC \\` or
 * 0x9C), an OSC at BEL too. Any other ESC ends the string as well, and begins the next
 * sequence, as in a terminal's parser. An OSC that is never terminated ends at the end of its
 * line, whose line feed is kept: it would otherwise hide all the output after it, lines
 * printed later included, where a terminal shows them (terminals bound such strings). A title,
 * a link (OSC 8) or a clipboard copy (OSC 52) never holds a line feed. Masking reads OSC strings
 * the same way (server/shellexec/projection/shown.py). The other strings still run to their
 * end: their data (sixel images) may hold line feeds.
 */
function skipString(text, at, osc) {
  for (let i = at; i < text.length; i += 1) {
    const ch = text[i];
    if (osc && ch === BEL) return i + 1;
    if (osc && ch === '\n') return i;
    if (ch === '\x9c') return i + 1;
    if (ch === ESC) return text[i + 1] === '\\' ? i + 2 : i;
  }
  return text.length;
}

function firstNumber(params, fallback) {
  const first = params.split(/[;:]/)[0];
  return first === '' ? fallback : Number(first);
}

// ---- the screen: finished lines as runs, and the line the cursor is on --------------------

function createScreen() {
  const done = []; // runs of finished lines, newlines included
  let line = createLine();
  let col = 0;

  return {
    write(text, style) {
      line.write(col, text, style);
      col += text.length;
    },
    newline() {
      line.appendTo(done);
      pushRun(done, '\n', null);
      line = createLine();
      col = 0;
    },
    column(n) {
      col = Math.min(Math.max(0, n), MAX_COLUMN);
    },
    back() {
      col = Math.max(0, col - 1);
    },
    erase(mode) {
      if (mode === 0) line.clearFrom(col);
      else if (mode === 1) line.clearBefore(col);
      else if (mode === 2) line = createLine();
    },
    finish() {
      line.appendTo(done);
      line = createLine();
      return done;
    },
  };
}

function pushRun(runs, text, style) {
  const last = runs[runs.length - 1];
  if (last && last.style === style) last.text += text;
  else runs.push({ text, style });
}

/**
 * The line the cursor is on. While text only ever goes on at or past its end (most output), it
 * is kept as runs. The first write before the end, or the first erasure, turns it into cells,
 * one per column (a UTF-16 unit, as the cursor counts): a character, its style and the tick of
 * the write that set it. From then on a write costs the cells it writes, however many runs the
 * line holds (rebuilding the runs at every carriage-return rewrite made a many-coloured line
 * quadratic), and the cells become runs once, when the line ends. Erasing up to the cursor is
 * recorded rather than applied, so a repeated `ESC [ 1 K` at the end of a long line costs
 * nothing each time.
 */
function createLine() {
  const runs = []; // the line while it only grows at its end
  let length = 0;
  let cells = null; // {chars, styles, ticks, erasures, tick} once written before its end

  function toCells() {
    if (cells) return cells;
    cells = { chars: [], styles: [], ticks: [], erasures: [], tick: 0 };
    for (const run of runs) {
      for (let i = 0; i < run.text.length; i += 1) setCell(cells.chars.length, run.text[i], run.style);
    }
    return cells;
  }

  function setCell(at, char, style) {
    cells.chars[at] = char;
    cells.styles[at] = style;
    cells.ticks[at] = cells.tick;
  }

  function padTo(col) {
    for (let at = cells.chars.length; at < col; at += 1) setCell(at, ' ', null);
  }

  return {
    write(col, text, style) {
      if (!cells && col >= length) {
        if (col > length) pushRun(runs, ' '.repeat(col - length), null); // col <= MAX_COLUMN here
        pushRun(runs, text, style);
        length = col + text.length;
        return;
      }
      toCells().tick += 1;
      padTo(col);
      for (let i = 0; i < text.length; i += 1) setCell(col + i, text[i], style);
    },
    /** `ESC [ K`: the cells from the cursor on are gone. */
    clearFrom(col) {
      if (col >= (cells ? cells.chars.length : length)) return;
      const { chars, styles, ticks } = toCells();
      chars.length = styles.length = ticks.length = col;
    },
    /** `ESC [ 1 K`: the cells before the cursor show blank (the line reaches the cursor at least). */
    clearBefore(col) {
      const { erasures } = toCells();
      cells.tick += 1;
      padTo(col);
      // Erasures in effect, oldest first: `end` decreases and `tick` increases, since a newer
      // erasure reaching as far hides an older one entirely.
      while (erasures.length > 0 && erasures[erasures.length - 1].end <= col) erasures.pop();
      erasures.push({ end: col, tick: cells.tick });
    },
    /** Appends the line to `out`, a run per stretch of one style. */
    appendTo(out) {
      if (!cells) {
        for (const run of runs) pushRun(out, run.text, run.style);
        return;
      }
      const { chars, styles, ticks, erasures } = cells;
      let newest = erasures.length - 1; // the newest erasure still covering the cell
      let text = '';
      let style = null;
      for (let at = 0; at < chars.length; at += 1) {
        while (newest >= 0 && erasures[newest].end <= at) newest -= 1;
        const blank = newest >= 0 && erasures[newest].tick > ticks[at];
        const cellStyle = blank ? null : styles[at];
        if (cellStyle !== style && text !== '') {
          pushRun(out, text, style);
          text = '';
        }
        style = cellStyle;
        text += blank ? ' ' : chars[at];
      }
      if (text !== '') pushRun(out, text, style);
    },
  };
}

// ---- SGR ----------------------------------------------------------------------------------

const DEFAULT_ATTRS = Object.freeze({
  fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, inverse: false, strike: false,
});

// An SGR sequence as the read-back below finds it (the parser's own reading is `csi`).
const SGR_SEQUENCE = /(?:\x1b\[|\x9b)([\d;:]*)m/g;
const FULL_RESETS = ['\x1b[0m', '\x1b[m'];

/**
 * The styles in force at `offset` of `text` (a line start): only the SGR sequences since the last
 * full reset (`ESC [ 0 m` or `ESC [ m`) before it matter, so dense output, which resets often,
 * is read back a few sequences only. Output that never resets is read from its start: drawing
 * many chunks that way costs chunks x length, so the page uses `createChunkStyles`, which gives
 * the same styles.
 */
export function styleBefore(text, offset) {
  const sgr = createSgrState();
  const reset = lastReset(text, 0, offset);
  applySequences(text, Math.max(0, reset), offset, sgr);
  return sgr;
}

/**
 * The styles in force at each of `starts` (ascending offsets of line starts in `text`, the
 * first 0), for chunks drawn in any order: `at(k)` is what `styleBefore(text, starts[k])` is.
 * Each is read from the nearest start already known or from the last full reset, whichever is
 * nearer, and every start passed on the way is remembered. So each stretch of the text is read
 * about once however the chunks are drawn (from the tail up, as a reader scrolls, or in
 * order), and a chunk next to one already drawn costs its own length, where `styleBefore` for
 * every chunk of output that never resets reads back to the start each time.
 * @param {string} text
 * @param {number[]} starts
 * @returns {{at(k: number): ReturnType<typeof createSgrState>, readonly read: number}}
 *   `at` gives a state of its own to parse from; `read` counts the characters read so far.
 */
export function createChunkStyles(text, starts) {
  const known = new Array(starts.length); // the attributes in force at each start, once read
  known[0] = DEFAULT_ATTRS;
  let read = 0;

  function learn(k) {
    let j = k - 1;
    while (known[j] === undefined) j -= 1;
    const to = starts[k];
    const reset = lastReset(text, starts[j], to);
    read += to - Math.max(reset, starts[j]); // the search for a reset looked at as much
    const from = reset >= 0 ? reset : starts[j];
    const sgr = createSgrState(reset >= 0 ? DEFAULT_ATTRS : known[j]);
    // Starts at or before a reset are left unknown: the styles before the reset were not read.
    let next = j + 1;
    while (next < k && starts[next] <= from) next += 1;
    applySequences(text, from, to, sgr, (index) => {
      for (; next < k && starts[next] <= index; next += 1) known[next] = sgr.attrs;
    });
    for (; next <= k; next += 1) known[next] = sgr.attrs;
    read += to - from;
  }

  return {
    at(k) {
      if (known[k] === undefined) learn(k);
      return createSgrState(known[k]);
    },
    get read() {
      return read;
    },
  };
}

/**
 * The start of the last full reset that starts in [from, to) of `text`, or -1. It may end past
 * `to`, as `lastIndexOf` finds it; the search reads only that stretch of the text.
 */
function lastReset(text, from, to) {
  if (to <= from) return -1;
  const stretch = text.slice(from, to + 3); // a reset is at most 4 characters long
  const at = Math.max(...FULL_RESETS.map((reset) => stretch.lastIndexOf(reset, to - 1 - from)));
  return at < 0 ? -1 : from + at;
}

/**
 * Applies to `sgr` the SGR sequences that start in [from, to) of `text`, in order, telling
 * `before(index)` where each starts before it is applied.
 */
function applySequences(text, from, to, sgr, before = () => {}) {
  const sequences = new RegExp(SGR_SEQUENCE);
  sequences.lastIndex = from;
  for (let match = sequences.exec(text); match && match.index < to; match = sequences.exec(text)) {
    before(match.index);
    sgr.apply(match[1]);
  }
}

/**
 * The styles SGR sequences set, as they are applied in order.
 * @param {typeof DEFAULT_ATTRS} [attrs] the attributes in force before the first one.
 */
export function createSgrState(attrs = DEFAULT_ATTRS) {
  // Output repeats the same few sequences from the same few states: remember each transition,
  // so a dense body costs a map lookup per sequence rather than a parse.
  const transitions = new Map(); // `${state key}\0${params}` -> state
  const interned = new Map(); // state key -> state, so equal styles are one object and runs merge
  let current = stateOf({ ...attrs }, interned);
  const sgr = {
    style: current.style,
    /** The attributes in force now (not to be changed: pass them to `createSgrState`). */
    get attrs() {
      return current.attrs;
    },
    apply(params) {
      const id = `${current.key}\0${params}`;
      let next = transitions.get(id);
      if (!next) {
        next = stateOf(applySgr(current.attrs, params), interned);
        transitions.set(id, next);
      }
      current = next;
      sgr.style = current.style;
    },
  };
  return sgr;
}

function stateOf(attrs, interned) {
  const key = `${attrs.fg}|${attrs.bg}|${+attrs.bold}${+attrs.dim}${+attrs.italic}${+attrs.underline}${+attrs.inverse}${+attrs.strike}`;
  let state = interned.get(key);
  if (!state) {
    const plain = key === 'null|null|000000';
    state = { key, attrs, style: plain ? null : Object.freeze({ ...attrs, ...look(attrs) }) };
    interned.set(key, state);
  }
  return state;
}

/** The attribute changes of one SGR sequence (`params` like `1;38;5;208` or `38:2::1:2:3`). */
export function applySgr(previous, params) {
  return applySgrCodes(previous, params === '' ? [['0']] : params.split(';').map((part) => part.split(':')));
}

/**
 * `applySgr` on a sequence's codes, each a number and its colon-separated arguments
 * (`[['1'], ['38', '5', '208']]`). Every code is read by its index, at most twice: the
 * semicolon form of an extended colour reads its arguments in the codes after it, and the loop
 * goes on past them. It used to copy all the codes after each 38, 48 or 58, so one sequence of
 * 37,000 of them (256 KiB of output) took 17 s, again at each poll of a running command.
 */
export function applySgrCodes(previous, codes) {
  const attrs = { ...previous };
  for (let i = 0; i < codes.length; i += 1) {
    const code = codes[i];
    const n = code[0] === '' ? 0 : Number(code[0]);
    if (n === 38 || n === 48 || n === 58) {
      // Extended colour: the colon form carries its arguments along, the semicolon form takes the next codes.
      const colonForm = code.length > 1;
      const start = i + 1;
      const { colour, used } = colonForm
        ? extendedColour((k) => code[k + 1], code.length - 1, true)
        : extendedColour((k) => codes[start + k][0], codes.length - start, false);
      if (!colonForm) i += used;
      if (colour !== undefined && n === 38) attrs.fg = colour;
      if (colour !== undefined && n === 48) attrs.bg = colour;
      continue;
    }
    applyCode(attrs, n);
  }
  return attrs;
}

function applyCode(attrs, n) {
  if (n === 0) Object.assign(attrs, DEFAULT_ATTRS);
  else if (n === 1) attrs.bold = true;
  else if (n === 2) attrs.dim = true;
  else if (n === 3) attrs.italic = true;
  else if (n === 4) attrs.underline = true;
  else if (n === 7) attrs.inverse = true;
  else if (n === 9) attrs.strike = true;
  else if (n === 21) attrs.underline = true; // doubly underlined: shown as underlined
  else if (n === 22) attrs.bold = attrs.dim = false;
  else if (n === 23) attrs.italic = false;
  else if (n === 24) attrs.underline = false;
  else if (n === 27) attrs.inverse = false;
  else if (n === 29) attrs.strike = false;
  else if (n >= 30 && n <= 37) attrs.fg = n - 30;
  else if (n === 39) attrs.fg = null;
  else if (n >= 40 && n <= 47) attrs.bg = n - 40;
  else if (n === 49) attrs.bg = null;
  else if (n >= 90 && n <= 97) attrs.fg = n - 90 + 8;
  else if (n >= 100 && n <= 107) attrs.bg = n - 100 + 8;
  // Anything else (blink, fonts, frames...) is ignored.
}

/**
 * `5;n` or `2;r;g;b` (colon form may carry a colour-space id before r), from the `count`
 * arguments `arg(k)` reads (at most 5 of them, each once): the colour, or undefined, and how
 * many arguments it used.
 */
function extendedColour(arg, count, colonForm) {
  const at = (k) => (k < count ? arg(k) : undefined);
  const mode = Number(at(0));
  if (mode === 5) {
    const index = Number(at(1));
    const ok = count >= 2 && Number.isInteger(index) && index >= 0 && index <= 255;
    return { colour: ok ? index : undefined, used: Math.min(2, count) };
  }
  if (mode === 2) {
    const first = colonForm && count >= 5 ? 2 : 1;
    const rgb = [];
    for (let k = first; k < Math.min(first + 3, count); k += 1) {
      const value = at(k);
      rgb.push(value === '' ? 0 : Number(value));
    }
    const ok = rgb.length === 3 && rgb.every((v) => Number.isInteger(v) && v >= 0 && v <= 255);
    return { colour: ok ? `rgb(${rgb[0]}, ${rgb[1]}, ${rgb[2]})` : undefined, used: Math.min(4, count) };
  }
  return { colour: undefined, used: count > 0 ? 1 : 0 };
}

// ---- how a style is drawn -----------------------------------------------------------------

function look(attrs) {
  let fg = attrs.fg;
  let bg = attrs.bg;
  if (attrs.inverse) [fg, bg] = [bg ?? 'default-bg', fg ?? 'default-fg'];
  const classes = [];
  if (attrs.bold) classes.push('ansi-bold');
  if (attrs.dim) classes.push('ansi-dim');
  if (attrs.italic) classes.push('ansi-italic');
  if (attrs.underline && attrs.strike) classes.push('ansi-underline-strike');
  else if (attrs.underline) classes.push('ansi-underline');
  else if (attrs.strike) classes.push('ansi-strike');
  const colour = colourLook(fg, 'fg', classes);
  const background = colourLook(bg, 'bg', classes);
  return { classes: classes.join(' '), colour, background };
}

/** A class for the themed colours (returns null), or a CSS colour for the computed ones. */
function colourLook(value, kind, classes) {
  if (value === null) return null;
  if (value === 'default-fg' || value === 'default-bg') {
    classes.push(`ansi-${kind}-reverse`); // the other default colour of the output region
    return null;
  }
  if (typeof value === 'number' && value < BASIC_COLOURS) {
    classes.push(`ansi-${kind}-${value}`);
    return null;
  }
  return typeof value === 'number' ? paletteColour(value) : value;
}

/** xterm's 256-colour palette above the 16 basic colours: a 6x6x6 cube, then 24 greys. */
export function paletteColour(index) {
  if (index >= 232) {
    const grey = 8 + (index - 232) * 10;
    return `rgb(${grey}, ${grey}, ${grey})`;
  }
  const cube = index - 16;
  const level = (n) => (n === 0 ? 0 : 55 + n * 40);
  return `rgb(${level(Math.floor(cube / 36))}, ${level(Math.floor(cube / 6) % 6)}, ${level(cube % 6)})`;
}
