// Unit tests of an output region that keeps its end in view while the reader follows it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { followTail } from '../follow-tail.js';

/** A scrollable region whose content height a test changes, as layout would. */
function fakeRegion({ contentHeight = 1000, clientHeight = 300 } = {}) {
  const listeners = new Set();
  let top = 0;
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
    addEventListener: (type, listener) => listeners.add(listener),
    removeEventListener: (type, listener) => listeners.delete(listener),
    /** The scroll event the browser sends after the position changed, by anyone. */
    scrolled: () => listeners.forEach((listener) => listener()),
    listeners,
    atEnd: () => el.scrollHeight - top - el.clientHeight,
  };
  return el;
}

/** A ResizeObserver whose callback a test calls, as layout would after sizes change. */
function fakeResizeObserver() {
  const observers = [];
  class FakeResizeObserver {
    constructor(callback) {
      this.callback = callback;
      this.observed = new Set();
      observers.push(this);
    }
    observe(target) {
      this.observed.add(target);
    }
    disconnect() {
      this.observed.clear();
    }
  }
  const resize = () => observers.forEach((o) => o.observed.size && o.callback([]));
  return { FakeResizeObserver, observers, resize };
}

describe('followTail', () => {
  test('new content goes to the end, and so does a later size change (a chunk laid out)', () => {
    const region = fakeRegion();
    const { FakeResizeObserver, observers, resize } = fakeResizeObserver();
    const follow = followTail(region, { ResizeObserver: FakeResizeObserver });
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
    const { FakeResizeObserver, resize } = fakeResizeObserver();
    const follow = followTail(region, { ResizeObserver: FakeResizeObserver });
    follow.contentChanged();
    region.scrollTop = 200; // the reader's wheel
    region.scrolled();
    assert.equal(follow.following, false);

    region.scrollHeight = 3000;
    resize();
    follow.contentChanged(); // more output
    assert.equal(region.scrollTop, 200, 'the reader is not moved');

    region.scrollTop = 2700; // back to the end
    region.scrolled();
    assert.equal(follow.following, true);
    region.scrollHeight = 3400;
    follow.contentChanged();
    assert.equal(region.atEnd(), 0);
  });

  test('a size change before our own scroll event does not stop following', () => {
    const region = fakeRegion();
    const { FakeResizeObserver, resize } = fakeResizeObserver();
    const follow = followTail(region, { ResizeObserver: FakeResizeObserver });
    follow.contentChanged();
    region.scrollHeight = 1800;
    resize(); // moves again before the first move's scroll event arrives
    region.scrolled();
    assert.equal(follow.following, true);
    assert.equal(region.atEnd(), 0);
  });

  test('dispose stops watching and listening', () => {
    const region = fakeRegion();
    const { FakeResizeObserver, observers } = fakeResizeObserver();
    const follow = followTail(region, { ResizeObserver: FakeResizeObserver });
    follow.contentChanged();
    follow.dispose();
    assert.equal(observers[0].observed.size, 0);
    assert.equal(region.listeners.size, 0);
  });

  test('without a ResizeObserver it still goes to the end on new content', () => {
    const region = fakeRegion();
    const follow = followTail(region, { ResizeObserver: undefined });
    follow.contentChanged();
    assert.equal(region.atEnd(), 0);
  });
});
