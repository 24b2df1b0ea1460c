// Which messages the page holds: the session's newest page, then each older page as the reader
// scrolls up, so always one run of consecutive messages, from its oldest (the cursor of the
// next older page) to the newest (pure, no DOM).
//
// A live update may be to a message older than that run: a command started long before the
// newest page ends now. Put in the list, it became the oldest message held and so the cursor:
// the next page was asked for before it, and every message between it and the run was never
// loaded, while the list said it had nothing older. Such a message is now held aside, not
// shown (the reader sees no row out of place above a gap): the page it belongs to is loaded as
// the reader scrolls up, and it goes in the list then, as the newer of the page's version and
// the one held aside (a page read before the update was written brings the older version, and
// the feed does not send the update again).

import { compareMessages, compareTimes } from './messages.js';

// At most this many messages are held aside: an agent that updates thousands of old messages
// must not grow the page without bound. Past it the first held is forgotten; its page, read
// after the update was written, brings it as it is, unless that page was on its way already.
export const MAX_HELD_ASIDE = 1000;

/**
 * @param {boolean} olderOnServer whether the server may hold messages older than those loaded
 */
export function createLoadedRange(olderOnServer) {
  let older = olderOnServer;
  const aside = new Map(); // message id -> its newest version held aside

  /** Whether `message` is within the run that ends (at its oldest) at `oldest`. */
  const within = (message, oldest) => !older || !oldest || compareMessages(message, oldest) >= 0;

  return {
    /**
     * Whether a live `message` goes in the list now, `oldest` being the oldest message the list
     * holds. One older than that while older messages are on the server is held aside (its
     * newest version, by `updated_at`) until its page is loaded.
     */
    admit(message, oldest) {
      if (!message || within(message, oldest)) return true;
      const held = aside.get(message.id);
      if (!held || compareTimes(held.updated_at, message.updated_at) <= 0) aside.set(message.id, message);
      if (aside.size > MAX_HELD_ASIDE) aside.delete(aside.keys().next().value);
      return false;
    },

    /**
     * An older page was put in the list, `oldest` being the oldest message the list holds now:
     * the messages held aside that belong in the list from now on (all of them once the page
     * says no older ones follow), to be upserted after the page's.
     * @param {{messages: object[], hasMore: boolean}} page
     */
    loaded(page, oldest) {
      older = page.hasMore && page.messages.length > 0;
      const due = [];
      for (const [id, message] of aside) {
        if (!within(message, oldest)) continue;
        due.push(message);
        aside.delete(id);
      }
      return due;
    },

    /** Whether the server may hold messages older than those loaded. */
    get olderOnServer() {
      return older;
    },
    /** How many messages are held aside. */
    get heldAside() {
      return aside.size;
    },
  };
}
