// Follows a session's message feed over server-sent events and resumes from the last revision.
//
// The server replays every event with a revision above `since_revision`, then sends live ones,
// and ends each stream after a while with an `end_of_stream` event. EventSource's own retry would
// reconnect to the ORIGINAL url (the old since_revision), so this module closes the source itself
// and opens a new one with the last revision seen: at once after `end_of_stream`, after a short
// capped backoff after an error, and when nothing (not even a heartbeat) arrived for `staleMs`.
// Two events end the feed for good: `session_deleted` (the session is gone; reconnecting would
// only answer 404) and `reset` (the events after our revision were compacted away: the state
// must be loaded again, and the feed started anew from its revision). A feed refused with the
// reason `REVISION_AHEAD` (our revision is beyond the session's: the database was restored
// from a backup, or the page came from another one) ends as `reset` does: asking again from
// the same revision was refused every 5 s, for ever, under "Reconnecting…". A feed answered 404 ends
// as `session_deleted` does: the session was deleted while the page was not connected (a
// laptop asleep, a server restarting), so its `session_deleted` event was never received, and
// every later try would only be answered 404 again.
// A feed can be suspended and resumed (`suspend`, `resume`): a hidden tab lets go of its
// connection (hidden-tab.js) and, once shown again, asks for everything after its revision,
// as after any reconnect.
// A feed refused with 429 (the caller already holds as many open feeds as the server allows,
// `TOO_MANY_WATCHERS`) says so with its own status and waits the longest backoff before trying
// again: another attempt succeeds only once one of the caller's other feeds has ended.
// EventSource and the timers are injected so this is unit-tested.
//
// A handler that throws (a bug, or a message no row can take) must neither stop the feed nor
// lose the event for good, and must not make the feed loop on it. What a handler does depends
// on the page's state as well as on the event (which rows are mounted, which disclosure is
// open), so an event may go through once that state has moved on, and a failure the first time
// an event is handled is not final: the next connection asks for it again (its since_revision
// stays just before the event), and the events after it come again too, as harmless upserts.
// That connection is one the feed opens anyway (after end_of_stream, every few minutes, or an
// error), so a bad event never costs a connection of its own. A replayed event that throws
// again is reported and left: it is retried once, never in a loop. Events after a failed one
// are still handled as they arrive; the stream goes on.

import { revisionOf, watchPath } from './api.js';

export const RECONNECT_DELAYS_MS = Object.freeze([500, 1000, 2000, 4000, 5000]);
export const STALE_AFTER_MS = 60_000;
// The HTTP status of a feed refused because its caller holds too many open ones.
const TOO_MANY_FEEDS = 429;
// The HTTP status of a feed whose session does not exist (any more).
const SESSION_GONE = 404;
// The reason of a feed refused because its revision is beyond the session's (docs/api.md).
const REVISION_AHEAD = 'REVISION_AHEAD';

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
 * @param {(error: unknown, event: object, retried: boolean) => void} [options.onHandlerError]
 *   `onEvent` or `onTurn` threw on `event`; `retried` is true when the event was a replay, so
 *   it is not asked for again (console.error by default).
 * @param {(status: 'connecting'|'live'|'reconnecting'|'busy'|'paused'|'stopped'|'deleted') => void} [options.onStatus]
 *   `busy`: refused because too many feeds are open; it retries after the longest delay.
 *   `paused`: suspended (a hidden tab) until `resume`.
 * @param {() => void} [options.onDeleted] the session was deleted (a `session_deleted` event,
 *   or a feed answered 404); the feed has stopped.
 * @param {() => void} [options.onReset] the feed has stopped: reload the state, start a new feed
 *   (a `reset` event, or a feed refused as `REVISION_AHEAD`).
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
    onHandlerError = reportHandlerError,
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

  let revision = revisionOf(options.sinceRevision); // the highest revision seen
  const retries = new Set(); // revisions whose handler threw the first time, not replayed yet
  let source = null;
  let reconnectTimer = null;
  let staleTimer = null;
  let errors = 0;
  let status = 'stopped';
  let running = false;
  let suspended = false; // stopped by `suspend`, to go on at `resume`

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
    // A feed resuming after a routine end stays `live`: its status is a live region, and a
    // screen reader said "Reconnecting…" then "Live" at every end of stream (every few
    // minutes), for a connection that was never lost. Only a failure says `reconnecting`.
    if (status !== 'reconnecting' && status !== 'busy' && status !== 'live') setStatus('connecting');
    const es = new EventSourceImpl(urlFor(sessionId, resumeRevision()));
    source = es;
    es.onopen = () => {
      if (source === es) setStatus('live');
    };
    es.onmessage = (event) => {
      if (source === es) handle(event.data);
    };
    es.onerror = (event) => {
      if (source !== es) return;
      if (event?.status === SESSION_GONE) {
        deleted();
        return;
      }
      if (event?.reason === REVISION_AHEAD) {
        reset();
        return;
      }
      errors += 1;
      if (event?.status === TOO_MANY_FEEDS) {
        reconnect(delays.at(-1), 'busy');
        return;
      }
      reconnect(reconnectDelay(errors, delays));
    };
    armStaleTimer();
  }

  /** Where the next connection starts: after the last revision seen, or just before the
   * first event still to be retried. */
  function resumeRevision() {
    let from = revision;
    for (const failed of retries) from = Math.min(from, failed - 1);
    return from;
  }

  function reconnect(delay, waitingStatus = 'reconnecting') {
    closeSource();
    clearTimers();
    if (!running) return;
    setStatus(waitingStatus);
    reconnectTimer = schedule(connect, delay);
  }

  function halt(finalStatus) {
    running = false;
    suspended = false;
    closeSource();
    clearTimers();
    setStatus(finalStatus);
  }

  function deleted() {
    if (status === 'deleted') return; // said once
    halt('deleted');
    onDeleted();
  }

  /** The state must be loaded again: the feed ends, once. */
  function reset() {
    halt('stopped');
    onReset();
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
    const replayed = eventRevision <= revision;
    if (eventRevision > revision) revision = eventRevision;
    if (event.type === 'end_of_stream') {
      reconnect(0, 'live'); // the server ends every stream after a while: nothing was lost
      return;
    }
    if (event.type === 'session_deleted') {
      deleted();
      return;
    }
    if (event.type === 'reset') {
      reset();
      return;
    }
    const deliver = handlerOf(event, eventRevision);
    if (!deliver) return; // a heartbeat, or nothing the page draws
    if (replayed) retries.delete(eventRevision); // this is its one retry, if it needed one
    try {
      deliver();
    } catch (error) {
      if (!replayed) retries.add(eventRevision);
      onHandlerError(error, event, replayed);
    }
  }

  /** The call that hands `event` to the page, or null for an event the page does not draw. */
  function handlerOf(event, eventRevision) {
    if (MESSAGE_EVENTS.has(event.type) && event.message && typeof event.message === 'object') {
      return () => onEvent({ type: event.type, revision: eventRevision, message: event.message });
    }
    if (TURN_EVENTS.has(event.type) && event.turn && typeof event.turn === 'object') {
      return () => onTurn({ type: event.type, revision: eventRevision, turn: event.turn });
    }
    return null;
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
    /** Lets go of the connection until `resume` (a hidden tab); a feed that ended stays so. */
    suspend() {
      if (!running) return;
      halt('paused');
      suspended = true;
    },
    /** Goes on after `suspend`, from the last revision (the events missed meanwhile come first). */
    resume() {
      if (!suspended) return;
      suspended = false;
      running = true;
      errors = 0;
      connect();
    },
    /** The page learnt otherwise that the session is gone (its messages answered 404): end
     * the feed as a `session_deleted` event does, calling `onDeleted` once. */
    sessionDeleted() {
      deleted();
    },
    /** The last revision seen. */
    get revision() {
      return revision;
    },
    /** What the next connection asks for everything after (`revision`, unless an event is
     * still to be retried). */
    get resumeRevision() {
      return resumeRevision();
    },
    get status() {
      return status;
    },
  };
}

function reportHandlerError(error, event, retried) {
  const what = `The feed event ${event?.type} at revision ${event?.revision} could not be handled`;
  const next = retried ? 'it was a retry, so it is left' : 'the next connection asks for it again';
  console.error(`${what}: ${next}. The feed goes on.`, error);
}
