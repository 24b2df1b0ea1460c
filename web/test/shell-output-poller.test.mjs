// Unit tests of the disclosure polling rules (issue 4, "The disclosure's behaviour"), on a fake
// clock and a fetch whose answers each test controls. Run: node --test web/test/
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { backoffDelay, createShellOutputPoller } from '../shell-output-poller.js';
import { FakeClock, controllableFetch, flush, shellOutput } from './fakes.mjs';

function setup(extra = {}) {
  const clock = new FakeClock();
  const fetch = controllableFetch();
  const events = { shellOutputs: [], unavailable: [], states: [] };
  const poller = createShellOutputPoller({
    fetchShellOutput: fetch.fn,
    onShellOutput: (s) => events.shellOutputs.push(s),
    onUnavailable: (flag) => events.unavailable.push(flag),
    onState: (s) => events.states.push(s),
    setTimeout: clock.setTimeout,
    clearTimeout: clock.clearTimeout,
    ...extra,
  });
  return { clock, fetch, events, poller };
}

/** Answer the last request with a running shell output and let it settle. */
async function answerRunning(fetch, stdout = 'partial') {
  fetch.last.resolve(shellOutput('running', { stdout }));
  await flush();
}

async function failLast(fetch) {
  fetch.last.reject(new Error('HTTP 503'));
  await flush();
}

describe('opening', () => {
  test('does not fetch before open', async () => {
    const { clock, fetch, poller } = setup();
    await clock.advance(10_000);
    assert.equal(fetch.count, 0);
    assert.equal(poller.state, 'idle');
  });

  test('opening fetches the shell output immediately, once', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    assert.equal(fetch.count, 1, 'the first request starts synchronously on open');
    assert.equal(poller.state, 'fetching');
    poller.open();
    await clock.advance(5_000);
    assert.equal(fetch.count, 1, 'a second open() and waiting without an answer add no request');
  });

  test('a completed command is fetched exactly once', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    fetch.last.resolve(shellOutput('complete', { stdout: 'ok\n', exit_code: 0 }));
    await flush();
    await clock.advance(60_000);
    assert.equal(fetch.count, 1);
    assert.equal(poller.state, 'done');
    assert.equal(events.shellOutputs.length, 1);
    assert.equal(events.shellOutputs[0].output.stdout, 'ok\n');
  });

  test('the fetch function receives an AbortSignal', () => {
    const { fetch, poller } = setup();
    poller.open();
    assert.ok(fetch.last.signal instanceof AbortSignal);
    assert.equal(fetch.last.signal.aborted, false);
  });
});

describe('polling a running command', () => {
  test('polls again 1 s after the previous request settles', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    await clock.advance(300); // the request takes 300 ms
    assert.equal(fetch.count, 1);
    await answerRunning(fetch);
    assert.equal(poller.state, 'waiting');
    assert.deepEqual(clock.pendingDelays(), [1000]);
    await clock.advance(999);
    assert.equal(fetch.count, 1, 'not before 1 s after settling');
    await clock.advance(1);
    assert.equal(fetch.count, 2, 'exactly 1 s after settling');
  });

  test('a slow request delays the next one: the interval counts from settling, not from sending', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    await clock.advance(4_000); // slow server
    assert.equal(fetch.count, 1, 'no request while one is in flight, however long it takes');
    await answerRunning(fetch);
    await clock.advance(999);
    assert.equal(fetch.count, 1);
    await clock.advance(1);
    assert.equal(fetch.count, 2);
  });

  test('never two requests in flight', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    for (let i = 0; i < 10; i += 1) {
      await clock.advance(i % 3 === 0 ? 2_500 : 200); // varying latency
      if (i % 4 === 3) await failLast(fetch);
      else await answerRunning(fetch, `line ${i}`);
      await clock.advance(5_000);
    }
    assert.equal(fetch.maxInFlight, 1);
    assert.ok(fetch.count >= 10);
  });

  test('each running shell output is reported in order', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    await answerRunning(fetch, 'a');
    await clock.advance(1_000);
    await answerRunning(fetch, 'a\nb');
    assert.deepEqual(
      events.shellOutputs.map((s) => s.output.stdout),
      ['a', 'a\nb'],
    );
    assert.equal(poller.shellOutput.output.stdout, 'a\nb');
  });
});

describe('terminal shell outputs', () => {
  for (const status of ['complete', 'failed', 'cancelled']) {
    test(`a ${status} shell output stops polling`, async () => {
      const { clock, fetch, poller } = setup();
      poller.open();
      await answerRunning(fetch);
      await clock.advance(1_000);
      assert.equal(fetch.count, 2);
      fetch.last.resolve(shellOutput(status, { stdout: 'done' }));
      await flush();
      assert.equal(poller.state, 'done');
      assert.deepEqual(clock.pendingDelays(), [], 'nothing scheduled');
      await clock.advance(60_000);
      assert.equal(fetch.count, 2);
    });
  }
});

describe('notifyTerminal (the feed reports the command terminal while open)', () => {
  test('aborts the in-flight request, fetches one final shell output, then stops', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    await answerRunning(fetch);
    await clock.advance(1_000);
    assert.equal(fetch.count, 2);
    const inFlight = fetch.last;
    poller.notifyTerminal();
    assert.equal(inFlight.signal.aborted, true, 'the in-flight request is aborted');
    assert.equal(fetch.count, 3, 'the final request starts at once');
    assert.equal(poller.state, 'finalizing');
    assert.equal(fetch.maxInFlight, 1, 'the aborted request does not count as in flight');
    // Even if the final shell output still says running (a lagging read), polling stops.
    fetch.last.resolve(shellOutput('running', { stdout: 'final' }));
    await flush();
    assert.equal(poller.state, 'done');
    await clock.advance(60_000);
    assert.equal(fetch.count, 3, 'exactly one final fetch');
    assert.equal(events.shellOutputs.at(-1).output.stdout, 'final');
  });

  test('while waiting between polls cancels the timer and fetches the final shell output at once', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    await answerRunning(fetch);
    await clock.advance(400);
    poller.notifyTerminal();
    assert.equal(fetch.count, 2);
    fetch.last.resolve(shellOutput('complete', { exit_code: 0 }));
    await flush();
    await clock.advance(60_000);
    assert.equal(fetch.count, 2, 'the cancelled timer never fires');
    assert.equal(poller.state, 'done');
  });

  test('called repeatedly, still fetches exactly one final shell output', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    await answerRunning(fetch);
    poller.notifyTerminal();
    poller.notifyTerminal();
    assert.equal(fetch.count, 2);
    fetch.last.resolve(shellOutput('failed', { exit_code: 2 }));
    await flush();
    poller.notifyTerminal();
    await clock.advance(60_000);
    assert.equal(fetch.count, 2);
  });

  test('after a terminal shell output already stopped polling, does nothing', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    fetch.last.resolve(shellOutput('complete', { exit_code: 0 }));
    await flush();
    poller.notifyTerminal();
    await clock.advance(10_000);
    assert.equal(fetch.count, 1);
  });

  test('before open, makes the first request the final one', async () => {
    const { clock, fetch, poller } = setup();
    poller.notifyTerminal();
    assert.equal(fetch.count, 0, 'nothing is fetched until the disclosure opens');
    poller.open();
    assert.equal(fetch.count, 1);
    fetch.last.resolve(shellOutput('running'));
    await flush();
    await clock.advance(60_000);
    assert.equal(fetch.count, 1);
    assert.equal(poller.state, 'done');
  });

  test('a failed final request is retried on the capped backoff until one succeeds', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    await answerRunning(fetch, 'before');
    poller.notifyTerminal();
    await failLast(fetch);
    assert.equal(poller.unavailable, true);
    assert.equal(poller.shellOutput.output.stdout, 'before', 'the last good shell output is kept');
    await clock.advance(1_000);
    assert.equal(fetch.count, 3);
    fetch.last.resolve(shellOutput('complete', { stdout: 'after', exit_code: 0 }));
    await flush();
    assert.equal(poller.state, 'done');
    assert.deepEqual(events.unavailable, [true, false]);
    await clock.advance(60_000);
    assert.equal(fetch.count, 3);
  });
});

describe('refresh (a terminal message changed again while open)', () => {
  test('after done, fetches exactly one more final shell output, then stops', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    fetch.last.resolve(shellOutput('cancelled', { stdout: 'partial' }));
    await flush();
    assert.equal(poller.state, 'done');
    poller.refresh();
    assert.equal(fetch.count, 2, 'the late update triggers one request at once');
    fetch.last.resolve(shellOutput('failed', { stdout: 'partial\nkilled', exit_code: 130 }));
    await flush();
    await clock.advance(60_000);
    assert.equal(fetch.count, 2);
    assert.equal(poller.state, 'done');
    assert.equal(events.shellOutputs.at(-1).output.exit_code, 130);
  });

  test('while the final request is in flight, aborts it and asks again', async () => {
    const { fetch, poller } = setup();
    poller.open();
    poller.notifyTerminal();
    const stale = fetch.last;
    poller.refresh();
    assert.equal(stale.signal.aborted, true);
    assert.equal(fetch.count, 3, 'open, the final request, and the one refresh asked for');
    stale.resolve(shellOutput('cancelled', { stdout: 'old' }));
    await flush();
    assert.equal(poller.shellOutput, null, 'the superseded answer is ignored');
  });

  test('after close, does nothing', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    poller.close();
    poller.refresh();
    await clock.advance(10_000);
    assert.equal(fetch.count, 1);
  });
});

describe('close (collapse or unmount)', () => {
  test('stops scheduled polling', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    await answerRunning(fetch);
    poller.close();
    assert.deepEqual(clock.pendingDelays(), []);
    await clock.advance(60_000);
    assert.equal(fetch.count, 1);
    assert.equal(poller.state, 'closed');
  });

  test('aborts the in-flight request, with no final fetch', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    await answerRunning(fetch);
    await clock.advance(1_000);
    const inFlight = fetch.last;
    poller.close();
    assert.equal(inFlight.signal.aborted, true);
    poller.notifyTerminal(); // the feed says terminal after collapse: still nothing
    poller.open(); // a closed poller cannot be reopened; the UI makes a new one
    await clock.advance(60_000);
    assert.equal(fetch.count, 2);
  });

  test('a response arriving after close is ignored', async () => {
    const { fetch, events, poller } = setup();
    poller.open();
    poller.close();
    fetch.last.resolve(shellOutput('running', { stdout: 'late' }));
    await flush();
    assert.deepEqual(events.shellOutputs, []);
    assert.equal(poller.shellOutput, null);
    assert.deepEqual(events.states, ['fetching', 'closed']);
  });

  test('a failure arriving after close is ignored', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    poller.close();
    await failLast(fetch);
    await clock.advance(60_000);
    assert.deepEqual(events.unavailable, []);
    assert.equal(fetch.count, 1);
  });

  test('the final shell output arriving after close is ignored', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    await answerRunning(fetch, 'live');
    poller.notifyTerminal();
    const finalRequest = fetch.last;
    poller.close();
    assert.equal(finalRequest.signal.aborted, true);
    finalRequest.resolve(shellOutput('complete', { stdout: 'final', exit_code: 0 }));
    await flush();
    await clock.advance(60_000);
    assert.deepEqual(
      events.shellOutputs.map((s) => s.output.stdout),
      ['live'],
    );
    assert.equal(fetch.count, 2);
  });

  test('close is safe to call twice and reports closed once', () => {
    const { events, poller } = setup();
    poller.open();
    poller.close();
    poller.close();
    assert.deepEqual(events.states, ['fetching', 'closed']);
  });
});

describe('stale responses', () => {
  test('a response to a superseded request is ignored (the aborted poll answers late)', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    await answerRunning(fetch, 'one');
    await clock.advance(1_000);
    const superseded = fetch.last;
    poller.notifyTerminal();
    const finalRequest = fetch.last;
    // The server ignores the abort and answers the old request after the final one started.
    superseded.resolve(shellOutput('running', { stdout: 'stale' }));
    await flush();
    assert.deepEqual(
      events.shellOutputs.map((s) => s.output.stdout),
      ['one'],
    );
    assert.equal(poller.state, 'finalizing', 'the stale answer neither stops nor reschedules');
    finalRequest.resolve(shellOutput('complete', { stdout: 'final', exit_code: 0 }));
    await flush();
    assert.equal(poller.shellOutput.output.stdout, 'final');
  });

  test('a superseded request failing late does not mark the output unavailable', async () => {
    const { fetch, events, poller } = setup();
    poller.open();
    const superseded = fetch.last;
    poller.notifyTerminal();
    superseded.reject(new DOMException('aborted', 'AbortError'));
    await flush();
    assert.deepEqual(events.unavailable, []);
    assert.equal(poller.state, 'finalizing');
  });
});

describe('failures and backoff', () => {
  test('backoffDelay doubles from 1 s and is capped at 5 s', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 10].map((n) => backoffDelay(n)),
      [1000, 1000, 2000, 4000, 5000, 5000, 5000],
    );
  });

  test('consecutive failures back off 1, 2, 4, 5, 5 s', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    const delays = [];
    for (let i = 0; i < 5; i += 1) {
      await failLast(fetch);
      delays.push(...clock.pendingDelays());
      const before = fetch.count;
      await clock.advance(delays.at(-1) - 1);
      assert.equal(fetch.count, before, `no retry before ${delays.at(-1)} ms`);
      await clock.advance(1);
      assert.equal(fetch.count, before + 1);
    }
    assert.deepEqual(delays, [1000, 2000, 4000, 5000, 5000]);
    assert.equal(fetch.maxInFlight, 1);
  });

  test('a success returns to 1 s, and the next failure starts the backoff again', async () => {
    const { clock, fetch, poller } = setup();
    poller.open();
    await failLast(fetch);
    await clock.advance(1_000);
    await failLast(fetch);
    await clock.advance(2_000);
    await failLast(fetch);
    assert.deepEqual(clock.pendingDelays(), [4000]);
    await clock.advance(4_000);
    await answerRunning(fetch);
    assert.deepEqual(clock.pendingDelays(), [1000], 'back to the base interval');
    assert.equal(poller.failures, 0);
    await clock.advance(1_000);
    await failLast(fetch);
    assert.deepEqual(clock.pendingDelays(), [1000], 'the backoff restarts at 1 s');
  });

  test('a failure keeps the last good shell output and reports unavailable', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    await answerRunning(fetch, 'good');
    await clock.advance(1_000);
    await failLast(fetch);
    assert.equal(poller.unavailable, true);
    assert.equal(poller.shellOutput.output.stdout, 'good');
    assert.deepEqual(events.unavailable, [true]);
    assert.equal(events.shellOutputs.length, 1, 'no shell output is reported for a failure');
    assert.equal(poller.state, 'waiting', 'the disclosure keeps polling');
  });

  test('a later success clears the unavailable state', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    await failLast(fetch);
    await clock.advance(1_000);
    await failLast(fetch);
    assert.deepEqual(events.unavailable, [true, true]);
    await clock.advance(2_000);
    fetch.last.resolve(shellOutput('running', { stdout: 'recovered' }));
    await flush();
    assert.equal(poller.unavailable, false);
    assert.deepEqual(events.unavailable, [true, true, false]);
    assert.equal(poller.shellOutput.output.stdout, 'recovered');
  });

  test('a fetch function that throws synchronously counts as a failed request', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const poller = createShellOutputPoller({
      fetchShellOutput: () => {
        calls += 1;
        throw new Error('boom');
      },
      setTimeout: clock.setTimeout,
      clearTimeout: clock.clearTimeout,
    });
    poller.open();
    await flush();
    assert.equal(poller.unavailable, true);
    assert.deepEqual(clock.pendingDelays(), [1000]);
    poller.close();
    assert.equal(calls, 1);
  });
});

describe('output source', () => {
  test('shell outputs come only from the fetch function; the poller takes no message payload', async () => {
    const { fetch, events, poller } = setup();
    assert.equal(poller.shellOutput, null, 'nothing to show before the first fetch answers');
    poller.open();
    fetch.last.resolve(shellOutput('complete', { stdout: 'from the endpoint', exit_code: 0 }));
    await flush();
    assert.deepEqual(events.shellOutputs, [shellOutput('complete', { stdout: 'from the endpoint', exit_code: 0 })]);
  });

  test('requires a fetch function', () => {
    assert.throws(() => createShellOutputPoller({}), TypeError);
  });
});

describe('state reporting', () => {
  test('reports fetching, waiting, done in a running-then-complete run', async () => {
    const { clock, fetch, events, poller } = setup();
    poller.open();
    await answerRunning(fetch);
    await clock.advance(1_000);
    fetch.last.resolve(shellOutput('complete', { exit_code: 0 }));
    await flush();
    assert.deepEqual(events.states, ['fetching', 'waiting', 'fetching', 'done']);
  });

  test('a callback that closes the poller stops it cleanly', async () => {
    const clock = new FakeClock();
    const fetch = controllableFetch();
    const poller = createShellOutputPoller({
      fetchShellOutput: fetch.fn,
      onShellOutput: () => poller.close(),
      setTimeout: clock.setTimeout,
      clearTimeout: clock.clearTimeout,
    });
    poller.open();
    fetch.last.resolve(shellOutput('running'));
    await flush();
    await clock.advance(60_000);
    assert.equal(poller.state, 'closed');
    assert.equal(fetch.count, 1);
  });
});

describe('a callback that throws', () => {
  const failing = () => {
    throw new RangeError('Invalid string length');
  };

  test('a failing final render still ends the poller, and the error is reported', async () => {
    const errors = [];
    const { fetch, poller } = setup({ onShellOutput: failing, onError: (error) => errors.push(error) });
    poller.notifyTerminal();
    poller.open();
    assert.equal(poller.state, 'finalizing');
    fetch.last.resolve(shellOutput('complete', { stdout: 'x\n', exit_code: 0 }));
    await flush();
    assert.equal(poller.state, 'done');
    assert.equal(poller.shellOutput.output.stdout, 'x\n');
    assert.deepEqual(errors.map((error) => error.message), ['Invalid string length']);
  });

  test('a failing render of a running output still schedules the next request', async () => {
    const { clock, fetch, poller } = setup({ onShellOutput: failing, onError: () => {} });
    poller.open();
    await answerRunning(fetch);
    assert.equal(poller.state, 'waiting');
    await clock.advance(1_000);
    assert.equal(fetch.count, 2);
  });

  test('failing state and unavailable callbacks do not stop the backoff', async () => {
    const errors = [];
    const { clock, fetch, poller } = setup({ onState: failing, onUnavailable: failing, onError: (e) => errors.push(e) });
    poller.open();
    await failLast(fetch);
    assert.equal(poller.state, 'waiting');
    assert.equal(poller.unavailable, true);
    await clock.advance(1_000);
    assert.equal(fetch.count, 2);
    assert.ok(errors.length >= 3); // fetching, unavailable, waiting, fetching
  });
});
