// Unit tests of chat ordering and idempotent upserts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { compareTimes, createMessageStore, timeKey } from '../messages.js';

const msg = (id, created_at, updated_at = created_at, extra = {}) => ({ id, created_at, updated_at, ...extra });

describe('timestamps', () => {
  test('fractions of any precision compare by value', () => {
    assert.equal(compareTimes('2026-07-16T12:00:00Z', '2026-07-16T12:00:00.250Z'), -1);
    assert.equal(compareTimes('2026-07-16T12:00:00.5Z', '2026-07-16T12:00:00.250Z'), 1);
    assert.equal(compareTimes('2026-07-16T12:00:00.250Z', '2026-07-16T12:00:00.250000000Z'), 0);
    assert.equal(compareTimes('2026-07-16T12:00:00.000000001Z', '2026-07-16T12:00:00Z'), 1);
  });

  test('offsets are honoured', () => {
    assert.equal(compareTimes('2026-07-16T13:00:00+01:00', '2026-07-16T12:00:00Z'), 0);
  });

  test('missing or invalid times sort first', () => {
    assert.deepEqual(timeKey(undefined), [-Infinity, 0]);
    assert.equal(compareTimes('nonsense', '2026-07-16T12:00:00Z'), -1);
  });
});

describe('message store', () => {
  test('orders by created_at, then id', () => {
    const store = createMessageStore();
    store.upsert(msg('b', '2026-07-16T12:00:01Z'));
    store.upsert(msg('c', '2026-07-16T12:00:00.5Z'));
    store.upsert(msg('a', '2026-07-16T12:00:01Z'));
    store.upsert(msg('z', '2026-07-16T11:59:59Z'));
    assert.deepEqual(store.list().map((m) => m.id), ['z', 'c', 'a', 'b']);
    assert.equal(store.next('c').id, 'a');
    assert.equal(store.next('b'), undefined);
  });

  test('upserts by id: added, then updated in place', () => {
    const store = createMessageStore();
    assert.equal(store.upsert(msg('a', '2026-07-16T12:00:00Z', '2026-07-16T12:00:00Z', { content: 'x' })).change, 'added');
    const result = store.upsert(msg('a', '2026-07-16T12:00:00Z', '2026-07-16T12:00:02Z', { content: 'y' }));
    assert.equal(result.change, 'updated');
    assert.equal(store.size, 1);
    assert.equal(store.get('a').content, 'y');
  });

  test('the same event twice is harmless', () => {
    const store = createMessageStore();
    const m = msg('a', '2026-07-16T12:00:00Z');
    store.upsert(m);
    assert.equal(store.upsert({ ...m }).change, 'updated');
    assert.equal(store.size, 1);
  });

  test('an older version of a message (a replayed event) is ignored', () => {
    const store = createMessageStore();
    store.upsert(msg('a', '2026-07-16T12:00:00Z', '2026-07-16T12:00:05Z', { content: 'new' }));
    const result = store.upsert(msg('a', '2026-07-16T12:00:00Z', '2026-07-16T12:00:01Z', { content: 'old' }));
    assert.equal(result.change, 'ignored');
    assert.equal(store.get('a').content, 'new');
  });

  test('a message without id is ignored', () => {
    const store = createMessageStore();
    assert.equal(store.upsert({ created_at: '2026-07-16T12:00:00Z' }).change, 'ignored');
    assert.equal(store.upsert(null).change, 'ignored');
    assert.equal(store.size, 0);
  });
});
