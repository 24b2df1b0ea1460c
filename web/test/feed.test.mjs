// Unit tests of the feed: resume from the last revision, reconnect after end_of_stream and errors.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { createFeed, reconnectDelay } from '../feed.js';
import { FakeClock } from './fakes.mjs';

/** A fake EventSource class recording every instance. */
function fakeEventSource() {
  const instances = [];
  class FakeEventSource {
    constructor(url) {
      this.url = url;
      this.closed = false;
      this.onopen = null;
      this.onmessage = null;
      this.onerror = null;
      instances.push(this);
    }
    close() {
      this.closed = true;
    }
    emit(json) {
      this.onmessage?.({ data: typeof json === 'string' ? json : JSON.stringify(json) });
    }
    fail() {
      this.onerror?.(new Event('error'));
    }
  }
  return { FakeEventSource, instances };
}

function setup(sinceRevision = 0) {
  const clock = new FakeClock();
  const { FakeEventSource, instances } = fakeEventSource();
  const events = [];
  const statuses = [];
  const endings = [];
  const feed = createFeed({
    sessionId: 'ses_1',
    sinceRevision,
    onEvent: (e) => events.push(e),
    onStatus: (s) => statuses.push(s),
    onDeleted: () => endings.push('deleted'),
    onReset: () => endings.push('reset'),
    EventSource: FakeEventSource,
    setTimeout: clock.setTimeout,
    clearTimeout: clock.clearTimeout,
  });
  return { clock, instances, events, statuses, endings, feed };
}

const added = (revision, id = `m${revision}`) => ({ type: 'session.message.added', revision, message: { id } });

describe('feed', () => {
  test('connects with since_revision of the loaded state', () => {
    const { instances, feed } = setup(12);
    feed.start();
    assert.equal(instances.length, 1);
    assert.equal(instances[0].url, '/api/v1/task-sessions/ses_1/messages:watch?since_revision=12');
  });

  test('delivers message events and tracks the last revision', () => {
    const { instances, events, feed } = setup(0);
    feed.start();
    instances[0].emit(added(1));
    instances[0].emit({ type: 'session.message.updated', revision: 2, message: { id: 'm1' } });
    instances[0].emit({ type: 'heartbeat', revision: 2 });
    assert.deepEqual(events.map((e) => [e.type, e.revision, e.message.id]), [
      ['session.message.added', 1, 'm1'],
      ['session.message.updated', 2, 'm1'],
    ]);
    assert.equal(feed.revision, 2);
  });

  test('after end_of_stream, closes and reconnects at once from the last revision', async () => {
    const { clock, instances, feed } = setup(3);
    feed.start();
    instances[0].emit(added(4));
    instances[0].emit(added(5));
    instances[0].emit({ type: 'end_of_stream', revision: 5 });
    assert.equal(instances[0].closed, true, 'the page closes the old source itself');
    await clock.advance(0);
    assert.equal(instances.length, 2);
    assert.equal(instances[1].url, '/api/v1/task-sessions/ses_1/messages:watch?since_revision=5');
  });

  test('after an error, reconnects with a short capped backoff from the last revision', async () => {
    const { clock, instances, statuses, feed } = setup(0);
    feed.start();
    instances[0].onopen();
    instances[0].emit(added(8));
    const delays = [];
    for (let i = 0; i < 6; i += 1) {
      instances.at(-1).fail();
      assert.equal(instances.at(-1).closed, true, 'EventSource retry (old url) is never used');
      delays.push(...clock.pendingDelays().filter((d) => d < 60_000));
      await clock.advance(delays.at(-1));
    }
    assert.deepEqual(delays, [500, 1000, 2000, 4000, 5000, 5000]);
    assert.equal(instances.length, 7);
    assert.ok(instances.slice(1).every((es) => es.url.endsWith('since_revision=8')));
    assert.ok(statuses.includes('reconnecting'));
  });

  test('a received event resets the backoff', async () => {
    const { clock, instances, feed } = setup(0);
    feed.start();
    instances[0].fail();
    await clock.advance(500);
    instances[1].fail();
    await clock.advance(1000);
    instances[2].emit({ type: 'heartbeat', revision: 0 });
    instances[2].fail();
    assert.ok(clock.pendingDelays().includes(500));
  });

  test('reconnects when nothing arrives for too long', async () => {
    const { clock, instances, feed } = setup(2);
    feed.start();
    await clock.advance(60_000);
    assert.equal(instances[0].closed, true);
    assert.equal(instances.length, 2);
    assert.ok(instances[1].url.endsWith('since_revision=2'));
  });

  test('ignores malformed data and unknown event types', () => {
    const { instances, events, feed } = setup(0);
    feed.start();
    instances[0].emit('not json');
    instances[0].emit({ type: 'something.else', revision: 1 });
    instances[0].emit({ type: 'session.message.added', revision: 2 });
    assert.deepEqual(events, []);
    assert.equal(feed.revision, 2);
  });

  test('stop closes the source and cancels reconnects', async () => {
    const { clock, instances, statuses, feed } = setup(0);
    feed.start();
    instances[0].fail();
    feed.stop();
    await clock.advance(120_000);
    assert.equal(instances.length, 1);
    assert.equal(statuses.at(-1), 'stopped');
  });

  test('events from a closed source are ignored', () => {
    const { instances, events, feed } = setup(0);
    feed.start();
    const old = instances[0];
    const onmessage = old.onmessage;
    old.emit({ type: 'end_of_stream', revision: 0 });
    onmessage({ data: JSON.stringify(added(9)) });
    assert.deepEqual(events, []);
  });

  test('session_deleted stops the feed for good: no reconnect, status deleted', async () => {
    const { clock, instances, statuses, endings, feed } = setup(3);
    feed.start();
    instances[0].emit({ type: 'session_deleted', revision: 3 });
    assert.equal(instances[0].closed, true);
    assert.deepEqual(endings, ['deleted']);
    assert.equal(feed.status, 'deleted');
    assert.equal(statuses.at(-1), 'deleted');
    await clock.advance(60_000);
    assert.equal(instances.length, 1, 'a deleted session is not watched again');
    assert.deepEqual(clock.pendingDelays(), []);
  });

  test('reset stops the feed and asks for the state to be loaded again', async () => {
    const { clock, instances, events, endings, feed } = setup(2);
    feed.start();
    instances[0].emit({ type: 'reset', revision: 40 });
    instances[0].emit(added(41));
    assert.deepEqual(endings, ['reset']);
    assert.deepEqual(events, [], 'nothing after reset is applied to the stale state');
    await clock.advance(60_000);
    assert.equal(instances.length, 1);
  });

  test('reconnectDelay is capped', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 9].map((n) => reconnectDelay(n)), [500, 1000, 2000, 4000, 5000, 5000]);
  });
});
