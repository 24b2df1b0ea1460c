// Unit tests of keeping the row the reader reads where it is, whatever changes above it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { firstVisibleRow, holdReaderPlace } from '../reader-place.js';
import { fakeResizeObserver } from './fakes.mjs';

/** A page of rows of given heights; the test grows a row as layout would, and counts every
 * read of the layout. Positions are in page pixels; the screen starts at `scrollY`. */
function fakePage(heights) {
  const listeners = new Set();
  const counts = { reads: 0, scrolls: 0 };
  const rows = heights.map((height) => ({ height, isConnected: true }));
  const topOf = (row) => rows.slice(0, rows.indexOf(row)).reduce((sum, r) => sum + r.height, 0);
  for (const row of rows) {
    row.getBoundingClientRect = () => {
      counts.reads += 1;
      const top = topOf(row) - win.scrollY;
      return { top, bottom: top + row.height };
    };
  }
  const win = {
    scrollY: 0,
    document: { body: { name: 'body' } },
    scrollBy(x, y) {
      counts.scrolls += 1;
      win.scrollY = Math.max(0, win.scrollY + y);
    },
    addEventListener: (type, listener) => listeners.add(listener),
    removeEventListener: (type, listener) => listeners.delete(listener),
    /** The browser's scroll event, for the reader's scroll or the page's own. */
    scrolled: () => listeners.forEach((listener) => listener()),
    listeners,
  };
  return { win, counts, rows, listEl: { children: rows } };
}

/** The reader's place held over `page`, with a ResizeObserver the test drives. */
function holding(page, { atBottom = false } = {}) {
  const { FakeResizeObserver, observers, resize: laidOut } = fakeResizeObserver();
  const reader = { atBottom };
  const held = holdReaderPlace({
    listEl: page.listEl, readerAtBottom: () => reader.atBottom, win: page.win, ResizeObserver: FakeResizeObserver,
  });
  return { held, observers, laidOut, reader };
}

describe('holdReaderPlace', () => {
  test('a row growing above the reader leaves the row they read where it was', () => {
    const page = fakePage(Array(50).fill(100));
    const { laidOut } = holding(page);
    page.win.scrollY = 1250; // the reader reads row 12, half of it on screen
    page.win.scrolled();
    page.rows[3].height += 350; // an open output above, drawn again
    laidOut();
    assert.equal(page.win.scrollY, 1600);
    assert.equal(page.rows[12].getBoundingClientRect().top, -50);
  });

  test('a change below the reader moves nothing', () => {
    const page = fakePage(Array(50).fill(100));
    const { laidOut } = holding(page);
    page.win.scrollY = 1250;
    page.win.scrolled();
    page.rows[30].height += 500;
    laidOut();
    assert.equal(page.win.scrollY, 1250);
    assert.equal(page.counts.scrolls, 0);
  });

  test('its own scroll does not note the place again, so rounding never adds up', () => {
    const page = fakePage(Array(50).fill(100));
    const { laidOut } = holding(page);
    page.win.scrollY = 1250;
    page.win.scrolled();
    const scrollBy = page.win.scrollBy;
    page.win.scrollBy = (x, y) => scrollBy(x, Math.round(y)); // whole pixels, as a screen has
    for (let step = 0; step < 10; step += 1) {
      page.rows[3].height += 18.85; // a line of output a time
      laidOut();
      page.win.scrolled(); // the event of the page's own scroll
    }
    const top = page.rows[12].getBoundingClientRect().top;
    assert.ok(Math.abs(top - -50) <= 0.5, `the row read is at ${top}`);
  });

  test('a reader at the bottom is left to page-bottom.js', () => {
    const page = fakePage(Array(50).fill(100));
    const { laidOut, reader } = holding(page, { atBottom: true });
    page.win.scrollY = 4200;
    page.win.scrolled();
    page.rows[3].height += 350;
    laidOut();
    assert.equal(page.counts.scrolls, 0);
    assert.equal(page.counts.reads, 0, 'nothing measured for a reader at the bottom');
    reader.atBottom = false;
  });

  test('a row read that was unmounted gives way to the first row on screen now', () => {
    const page = fakePage(Array(50).fill(100));
    const { laidOut } = holding(page);
    page.win.scrollY = 1250;
    page.win.scrolled();
    page.rows[12].isConnected = false;
    laidOut();
    assert.equal(page.counts.scrolls, 0);
  });

  test('stop stops watching and listening', () => {
    const page = fakePage([100]);
    const { held, observers } = holding(page);
    assert.deepEqual([...observers[0].observed], [page.win.document.body]);
    held.stop();
    assert.equal(observers[0].observed.size, 0);
    assert.equal(page.win.listeners.size, 0);
  });
});

describe('firstVisibleRow', () => {
  test('finds the first row with a part on screen in a few reads', () => {
    const page = fakePage(Array(240).fill(100));
    page.win.scrollY = 12_345;
    assert.equal(firstVisibleRow(page.listEl), page.rows[123]);
    assert.ok(page.counts.reads <= 9, `${page.counts.reads} reads`);
    page.win.scrollY = 0;
    assert.equal(firstVisibleRow(page.listEl), page.rows[0]);
    page.win.scrollY = 30_000;
    assert.equal(firstVisibleRow(page.listEl), null);
    assert.equal(firstVisibleRow({ children: [] }), null);
  });
});
