// Unit tests of an output region that keeps its end in view while the reader follows it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { followTail } from '../follow-tail.js';
import { fakeResizeObserver } from './fakes.mjs';

/** A scrollable region whose content height a test changes, as layout would. */
function fakeRegion({ contentHeight = 1000, clientHeight = 300 } = {}) {
  const listeners = new Map(); // event type -> listeners
  let top = 0;
  const on = (type, listener) => {
    if (!listeners.has(type)) listeners.set(type, new Set());
    listeners.get(type).add(listener);
  };
  const off = (type, listener) => listeners.get(type)?.delete(listener);
  const fire = (type) => listeners.get(type)?.forEach((listener) => listener({ type }));
  const el = {
    children: [{ name: 'chunk 1' }, { name: 'chunk 2' }],
    clientHeight,
    scrollHeight: contentHeight,
    get scrollTop() {
      return top;
    },
    set scrollTop(value) {
      top = Math.max(0, Math.min(value, el.scrollHeight - el.clientHeight));
    },
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
    input: (type) => fire(type),
    listening: () => [...listeners.values()].reduce((sum, set) => sum + set.size, 0),
    atEnd: () => el.scrollHeight - top - el.clientHeight,
  };
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
