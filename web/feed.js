// Follows a session's message feed over server-sent events and resumes from the last revision.
//
// The server replays every event with a revision above `since_revision`, then sends live ones,
// and ends each stream after a while with an `end_of_stream` event. EventSource's own retry would
// reconnect to the ORIGINAL url (the old since_revision), so this module closes the source itself
// and opens a new one with the last revision seen: at once after `end_of_stream`, after a short
// capped backoff after an error, and when nothing (not even a heartbeat) arrived for `staleMs`.
// Two events end the feed for good: `session_deleted` (the session is gone; reconnecting would
// only answer 404) and `reset` (the events after our revision were compacted away: the state
// must be loaded again, and the feed started anew from its revision).
// EventSource and the timers are injected so this is unit-tested.

import { revisionOf, watchPath } from './api.js';

export const RECONNECT_DELAYS_MS = Object.freeze([500, 1000, 2000, 4000, 5000]);
export const STALE_AFTER_MS = 60_000;

const MESSAGE_EVENTS = new Set(['session.message.added', 'session.message.updated']);
const TURN_EVENTS = new Set(['session.turn.started', 'session.turn.completed']);

/** Reconnect delay after `attempt` consecutive errors (1-based), capped at the last entry. */
export function reconnectDelay(attempt, delays = RECONNECT_DELAYS_MS) {
  return delays[Math.min(Math.max(attempt, 1), delays.length) - 1];
}

/**
 * @param {object} options
 * @param {string} options.sessionId
 * @param {number} [options.sinceRevision] the revision the loaded state already includes.
 * @param {(event: {type: string, revision: number, message: object}) => void} options.onEvent
 *   message events only (`session.message.added` / `.updated`).
 * @param {(event: {type: string, revision: number, turn: object}) => void} [options.onTurn]
 *   turn events (`session.turn.started` / `.completed`), each with the turn as it is now.
 * @param {(status: 'connecting'|'live'|'reconnecting'|'stopped'|'deleted') => void} [options.onStatus]
 * @param {() => void} [options.onDeleted] the session was deleted; the feed has stopped.
 * @param {() => void} [options.onReset] the feed has stopped: reload the state, start a new feed.
 * @param {typeof EventSource} [options.EventSource]
 * @param {(sessionId: string, sinceRevision: number) => string} [options.urlFor]
 * @param {typeof setTimeout} [options.setTimeout]
 * @param {typeof clearTimeout} [options.clearTimeout]
 * @param {number} [options.staleMs]
 */
export function createFeed(options) {
  const {
    sessionId,
    onEvent,
    onTurn = () => {},
    onStatus = () => {},
    onDeleted = () => {},
    onReset = () => {},
    EventSource: EventSourceImpl = globalThis.EventSource,
    urlFor = watchPath,
    setTimeout: schedule = globalThis.setTimeout.bind(globalThis),
    clearTimeout: unschedule = globalThis.clearTimeout.bind(globalThis),
    staleMs = STALE_AFTER_MS,
    delays = RECONNECT_DELAYS_MS,
  } = options;

  let revision = revisionOf(options.sinceRevision);
  let source = null;
  let reconnectTimer = null;
  let staleTimer = null;
  let errors = 0;
  let status = 'stopped';
  let running = false;

  function setStatus(next) {
    if (status === next) return;
    status = next;
    onStatus(next);
  }

  function clearTimers() {
    if (reconnectTimer !== null) unschedule(reconnectTimer);
    if (staleTimer !== null) unschedule(staleTimer);
    reconnectTimer = null;
    staleTimer = null;
  }

  function closeSource() {
    if (!source) return;
    const old = source;
    source = null;
    old.onopen = null;
    old.onmessage = null;
    old.onerror = null;
    old.close();
  }

  function armStaleTimer() {
    if (staleTimer !== null) unschedule(staleTimer);
    staleTimer = schedule(() => {
      staleTimer = null;
      reconnect(0);
    }, staleMs);
  }

  function connect() {
    reconnectTimer = null;
    if (!running) return;
    if (status !== 'reconnecting') setStatus('connecting');
    const es = new EventSourceImpl(urlFor(sessionId, revision));
    source = es;
    es.onopen = () => {
      if (source === es) setStatus('live');
    };
    es.onmessage = (event) => {
      if (source === es) handle(event.data);
    };
    es.onerror = () => {
      if (source !== es) return;
      errors += 1;
      reconnect(reconnectDelay(errors, delays));
    };
    armStaleTimer();
  }

  function reconnect(delay) {
    closeSource();
    clearTimers();
    if (!running) return;
    setStatus('reconnecting');
    reconnectTimer = schedule(connect, delay);
  }

  function halt(finalStatus) {
    running = false;
    closeSource();
    clearTimers();
    setStatus(finalStatus);
  }

  function handle(data) {
    let event;
    try {
      event = JSON.parse(data);
    } catch {
      return; // not ours; keep listening
    }
    if (!event || typeof event !== 'object') return;
    errors = 0;
    setStatus('live');
    armStaleTimer();
    const eventRevision = revisionOf(event.revision);
    if (eventRevision > revision) revision = eventRevision;
    if (event.type === 'end_of_stream') {
      reconnect(0);
      return;
    }
    if (event.type === 'session_deleted') {
      halt('deleted');
      onDeleted();
      return;
    }
    if (event.type === 'reset') {
      halt('stopped');
      onReset();
      return;
    }
    if (MESSAGE_EVENTS.has(event.type) && event.message && typeof event.message === 'object') {
      onEvent({ type: event.type, revision: eventRevision, message: event.message });
    }
    if (TURN_EVENTS.has(event.type) && event.turn && typeof event.turn === 'object') {
      onTurn({ type: event.type, revision: eventRevision, turn: event.turn });
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      connect();
    },
    stop() {
      halt('stopped');
    },
    /** The last revision seen: the next connection asks for everything after it. */
    get revision() {
      return revision;
    },
    get status() {
      return status;
    },
  };
}
