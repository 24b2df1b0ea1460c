// Unit tests of keeping the page at its bottom around live changes, reading no layout per change.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { createBottomKeeper } from '../page-bottom.js';

/** A window whose page height a test changes; it counts every read of that height (a read
 * after a change is a forced layout) and every scroll. */
function fakeWindow({ height = 3000, innerHeight = 800 } = {}) {
  const listeners = new Set();
  const frames = [];
  const counts = { heightReads: 0, scrolls: 0 };
  let pageHeight = height;
  const win = {
    innerHeight,
    scrollY: height - innerHeight,
    document: {
      documentElement: {
        get scrollHeight() {
          counts.heightReads += 1;
          return pageHeight;
        },
      },
    },
    scrollTo(x, y) {
      counts.scrolls += 1;
      win.scrollY = Math.max(0, Math.min(y, pageHeight - innerHeight));
    },
    addEventListener: (type, listener) => listeners.add(listener),
    removeEventListener: (type, listener) => listeners.delete(listener),
    /** The browser's scroll event, for the reader's scroll or the page's own. */
    scrolled: () => listeners.forEach((listener) => listener()),
    grow: (by) => {
      pageHeight += by;
    },
    atBottom: () => win.scrollY === pageHeight - innerHeight,
    listeners,
  };
  const requestFrame = (fn) => frames.push(fn);
  const frame = () => frames.splice(0).forEach((fn) => fn());
  return { win, counts, requestFrame, frame };
}

describe('createBottomKeeper', () => {
  test('changes read no layout, and the page goes back to its bottom once, at the next frame', () => {
    const { win, counts, requestFrame, frame } = fakeWindow();
    const bottom = createBottomKeeper({ win, requestFrame });
    for (let i = 0; i < 1000; i += 1) bottom.around(() => win.grow(10)); // a streamed reply
    assert.deepEqual(counts, { heightReads: 0, scrolls: 0 }, 'nothing measured per change');
    frame();
    assert.equal(counts.scrolls, 1);
    assert.ok(counts.heightReads <= 1);
    assert.equal(win.atBottom(), true);
  });

  test('its own scroll does not count as the reader leaving, even after the page grew', () => {
    const { win, requestFrame, frame } = fakeWindow();
    const bottom = createBottomKeeper({ win, requestFrame });
    bottom.around(() => win.grow(500));
    frame();
    bottom.around(() => win.grow(500)); // more before the first scroll's event arrives
    win.scrolled();
    assert.equal(bottom.atBottom, true);
    frame();
    assert.equal(win.atBottom(), true);
  });

  test('a reader who scrolled up stays where they are; back at the bottom, it follows again', () => {
    const { win, counts, requestFrame, frame } = fakeWindow();
    const bottom = createBottomKeeper({ win, requestFrame });
    win.scrollY = 100;
    win.scrolled();
    assert.equal(bottom.atBottom, false);
    bottom.around(() => win.grow(500));
    frame();
    assert.equal(win.scrollY, 100);
    assert.equal(counts.scrolls, 0);

    win.scrollY = 3500 - 800 - 40; // within 80 px of the bottom
    win.scrolled();
    bottom.around(() => win.grow(500));
    frame();
    assert.equal(win.atBottom(), true);
  });

  test('a change that was ignored does not move the page', () => {
    const { win, counts, requestFrame, frame } = fakeWindow();
    const bottom = createBottomKeeper({ win, requestFrame });
    assert.equal(bottom.around(() => 'ignored'), 'ignored');
    frame();
    assert.equal(counts.scrolls, 0);
  });

  test('a change made in a frame goes to the bottom at once', () => {
    const { win, counts, requestFrame } = fakeWindow();
    const bottom = createBottomKeeper({ win, requestFrame });
    bottom.aroundInFrame(() => win.grow(300));
    assert.equal(counts.scrolls, 1);
    assert.equal(win.atBottom(), true);
    bottom.stop();
    assert.equal(win.listeners.size, 0);
  });
});
