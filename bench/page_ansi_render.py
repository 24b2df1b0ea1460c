"""Terminal output rendering in Chromium: 256 KiB of dense SGR output against the same text
without escape sequences, drawn into an output region the page's way (`web/ansi-dom.js`: the
tail's chunks at once, the others when scrolled to), until it is laid out at its tail (issue 14
"Output"). Target: at most 3x.

Also recorded, without a target:
- `coloured_every_chunk_ms`: every chunk of the dense body drawn the page's way, from the tail
  up, as when a reader scrolls up through all of it (until 2026-12-02 this figure was the
  whole body parsed at once, now `coloured_whole_parse_ms`);
- `unreset_every_chunk_ms`: the same for 256 KiB of coloured output that never resets its
  colours (a build log in one colour with attributes toggled), where each chunk's starting
  style cannot be read back from a nearby reset;
- `coloured_whole_parse_ms`: the dense body parsed at once and drawn as one span per run.

The two bodies of the target run in one page, interleaved in rounds; the figures are medians."""

from __future__ import annotations

import re
import statistics

from playwright.sync_api import sync_playwright
from web.browser import launch, new_context

from _service import conclude, running_stack

BODY_BYTES = 256 * 1024
ROUNDS = 15
EVERY_CHUNK_ROUNDS = 5
TARGET = 3.0
SGR = re.compile(r"\x1b\[[\d;]*m")

RENDER = """async ([text, rounds]) => {
  const { renderTerminalText } = await import('/ansi-dom.js');
  const pre = document.createElement('pre');
  pre.className = 'output';
  document.body.append(pre);
  const times = [];
  for (let i = 0; i < rounds; i += 1) {
    pre.replaceChildren();
    void pre.offsetHeight;
    const started = performance.now();
    renderTerminalText(pre, text).dispose(); // the chunks on screen; the rest draw on scroll
    pre.scrollTop = pre.scrollHeight; // the region opens at its tail
    void pre.offsetHeight; // layout is part of showing it
    times.push(performance.now() - started);
  }
  pre.remove();
  return times;
}"""


# Every chunk drawn the page's way, from the tail up. A stand-in for the region's
# IntersectionObserver brings each chunk not drawn at once into view in turn, so the order is
# a reader's scrolling up through the whole body without depending on scroll timing.
EVERY_CHUNK = """async ([text, rounds]) => {
  const { renderTerminalText } = await import('/ansi-dom.js');
  const real = window.IntersectionObserver;
  let observer = null;
  window.IntersectionObserver = class {
    constructor(callback) { this.callback = callback; this.targets = []; observer = this; }
    observe(target) { this.targets.push(target); }
    unobserve() {}
    disconnect() {}
  };
  const pre = document.createElement('pre');
  pre.className = 'output';
  document.body.append(pre);
  const times = [];
  try {
    for (let i = 0; i < rounds; i += 1) {
      pre.replaceChildren();
      void pre.offsetHeight;
      const started = performance.now();
      const view = renderTerminalText(pre, text);
      for (const target of observer.targets.reverse()) {
        observer.callback([{ target, isIntersecting: true }]);
      }
      void pre.offsetHeight;
      times.push(performance.now() - started);
      view.dispose();
    }
  } finally {
    window.IntersectionObserver = real;
    pre.remove();
  }
  return times;
}"""


# The whole body parsed at once and drawn as one span per run.
WHOLE_PARSE = """async (text) => {
  const { parseAnsi } = await import('/ansi.js');
  const pre = document.createElement('pre');
  pre.className = 'output';
  document.body.append(pre);
  const started = performance.now();
  for (const run of parseAnsi(text)) {
    const span = document.createElement('span');
    if (run.style?.classes) span.className = run.style.classes;
    if (run.style?.colour) span.style.color = run.style.colour;
    span.append(run.text);
    pre.append(span);
  }
  void pre.offsetHeight;
  const elapsed = performance.now() - started;
  pre.remove();
  return elapsed;
}"""


def dense_output() -> str:
    """Test-runner-like lines where nearly every word changes colour or attribute."""
    lines: list[str] = []
    i = 0
    while sum(len(line) + 1 for line in lines) < BODY_BYTES:
        lines.append(
            f"\x1b[1;32mPASS\x1b[0m \x1b[2mtests/unit/\x1b[22m\x1b[1mtest_{i:05}.py\x1b[0m "
            f"\x1b[38;5;{16 + i % 216}m{i % 97:02}ms\x1b[0m \x1b[38;2;{i % 256};120;200mok\x1b[0m "
            f"\x1b[4m{i}\x1b[24m \x1b[31m✗\x1b[39m \x1b[33mwarn\x1b[0m")
        i += 1
    return "\n".join(lines)[:BODY_BYTES]


def unreset_output() -> str:
    """A build log in green that toggles bold and a warning colour but never resets fully."""
    lines: list[str] = ["\x1b[32m"]
    i = 0
    while sum(len(line) + 1 for line in lines) < BODY_BYTES:
        lines.append(
            f"compiling \x1b[1mmodule_{i:05}\x1b[22m ({i % 97} units) "
            f"\x1b[33mwarning\x1b[39m: unused \x1b[4mvar_{i}\x1b[24m")
        i += 1
    return "\n".join(lines)[:BODY_BYTES]


def main() -> None:
    coloured = dense_output()
    unreset = unreset_output()
    plain = SGR.sub("", coloured)
    with running_stack() as stack, sync_playwright() as playwright:
        browser = launch(playwright)
        page = new_context(browser, "desktop").new_page()
        page.goto(f"{stack.rest_url}/")
        page.evaluate(RENDER, [coloured, 2])  # warm up the modules and the JIT
        plain_ms, coloured_ms = [], []
        for _ in range(ROUNDS):
            plain_ms += page.evaluate(RENDER, [plain, 1])
            coloured_ms += page.evaluate(RENDER, [coloured, 1])
        every_chunk, unreset_every_chunk = (
            statistics.median(page.evaluate(EVERY_CHUNK, [body, EVERY_CHUNK_ROUNDS]))
            for body in (coloured, unreset))
        whole_parse = page.evaluate(WHOLE_PARSE, coloured)
        spans = page.evaluate("""async (text) => {
          const { parseAnsi } = await import('/ansi.js');
          return parseAnsi(text).filter((run) => run.style !== null).length;
        }""", coloured)
        browser.close()
    plain_median, coloured_median = statistics.median(plain_ms), statistics.median(coloured_ms)
    ratio = coloured_median / plain_median
    conclude("page ANSI render (256 KiB dense SGR vs the same text plain, Chromium, layout incl.)",
             f"plain {plain_median:.1f} ms, coloured {coloured_median:.1f} ms "
             f"({spans} styled runs)",
             {"plain_ms": plain_median, "coloured_ms": coloured_median, "styled_runs": spans,
              "coloured_every_chunk_ms": every_chunk, "unreset_every_chunk_ms": unreset_every_chunk,
              "coloured_whole_parse_ms": whole_parse},
             ratio, f"<= {TARGET:g}", ratio <= TARGET)


if __name__ == "__main__":
    main()
