// Test doubles shared by the web unit tests: a manual clock and a controllable fetch.

/** A fake clock: setTimeout/clearTimeout that only fire when the test advances time. */
export class FakeClock {
  constructor() {
    this.now = 0;
    this.nextId = 1;
    this.timers = new Map(); // id -> {at, fn}
    this.setTimeout = (fn, ms = 0) => {
      const id = this.nextId++;
      this.timers.set(id, { at: this.now + Math.max(0, ms), fn });
      return id;
    };
    this.clearTimeout = (id) => {
      this.timers.delete(id);
    };
  }

  /** Delays of the pending timers, relative to now, sorted. */
  pendingDelays() {
    return [...this.timers.values()].map((t) => t.at - this.now).sort((a, b) => a - b);
  }

  /** Move time forward by `ms`, firing due timers in order (and timers they schedule). */
  async advance(ms) {
    const end = this.now + ms;
    for (;;) {
      let dueId = null;
      let due = null;
      for (const [id, t] of this.timers) {
        if (t.at <= end && (due === null || t.at < due.at)) {
          dueId = id;
          due = t;
        }
      }
      if (due === null) break;
      this.timers.delete(dueId);
      this.now = due.at;
      due.fn();
      await flush();
    }
    this.now = end;
    await flush();
  }
}

/** Let pending promise callbacks run. */
export async function flush() {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A fetch whose answers the test controls. Each call is recorded as
 * `{signal, resolve(value), reject(error), settled}`; `inFlight` counts unsettled calls whose
 * signal is not aborted, and `maxInFlight` the largest such count seen.
 */
export function controllableFetch() {
  const calls = [];
  const fake = {
    calls,
    maxInFlight: 0,
    get count() {
      return calls.length;
    },
    get last() {
      return calls[calls.length - 1];
    },
    get inFlight() {
      return calls.filter((c) => !c.settled && !c.signal.aborted).length;
    },
    fn(signal) {
      let resolve;
      let reject;
      const promise = new Promise((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const call = {
        signal,
        settled: false,
        resolve(value) {
          call.settled = true;
          resolve(value);
        },
        reject(error = new Error('network down')) {
          call.settled = true;
          reject(error);
        },
      };
      calls.push(call);
      fake.maxInFlight = Math.max(fake.maxInFlight, fake.inFlight);
      return promise;
    },
  };
  fake.fn = fake.fn.bind(fake);
  return fake;
}

export function shellOutput(status, output = {}) {
  return { message_id: 'msg_1', status, updated_at: '2026-07-16T12:00:00Z', output: { truncated: false, ...output } };
}

/** A ResizeObserver the test drives: `resize()` reports a change of size to every observer
 * that observes something. */
export function fakeResizeObserver() {
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
