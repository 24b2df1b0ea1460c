// Unit tests of reloading the page when its state is stale, never in a loop (reload-once.js).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { RELOAD_AGAIN_AFTER_MS, reloadOnce } from '../reload-once.js';

function memoryStorage() {
  const items = new Map();
  return { getItem: (key) => items.get(key) ?? null, setItem: (key, value) => items.set(key, String(value)) };
}

describe('reloadOnce', () => {
  test('reloads, and not again right after for the same address; later, or elsewhere, it does', () => {
    const storage = memoryStorage();
    const clock = { now: 1_000 };
    let reloads = 0;
    const options = (href = '/sessions/a') => ({ storage, href, now: () => clock.now, reload: () => (reloads += 1) });
    assert.equal(reloadOnce(options()), true);
    clock.now += 2_000; // the reloaded page's feed says so again at once
    assert.equal(reloadOnce(options()), false);
    assert.equal(reloads, 1);
    assert.equal(reloadOnce(options('/sessions/b')), true, 'another page of the tab');
    clock.now += RELOAD_AGAIN_AFTER_MS;
    assert.equal(reloadOnce(options()), true, 'a while later it is a new need');
    assert.equal(reloads, 3);
  });

  test('a remembered value it cannot read does not stop the reload', () => {
    const storage = memoryStorage();
    storage.setItem('shellexec.reloaded', '{not json');
    let reloads = 0;
    assert.equal(reloadOnce({ storage, href: '/', now: () => 5, reload: () => (reloads += 1) }), true);
    assert.equal(reloads, 1);
  });
});
