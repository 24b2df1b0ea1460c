// Unit tests of a hidden tab letting go of its feed and following again once shown.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { HIDDEN_GRACE_MS, suspendWhileHidden } from '../hidden-tab.js';
import { FakeClock } from './fakes.mjs';

function setup(visibilityState = 'visible') {
  const clock = new FakeClock();
  const calls = [];
  const listeners = new Set();
  const doc = {
    visibilityState,
    addEventListener: (type, listener) => listeners.add(listener),
    removeEventListener: (type, listener) => listeners.delete(listener),
  };
  const show = (state) => {
    doc.visibilityState = state;
    listeners.forEach((listener) => listener());
  };
  const feed = { suspend: () => calls.push('suspend'), resume: () => calls.push('resume') };
  const hidden = suspendWhileHidden({ feed, doc, setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout });
  return { clock, calls, show, hidden, listeners };
}

describe('suspendWhileHidden', () => {
  test('a tab hidden for the grace period suspends its feed, and resumes it once shown', async () => {
    const { clock, calls, show } = setup();
    calls.length = 0; // the first look: visible, nothing suspended
    show('hidden');
    await clock.advance(HIDDEN_GRACE_MS - 1);
    assert.deepEqual(calls, []);
    await clock.advance(1);
    assert.deepEqual(calls, ['suspend']);
    show('visible');
    assert.deepEqual(calls, ['suspend', 'resume']);
  });

  test('a quick look at another tab costs nothing', async () => {
    const { clock, calls, show } = setup();
    calls.length = 0;
    show('hidden');
    await clock.advance(1000);
    show('visible');
    await clock.advance(HIDDEN_GRACE_MS * 2);
    assert.deepEqual(calls, ['resume'], 'resume of a feed never suspended does nothing');
  });

  test('a tab opened in the background lets go after the grace period too', async () => {
    const { clock, calls } = setup('hidden');
    await clock.advance(HIDDEN_GRACE_MS);
    assert.deepEqual(calls, ['suspend']);
  });

  test('stop forgets the timer and the listener', async () => {
    const { clock, calls, show, hidden, listeners } = setup();
    calls.length = 0;
    show('hidden');
    hidden.stop();
    await clock.advance(HIDDEN_GRACE_MS);
    assert.deepEqual(calls, []);
    assert.equal(listeners.size, 0);
  });
});
