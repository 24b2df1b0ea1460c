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
    fail(status, reason) {
      const event = new Event('error');
      if (status !== undefined) event.status = status;
      if (reason !== undefined) event.reason = reason;
      this.onerror?.(event);
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

  test('a routine end of stream stays live; a failure to resume says reconnecting', async () => {
    // The status is a live region: "Reconnecting…" then "Live" at every end of stream was
    // announced every few minutes, for a connection that was never lost.
    const { clock, instances, statuses, feed } = setup(3);
    feed.start();
    instances[0].onopen();
    instances[0].emit({ type: 'end_of_stream', revision: 3 });
    await clock.advance(0);
    instances[1].onopen();
    instances[1].emit({ type: 'heartbeat', revision: 3 });
    assert.deepEqual(statuses, ['connecting', 'live']);
    assert.equal(feed.status, 'live');

    instances[1].emit({ type: 'end_of_stream', revision: 3 });
    await clock.advance(0);
    instances[2].fail(); // the next stream could not be opened: the connection is lost
    assert.deepEqual(statuses, ['connecting', 'live', 'reconnecting']);
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

  test('a feed refused as one too many says so and retries after the longest delay', async () => {
    const { clock, instances, statuses, feed } = setup(3);
    feed.start();
    instances[0].fail(429);
    assert.equal(statuses.at(-1), 'busy');
    assert.deepEqual(clock.pendingDelays().filter((d) => d < 60_000), [5000]);
    await clock.advance(5000);
    assert.equal(instances.length, 2);
    assert.equal(statuses.at(-1), 'busy', 'still busy until the new feed opens');
    instances[1].onopen();
    assert.equal(statuses.at(-1), 'live');
    instances[1].fail(502);
    assert.equal(statuses.at(-1), 'reconnecting', 'other errors keep their own status');
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

  test('a feed answered 404 ends as session_deleted does: the session went while away', async () => {
    const { clock, instances, statuses, endings, feed } = setup(3);
    feed.start();
    instances[0].onopen();
    instances[0].fail(); // the connection broke (the laptop slept); the session is deleted meanwhile
    await clock.advance(500);
    instances[1].fail(404);
    assert.equal(instances[1].closed, true);
    assert.deepEqual(endings, ['deleted']);
    assert.equal(feed.status, 'deleted');
    assert.equal(statuses.at(-1), 'deleted');
    await clock.advance(60_000);
    assert.equal(instances.length, 2, 'a session that is gone is not asked for again');
    assert.deepEqual(clock.pendingDelays(), []);
  });

  test('a session found gone elsewhere ends the feed as session_deleted does, once', async () => {
    const { clock, instances, statuses, endings, feed } = setup(3);
    feed.start();
    instances[0].onopen();
    feed.sessionDeleted(); // the page's list of messages answered 404
    feed.sessionDeleted();
    assert.equal(instances[0].closed, true);
    assert.deepEqual(endings, ['deleted']);
    assert.equal(statuses.at(-1), 'deleted');
    await clock.advance(60_000);
    assert.equal(instances.length, 1);
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

  test('a feed refused as REVISION_AHEAD ends as reset does: the state is loaded again, once', async () => {
    // docs/api.md: REVISION_AHEAD -> "reload the session (boot state) and watch from its
    // revision". The same since_revision was asked for again every 5 s, for ever.
    const { clock, instances, statuses, endings, feed } = setup(9);
    feed.start();
    instances[0].fail(400, 'REVISION_AHEAD');
    assert.equal(instances[0].closed, true);
    assert.deepEqual(endings, ['reset']);
    assert.equal(feed.status, 'stopped');
    assert.ok(!statuses.includes('reconnecting'), statuses.join());
    await clock.advance(60_000);
    assert.equal(instances.length, 1, 'never asked again from that revision');
    assert.deepEqual(clock.pendingDelays(), []);
  });

  test('another 400 is an error like any other: backed off and retried', async () => {
    const { clock, instances, endings, feed } = setup(9);
    feed.start();
    instances[0].fail(400, 'SOMETHING_ELSE');
    assert.deepEqual(endings, []);
    assert.equal(feed.status, 'reconnecting');
    await clock.advance(500);
    assert.equal(instances.length, 2);
  });

  test('suspend lets go of the connection; resume asks for everything after the last revision', async () => {
    const { clock, instances, statuses, feed } = setup(3);
    feed.start();
    instances[0].onopen();
    instances[0].emit(added(4));
    feed.suspend();
    assert.equal(instances[0].closed, true);
    assert.equal(statuses.at(-1), 'paused');
    await clock.advance(120_000);
    assert.equal(instances.length, 1, 'no reconnect, no stale check while suspended');
    assert.deepEqual(clock.pendingDelays(), []);

    feed.resume();
    assert.equal(instances.length, 2);
    assert.ok(instances[1].url.endsWith('since_revision=4'), instances[1].url);
    instances[1].onopen();
    assert.equal(statuses.at(-1), 'live');
    feed.resume(); // not suspended: nothing
    assert.equal(instances.length, 2);
  });

  test('a feed that ended is neither suspended nor resumed', async () => {
    const { instances, statuses, feed } = setup(3);
    feed.start();
    instances[0].emit({ type: 'session_deleted', revision: 3 });
    feed.suspend();
    feed.resume();
    assert.equal(instances.length, 1);
    assert.equal(statuses.at(-1), 'deleted');

    const stopped = setup(0);
    stopped.feed.start();
    stopped.feed.stop();
    stopped.feed.resume();
    assert.equal(stopped.instances.length, 1, 'a stopped feed does not come back');
  });

  describe('a handler that throws', () => {
    /** A feed whose message handler throws while `failing(revision, attempt)` says so. */
    function failingSetup(sinceRevision, failing) {
      const clock = new FakeClock();
      const { FakeEventSource, instances } = fakeEventSource();
      const attempts = new Map(); // revision -> times the handler was called
      const drawn = [];
      const reported = [];
      const feed = createFeed({
        sessionId: 'ses_1',
        sinceRevision,
        onEvent: ({ revision }) => {
          const attempt = (attempts.get(revision) ?? 0) + 1;
          attempts.set(revision, attempt);
          if (failing(revision, attempt)) throw new RangeError(`cannot draw ${revision}`);
          drawn.push(revision);
        },
        onHandlerError: (error, event, retried) => reported.push([event.revision, retried, error.message]),
        EventSource: FakeEventSource,
        setTimeout: clock.setTimeout,
        clearTimeout: clock.clearTimeout,
      });
      return { clock, instances, attempts, drawn, reported, feed };
    }

    test('goes on with the events after it, and the next connection asks for it again', async () => {
      const { clock, instances, drawn, reported, feed } = failingSetup(3, (revision, attempt) => revision === 5 && attempt === 1);
      feed.start();
      for (const revision of [4, 5, 6]) instances[0].emit(added(revision));
      instances[0].emit({ type: 'heartbeat', revision: 6 }); // a heartbeat is no retry
      assert.deepEqual(drawn, [4, 6]);
      assert.deepEqual(reported, [[5, false, 'cannot draw 5']]);
      assert.equal(instances.length, 1, 'no connection of its own: the stream goes on');
      assert.equal(feed.revision, 6);
      assert.equal(feed.resumeRevision, 4);

      instances[0].emit({ type: 'end_of_stream', revision: 6 });
      await clock.advance(0);
      assert.ok(instances[1].url.endsWith('since_revision=4'), instances[1].url);
      for (const revision of [5, 6, 7]) instances[1].emit(added(revision)); // the replay, then live
      assert.deepEqual(drawn, [4, 6, 5, 6, 7], 'drawn the second time; 6 again is an upsert');
      assert.equal(feed.resumeRevision, 7);
    });

    test('is retried once: an event that throws on its replay too is left, with no loop', async () => {
      const { clock, instances, attempts, reported, feed } = failingSetup(0, (revision) => revision === 2);
      feed.start();
      instances[0].emit(added(1));
      instances[0].emit(added(2));
      instances[0].emit({ type: 'end_of_stream', revision: 2 });
      await clock.advance(0);
      assert.ok(instances[1].url.endsWith('since_revision=1'));
      instances[1].emit(added(2));
      instances[1].emit(added(3));
      instances[1].emit({ type: 'end_of_stream', revision: 3 });
      await clock.advance(0);
      assert.ok(instances[2].url.endsWith('since_revision=3'), 'the bad event is not asked for a third time');
      assert.equal(attempts.get(2), 2);
      assert.deepEqual(reported.map(([revision, retried]) => [revision, retried]), [[2, false], [2, true]]);
    });

    test('a replayed event that throws is not retried again, even one drawn the first time', async () => {
      const { clock, instances, attempts, feed } = failingSetup(0, (revision, attempt) =>
        (revision === 1 && attempt === 1) || (revision === 2 && attempt === 2));
      feed.start();
      instances[0].emit(added(1));
      instances[0].emit(added(2));
      instances[0].fail(); // a broken connection: reconnects from before 1
      await clock.advance(500);
      assert.ok(instances[1].url.endsWith('since_revision=0'));
      instances[1].emit(added(1));
      instances[1].emit(added(2)); // drawn before; throws on the replay
      instances[1].emit({ type: 'end_of_stream', revision: 2 });
      await clock.advance(0);
      assert.ok(instances[2].url.endsWith('since_revision=2'));
      assert.deepEqual([attempts.get(1), attempts.get(2)], [2, 2]);
    });

    test('keeps its retry until the replay reaches it, across a connection that broke first', async () => {
      const { clock, instances, drawn, feed } = failingSetup(0, (revision, attempt) => revision === 3 && attempt === 1);
      feed.start();
      for (const revision of [1, 2, 3, 4]) instances[0].emit(added(revision));
      instances[0].fail();
      await clock.advance(500);
      instances[1].emit({ type: 'heartbeat', revision: 2 }); // opens, then breaks before the replay
      instances[1].fail();
      await clock.advance(500);
      assert.ok(instances[2].url.endsWith('since_revision=2'));
      instances[2].emit(added(3));
      assert.deepEqual(drawn, [1, 2, 4, 3]);
      assert.equal(feed.resumeRevision, 4);
    });

    test('is reported on the console by default, naming the event', () => {
      const { FakeEventSource, instances } = fakeEventSource();
      const logged = [];
      const realError = console.error;
      console.error = (...args) => logged.push(args);
      try {
        const feed = createFeed({
          sessionId: 'ses_1', onEvent: () => { throw new RangeError('boom'); }, EventSource: FakeEventSource,
          setTimeout: () => 0, clearTimeout: () => {},
        });
        feed.start();
        instances[0].emit(added(1));
      } finally {
        console.error = realError;
      }
      assert.equal(logged.length, 1);
      assert.match(logged[0][0], /session\.message\.added at revision 1 .*asks for it again/);
      assert.equal(logged[0][1].message, 'boom');
    });
  });

  test('reconnectDelay is capped', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 9].map((n) => reconnectDelay(n)), [500, 1000, 2000, 4000, 5000, 5000]);
  });
});
