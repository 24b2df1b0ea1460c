// The index's pages of sessions, newest first (pure, with the request injected): which `before`
// to ask with, and what to do when the session it names is gone.
//
// Each page is asked for with `before` = the last session shown. That session may be deleted
// meanwhile (by another tab, a colleague, `DELETE /api/v1/tasks/ID`, the retention sweep): the
// service then answers 404 for the cursor, and every press of "Show older sessions" failed so,
// for good. Now the pages go on from an earlier session shown that still exists: the one before
// it, then 2, 4, 8... further back, at last from the newest; the sessions already shown are
// skipped (paging on while a page brings only those), and so, from the newest, are those
// created since the list was loaded; the ones found gone are reported so the list can drop
// them.

import { isNotFound } from './api.js';
import { compareTimes, timeKey } from './messages.js';

// Requests one press may make at most, failed cursors and pages of sessions already shown
// together (each a small page): a press never loops.
const MAX_REQUESTS = 40;

/**
 * @param {(options: {before?: string}) => Promise<{sessions: object[], total: number, hasMore: boolean, cursor: string}>} listSessions
 */
export function createSessionPages(listSessions) {
  const shown = []; // ids of the sessions shown, in order
  const seen = new Set();
  let cursor = ''; // where the next page starts: the last session of the last page
  let oldest = null; // when the oldest session shown was created

  /**
   * The next page: the sessions not shown yet, the total, whether more follow, and the ids of
   * shown sessions found gone (a cursor the service no longer knows).
   * @returns {Promise<{sessions: object[], total: number, hasMore: boolean, gone: string[]}>}
   */
  async function next() {
    const gone = [];
    const candidates = fallbacks();
    let before = cursor;
    // The page goes on from a session shown (or nothing is shown yet): all it brings is older
    // than what is shown. From the newest, sessions created since the list was loaded come
    // first: those are skipped, up to the first session shown or one older than all shown.
    let anchored = before !== '' || shown.length === 0;
    for (let requests = 0; requests < MAX_REQUESTS; requests += 1) {
      let page;
      try {
        page = await listSessions({ before: before || undefined });
      } catch (error) {
        if (!before || !isNotFound(error)) throw error;
        gone.push(before);
        before = candidates.next().value ?? '';
        anchored = before !== '';
        continue;
      }
      const fresh = [];
      for (const session of page.sessions) {
        if (seen.has(session.id) || olderThanShown(session)) anchored = true;
        if (anchored && !seen.has(session.id)) fresh.push(session);
      }
      if (page.cursor) cursor = page.cursor;
      if (fresh.length > 0 || !page.hasMore || !page.cursor) {
        for (const session of fresh) {
          seen.add(session.id);
          shown.push(session.id);
          if (typeof session.created_at === 'string') oldest = session.created_at;
        }
        return { sessions: fresh, total: page.total, hasMore: page.hasMore, gone: forget(gone) };
      }
      before = page.cursor; // a page of sessions already shown: the new ones are further on
    }
    throw new Error('too many of the sessions shown were deleted meanwhile: reload the page');
  }

  /** Whether `session` was created before every session shown (as far as its time says). */
  function olderThanShown(session) {
    return oldest !== null && Number.isFinite(timeKey(session.created_at)[0]) && compareTimes(session.created_at, oldest) < 0;
  }

  /** Earlier sessions shown to go on from, nearest first, each at most once: the one before
   * the cursor, then 2, 4, 8... further back; then none (from the newest). */
  function* fallbacks() {
    const end = cursor && shown.includes(cursor) ? shown.lastIndexOf(cursor) : shown.length;
    for (let back = 1; end - back >= 0; back *= 2) yield shown[end - back];
    if (end > 0) yield '';
  }

  /** Drops the gone ones from the shown (they are not cursors any more) and returns them. */
  function forget(gone) {
    const ids = gone.filter((id) => seen.has(id));
    for (const id of ids) {
      seen.delete(id);
      shown.splice(shown.indexOf(id), 1);
    }
    return ids;
  }

  return {
    next,
    /** The sessions shown so far, in order (their ids). */
    get shown() {
      return [...shown];
    },
  };
}
