// The output disclosure's polling controller (spec "API surface", issue 4 "The disclosure's
// behaviour"). Standalone: no DOM, no global state, fetch and timers injected, so the rules are
// unit-tested on fake timers in web/test/shell-output-poller.test.mjs.
//
// Rules:
// - open() fetches a shell output immediately, once.
// - A running shell output schedules the next request `baseDelayMs` (1 s) after the previous request
//   settled; there is never more than one request in flight.
// - Consecutive failures back off 1, 2, 4, 5, 5 ... s (doubling, capped at `maxDelayMs`); a
//   success returns to 1 s. A failure keeps the last good shell output and reports "unavailable";
//   the next success clears it.
// - A terminal shell output (complete, failed, cancelled) stops polling.
// - notifyTerminal() (the feed says the message became terminal while open) aborts the in-flight
//   request, fetches one final shell output and stops once that shell output arrives, whatever its status.
//   If the final request fails, it is retried on the same capped backoff until one succeeds.
//   Called before open(), it makes the first fetch the final one.
// - close() (collapse, unmount) stops polling and aborts the in-flight request; no final fetch.
// - A response that arrives after close() or after a newer request started is ignored.
// - Output comes only from the fetched shell outputs, never from the message payload.
// - A callback that throws (a renderer failing on hostile output) is reported through `onError`
//   and changes nothing: the poller still moves on (to `done`, or to the next request).

import { isTerminalStatus } from './status.js';

export const BASE_DELAY_MS = 1000;
export const MAX_DELAY_MS = 5000;

/**
 * Delay before the next request after `failures` consecutive failures (0 = after a success):
 * 1 s, then 1, 2, 4, 5, 5 ... s with the defaults.
 */
export function backoffDelay(failures, baseDelayMs = BASE_DELAY_MS, maxDelayMs = MAX_DELAY_MS) {
  if (failures <= 1) return Math.min(baseDelayMs, maxDelayMs);
  return Math.min(baseDelayMs * 2 ** (failures - 1), maxDelayMs);
}

export function isTerminalShellOutput(shellOutput) {
  return isTerminalStatus(shellOutput?.status);
}

/**
 * Poller states, reported through `onState`:
 * - `idle`: created, not opened;
 * - `fetching`: a request is in flight;
 * - `finalizing`: the final request (after notifyTerminal) is in flight;
 * - `waiting`: the next request is scheduled;
 * - `done`: a terminal or final shell output arrived; no more requests;
 * - `closed`: close() was called; no more requests or callbacks.
 */
export const POLLER_STATES = Object.freeze(['idle', 'fetching', 'finalizing', 'waiting', 'done', 'closed']);

/**
 * Create a poller for one opened disclosure.
 *
 * @param {object} options
 * @param {(signal: AbortSignal) => Promise<object>} options.fetchShellOutput
 *   fetches `GET .../messages/{id}/shell-output`; resolves with the shell output
 *   `{message_id, status, updated_at, output}`, rejects on any failure.
 * @param {(shellOutput: object) => void} [options.onShellOutput] a newer shell output arrived.
 * @param {(unavailable: boolean, error: unknown) => void} [options.onUnavailable]
 *   `true` after a failed request (the last shell output stays valid), `false` when a later one succeeds.
 * @param {(state: string) => void} [options.onState] one of POLLER_STATES, on every change.
 * @param {(error: unknown) => void} [options.onError] a callback threw; `console.error` by default.
 * @param {typeof setTimeout} [options.setTimeout]
 * @param {typeof clearTimeout} [options.clearTimeout]
 * @param {number} [options.baseDelayMs] 1000 by default.
 * @param {number} [options.maxDelayMs] 5000 by default.
 */
export function createShellOutputPoller(options) {
  const {
    fetchShellOutput,
    onShellOutput = () => {},
    onUnavailable = () => {},
    onState = () => {},
    onError = (error) => console.error('shell output poller: a callback failed', error),
    setTimeout: schedule = globalThis.setTimeout.bind(globalThis),
    clearTimeout: unschedule = globalThis.clearTimeout.bind(globalThis),
    baseDelayMs = BASE_DELAY_MS,
    maxDelayMs = MAX_DELAY_MS,
  } = options;
  if (typeof fetchShellOutput !== 'function') throw new TypeError('fetchShellOutput must be a function');

  let state = 'idle';
  let final = false; // notifyTerminal() was called: the next success is the last request
  let inFlight = null; // {id, controller} of the one request whose answer counts
  let lastRequestId = 0;
  let timer = null;
  let failures = 0;
  let shellOutput = null;
  let unavailable = false;

  /** Calls a callback; one that throws must not stop the poller half-way through a step. */
  function notify(callback, ...args) {
    try {
      callback(...args);
    } catch (error) {
      onError(error);
    }
  }

  function setState(next) {
    if (state === next) return;
    state = next;
    notify(onState, next);
  }

  function cancelTimer() {
    if (timer !== null) {
      unschedule(timer);
      timer = null;
    }
  }

  function abortInFlight() {
    if (inFlight) {
      const { controller } = inFlight;
      inFlight = null; // its answer no longer counts, even if the fetch ignores the signal
      controller.abort();
    }
  }

  function request() {
    cancelTimer();
    const id = ++lastRequestId;
    const controller = new AbortController();
    inFlight = { id, controller };
    setState(final ? 'finalizing' : 'fetching');
    let pending;
    try {
      pending = Promise.resolve(fetchShellOutput(controller.signal));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => settle(id, true, value),
      (error) => settle(id, false, error),
    );
  }

  function isCurrent(id) {
    return state !== 'closed' && inFlight !== null && inFlight.id === id;
  }

  function settle(id, ok, value) {
    if (!isCurrent(id)) return; // after close, or superseded by a newer request
    inFlight = null;
    if (ok) succeeded(value);
    else failed(value);
  }

  function succeeded(value) {
    failures = 0;
    shellOutput = value;
    if (unavailable) {
      unavailable = false;
      notify(onUnavailable, false, null);
    }
    notify(onShellOutput, value);
    if (state === 'closed') return; // a callback closed us
    if (final || isTerminalShellOutput(value)) setState('done');
    else wait(baseDelayMs);
  }

  function failed(error) {
    failures += 1;
    unavailable = true;
    notify(onUnavailable, true, error);
    if (state === 'closed') return;
    wait(backoffDelay(failures, baseDelayMs, maxDelayMs));
  }

  function wait(delay) {
    setState('waiting');
    timer = schedule(() => {
      timer = null;
      if (state === 'waiting') request();
    }, delay);
  }

  return {
    /** Start: one immediate request. Calling it again, or after close(), does nothing. */
    open() {
      if (state !== 'idle') return;
      request();
    },

    /**
     * The message became terminal: abort the in-flight request, fetch one final shell output, stop.
     * Does nothing after `done`, after `close()`, or when already finalizing.
     */
    notifyTerminal() {
      if (final || state === 'done' || state === 'closed') return;
      final = true;
      if (state === 'idle') return; // open() will make the final request
      abortInFlight();
      cancelTimer();
      request();
    },

    /**
     * A message that was already terminal changed again (a late terminal update reconciled a
     * command the turn had cancelled): abort any in-flight request and fetch one more final
     * shell output, even after `done`. Does nothing after `close()`; before open() it makes the
     * first fetch the final one.
     */
    refresh() {
      if (state === 'closed') return;
      final = true;
      if (state === 'idle') return;
      abortInFlight();
      cancelTimer();
      request();
    },

    /** Collapse or unmount: stop, abort the in-flight request, ignore anything that comes back. */
    close() {
      if (state === 'closed') return;
      cancelTimer();
      abortInFlight();
      setState('closed');
    },

    get state() {
      return state;
    },
    /** The last successful shell output, or null. */
    get shellOutput() {
      return shellOutput;
    },
    /** True after a failed request until the next success. */
    get unavailable() {
      return unavailable;
    },
    /** Consecutive failures so far. */
    get failures() {
      return failures;
    },
  };
}
