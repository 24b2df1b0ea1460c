// Unit tests of an output region that keeps its end in view while the reader follows it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { followTail } from '../follow-tail.js';
import { fakeResizeObserver } from './fakes.mjs';

/**
 * A scrollable region whose content height a test changes, as layout would: `scrollHeight`
 * when set, else the sum of its chunks' heights. Each chunk's box is where its height puts it
 * (the region's viewport at 0); scrolling lands on whole pixels, as on a screen.
 */
function fakeRegion({ contentHeight = 1000, clientHeight = 300, heights = [contentHeight / 2, contentHeight / 2] } = {}) {
  const listeners = new Map(); // event type -> listeners
  let top = 0;
  let height = null;
  const chunk = (name, chunkHeight) => {
    const self = {
      name,
      height: chunkHeight,
      get parentNode() {
        return el.children.includes(self) ? el : null;
      },
      getBoundingClientRect() {
        let y = -top;
        for (const other of el.children) {
          if (other === self) break;
          y += other.height;
        }
        return { top: y, bottom: y + self.height, height: self.height };
      },
    };
    return self;
  };
  const on = (type, listener) => {
    if (!listeners.has(type)) listeners.set(type, new Set());
    listeners.get(type).add(listener);
  };
  const off = (type, listener) => listeners.get(type)?.delete(listener);
  const fire = (type, props = {}) => listeners.get(type)?.forEach((listener) => listener({ type, ...props }));
  const el = {
    children: [],
    clientHeight,
    clientTop: 0,
    get scrollHeight() {
      return height ?? el.children.reduce((sum, { height: h }) => sum + h, 0);
    },
    set scrollHeight(value) {
      height = value;
    },
    get scrollTop() {
      return top;
    },
    set scrollTop(value) {
      top = Math.round(Math.max(0, Math.min(value, el.scrollHeight - el.clientHeight)));
    },
    getBoundingClientRect: () => ({ top: 0 }),
    /** A chunk of `height` px, to put in `children`. */
    chunk: (chunkHeight) => chunk(`chunk ${el.children.length + 1}`, chunkHeight),
    addEventListener: on,
    removeEventListener: off,
    ownerDocument: { addEventListener: on, removeEventListener: off },
    /** The scroll event the browser sends after the position changed, by anyone. */
    scrolled: () => fire('scroll'),
    /** The reader scrolls with the wheel to `position`. */
    wheel(position) {
      fire('wheel');
      el.scrollTop = position;
      fire('scroll');
    },
    /** The reader's input of `type` on the region (or, for `pointerup`, the document). */
    input: (type, props) => fire(type, props),
    listening: () => [...listeners.values()].reduce((sum, set) => sum + set.size, 0),
    atEnd: () => el.scrollHeight - top - el.clientHeight,
  };
  el.children = heights.map((h, i) => chunk(`chunk ${i + 1}`, h));
  return el;
}

function following(region, clock = { now: 0 }) {
  const { FakeResizeObserver, observers, resize } = fakeResizeObserver();
  const follow = followTail(region, { ResizeObserver: FakeResizeObserver, now: () => clock.now });
  return { follow, observers, resize };
}

describe('followTail', () => {
  test('new content goes to the end, and so does a later size change (a chunk laid out)', () => {
    const region = fakeRegion();
    const { follow, observers, resize } = following(region);
    follow.contentChanged();
    assert.equal(region.atEnd(), 0);
    assert.deepEqual([...observers[0].observed], region.children, 'each chunk is watched');

    region.scrollHeight = 2500; // the last chunks were laid out taller than estimated
    resize();
    region.scrolled(); // the browser's scroll event for our own move
    assert.equal(region.atEnd(), 0);
    assert.equal(follow.following, true);
  });

  test('a reader who scrolls up is left where they are; back at the end, it follows again', () => {
    const region = fakeRegion();
    const { follow, resize } = following(region);
    follow.contentChanged();
    region.wheel(200);
    assert.equal(follow.following, false);

    region.scrollHeight = 3000;
    resize();
    follow.contentChanged(); // more output
    assert.equal(region.scrollTop, 200, 'the reader is not moved');

    region.wheel(2700); // back to the end
    assert.equal(follow.following, true);
    region.scrollHeight = 3400;
    follow.contentChanged();
    assert.equal(region.atEnd(), 0);
  });

  test('a scroll the reader did not make never stops the following', () => {
    // A region moved in the page (its row mounted again) is put back at its top by the
    // browser: that scroll stopped the following in four runs of ten on a loaded machine.
    const region = fakeRegion();
    const clock = { now: 0 };
    const { follow, resize } = following(region, clock);
    follow.contentChanged();
    region.scrollTop = 0;
    region.scrolled();
    assert.equal(follow.following, true);
    resize(); // its chunks' sizes, seen again once it is back in the page
    assert.equal(region.atEnd(), 0, 'back at its end');

    region.wheel(300); // the reader, long ago
    clock.now = 5000;
    region.scrollTop = 0;
    region.scrolled();
    assert.equal(follow.following, false, 'a reader who left the end stays left');
    assert.equal(region.scrollTop, 0);
  });

  test('a drag of the scroll bar is the reader until the press is released', () => {
    const region = fakeRegion();
    const clock = { now: 0 };
    const { follow } = following(region, clock);
    follow.contentChanged();
    region.input('pointerdown');
    clock.now = 10_000; // a long drag
    region.scrollTop = 0;
    region.scrolled();
    assert.equal(follow.following, false);
  });

  test('a chunk above a reader who scrolled up, laid out taller, leaves them on the line they read', () => {
    // Going up, the chunks above are drawn and laid out: each was 20 lines (an estimate) or
    // nothing (not drawn yet) until then. A reader pressing Page Up stood still or went down.
    const region = fakeRegion({ heights: [400, 400, 400, 400] });
    const { follow, resize } = following(region);
    follow.contentChanged();
    region.wheel(900); // 100 px into the third chunk
    assert.equal(follow.following, false);
    region.children[0].height = 0; // laid out before it was drawn
    region.children[1].height = 651.5; // long lines wrap
    resize();
    region.scrolled(); // the browser's scroll event for our own move
    assert.equal(region.scrollTop, 900 - 400 + 251.5 + 0.5, 'the third chunk is where it was, to a whole pixel');
    assert.equal(region.children[2].getBoundingClientRect().top, -100.5);
    assert.equal(follow.following, false);
  });

  test('chunks gone above a reader who scrolled up (the head cut past 256 KiB) leave them where they read', () => {
    const region = fakeRegion({ heights: [400, 400, 400, 400] });
    const { follow } = following(region);
    follow.contentChanged();
    region.wheel(900);
    region.children.shift(); // the first chunk's text is gone from the output
    region.children.push(region.chunk(50)); // and more came at the end
    follow.contentChanged();
    assert.equal(region.scrollTop, 500);
    assert.equal(region.children[1].getBoundingClientRect().top, -100);
  });

  test('the place is kept across its own scrolls, so whole pixels never add up', () => {
    const region = fakeRegion({ heights: [400, 400, 400, 400] });
    const { follow, resize } = following(region);
    follow.contentChanged();
    region.wheel(900);
    for (let step = 0; step < 10; step += 1) {
      region.children[0].height += 0.4;
      const before = region.scrollTop;
      resize();
      if (region.scrollTop !== before) region.scrolled(); // the browser's event for our move
    }
    assert.equal(region.scrollTop, 904);
    assert.ok(Math.abs(region.children[2].getBoundingClientRect().top + 100) <= 0.5);
  });

  test('a reader who scrolls again is kept where they went, not taken back', () => {
    const region = fakeRegion({ heights: [400, 400, 400, 400] });
    const { follow, resize } = following(region);
    follow.contentChanged();
    region.wheel(900);
    region.wheel(300);
    region.children[0].height = 500;
    resize();
    assert.equal(region.scrollTop, 300, 'the first chunk grew below its top, under the line read');
    region.children[0].height = 400;
    region.scrollTop = 100; // a script, or the browser
    region.scrolled();
    region.children[3].height = 10;
    resize();
    assert.equal(region.scrollTop, 100);
  });

  test('Page Up or the wheel going up stops the following before the scroll has begun', () => {
    // A size change between the key and its smooth scroll took the region back to its end,
    // and the scroll never happened.
    for (const [type, props] of [['keydown', { key: 'PageUp' }], ['keydown', { key: ' ', shiftKey: true }],
      ['wheel', { deltaY: -120 }]]) {
      const region = fakeRegion({ heights: [400, 400, 400, 400] });
      const { follow, resize } = following(region);
      follow.contentChanged();
      const end = region.scrollTop;
      region.input(type, props);
      assert.equal(follow.following, false, type);
      region.children[3].height = 600; // output arrives before the scroll begins
      resize();
      assert.equal(region.scrollTop, end, 'left where the reader is going up from');
    }
    const region = fakeRegion();
    const { follow } = following(region);
    follow.contentChanged();
    region.input('keydown', { key: 'PageDown' });
    region.input('wheel', { deltaY: 120 });
    assert.equal(follow.following, true, 'going down, at the end, it follows');
    const short = fakeRegion({ contentHeight: 200 }); // all of it in view: nowhere to go up
    const shortFollow = following(short).follow;
    shortFollow.contentChanged();
    short.input('keydown', { key: 'ArrowUp' });
    assert.equal(shortFollow.following, true, 'a key that scrolls nothing decides nothing');
  });

  test('dispose stops watching and listening', () => {
    const region = fakeRegion();
    const { follow, observers } = following(region);
    follow.contentChanged();
    follow.dispose();
    assert.equal(observers[0].observed.size, 0);
    assert.equal(region.listening(), 0);
  });

  test('without a ResizeObserver it still goes to the end on new content', () => {
    const region = fakeRegion();
    const follow = followTail(region, { ResizeObserver: undefined });
    follow.contentChanged();
    assert.equal(region.atEnd(), 0);
  });
});
