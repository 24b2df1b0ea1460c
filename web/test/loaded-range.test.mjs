// Unit tests of the run of messages a page holds: a live update to a message older than the
// run waits aside for its page, so the cursor of the next older page never skips a message.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { MAX_HELD_ASIDE, createLoadedRange } from '../loaded-range.js';
import { createMessageStore } from '../messages.js';

const at = (second) => `2026-07-16T12:${String(Math.floor(second / 60)).padStart(2, '0')}:${String(second % 60).padStart(2, '0')}Z`;
/** Message `n` of a session, created at second n, updated at second `updated`. */
const msg = (n, updated = n, extra = {}) => ({ id: `m${String(n).padStart(4, '0')}`, created_at: at(n), updated_at: at(updated), ...extra });

describe('which live messages go in the list', () => {
  test('one at or after the oldest held goes in', () => {
    const range = createLoadedRange(true);
    assert.equal(range.admit(msg(5, 9), msg(5)), true);
    assert.equal(range.admit(msg(7), msg(5)), true);
    assert.equal(range.heldAside, 0);
  });

  test('one older than the oldest held waits aside while older messages are on the server', () => {
    const range = createLoadedRange(true);
    assert.equal(range.admit(msg(1, 9), msg(5)), false);
    assert.equal(range.heldAside, 1);
  });

  test('with nothing older on the server, or nothing held yet, every message goes in', () => {
    assert.equal(createLoadedRange(false).admit(msg(1, 9), msg(5)), true);
    assert.equal(createLoadedRange(true).admit(msg(1, 9), undefined), true);
  });

  test('the newest version of a message held aside is kept; a replayed older one does not replace it', () => {
    const range = createLoadedRange(true);
    range.admit(msg(1, 8, { content: 'second' }), msg(5));
    range.admit(msg(1, 7, { content: 'first, replayed' }), msg(5));
    const [due] = range.loaded({ messages: [msg(1)], hasMore: false }, msg(1));
    assert.equal(due.content, 'second');
  });
});

describe('how many messages wait aside', () => {
  test('at most MAX_HELD_ASIDE: past it the first held is forgotten', () => {
    const range = createLoadedRange(true);
    const oldest = msg(MAX_HELD_ASIDE + 10);
    for (let n = 1; n <= MAX_HELD_ASIDE + 1; n += 1) range.admit(msg(n), oldest);
    assert.equal(range.heldAside, MAX_HELD_ASIDE);
    const due = range.loaded({ messages: [msg(1)], hasMore: false }, msg(1));
    assert.equal(due.length, MAX_HELD_ASIDE);
    assert.ok(!due.some((message) => message.id === msg(1).id));
  });
});

describe('what an older page releases', () => {
  test('the messages held aside that the page reaches, and only those', () => {
    const range = createLoadedRange(true);
    range.admit(msg(10, 99), msg(50));
    range.admit(msg(30, 99), msg(50));
    const due = range.loaded({ messages: [msg(20), msg(30)], hasMore: true }, msg(20));
    assert.deepEqual(due.map((m) => m.id), [msg(30).id]);
    assert.equal(range.heldAside, 1);
    assert.equal(range.olderOnServer, true);
  });

  test('every message held aside once the page says nothing older follows', () => {
    const range = createLoadedRange(true);
    range.admit(msg(1, 99), msg(50));
    range.admit(msg(2, 99), msg(50));
    assert.equal(range.loaded({ messages: [msg(40)], hasMore: false }, msg(40)).length, 2);
    assert.equal(range.heldAside, 0);
    assert.equal(range.olderOnServer, false);
  });

  test('an empty page ends the paging too', () => {
    const range = createLoadedRange(true);
    range.loaded({ messages: [], hasMore: true }, msg(40));
    assert.equal(range.olderOnServer, false);
  });
});

/**
 * A server of `count` messages answering pages newest first, as `GET .../messages?sort=desc
 * &before=ID` does, oldest first as api.js returns them; `update(n, at)` changes message n.
 */
function fakeServer(count) {
  const messages = Array.from({ length: count }, (_, n) => msg(n));
  return {
    page({ before, limit = 100 } = {}) {
      const end = before === undefined ? messages.length : messages.findIndex((m) => m.id === before);
      assert.ok(end >= 0, `unknown cursor ${before}`);
      const start = Math.max(0, end - limit);
      return { messages: messages.slice(start, end).map((m) => ({ ...m })), hasMore: start > 0 };
    },
    update(n, updated, extra) {
      messages[n] = msg(n, updated, extra);
      return { ...messages[n] };
    },
  };
}

/** The page's loading as scroll-window.js does it: the newest page, live messages, older pages. */
function fakePage(server) {
  const store = createMessageStore();
  const first = server.page();
  for (const m of first.messages) store.upsert(m);
  const range = createLoadedRange(first.hasMore);
  return {
    store,
    range,
    live(message) {
      if (range.admit(message, store.at(0))) store.upsert(message);
    },
    /** Fetches the next older page (with the cursor the page uses), to apply later. */
    fetchOlder() {
      return server.page({ before: store.at(0)?.id });
    },
    apply(page) {
      for (const m of page.messages) store.upsert(m);
      for (const m of range.loaded(page, store.at(0))) store.upsert(m);
    },
    scrollToTop() {
      for (let pages = 0; range.olderOnServer && pages < 100; pages += 1) this.apply(this.fetchOlder());
    },
  };
}

describe('paging back over a live update to an old message', () => {
  test('every message is loaded, in order, and the update shows', () => {
    const server = fakeServer(106); // one old command, then 105 after it: the newest 100 load
    const page = fakePage(server);
    page.live(server.update(0, 500, { status: 'cancelled' })); // the old command ends
    const shownFirst = page.store.size;
    page.scrollToTop();
    assert.deepEqual(page.store.list().map((m) => m.id), Array.from({ length: 106 }, (_, n) => msg(n).id));
    assert.equal(shownFirst, 100, 'the update was not shown above a gap');
    assert.equal(page.store.get(msg(0).id).status, 'cancelled');
    assert.equal(page.range.heldAside, 0);
  });

  test('an update that arrives while its page is on the way is not lost to the older version the page brings', () => {
    const server = fakeServer(250);
    const page = fakePage(server);
    const older = page.fetchOlder(); // messages 50-149, read before the update was written
    page.live(server.update(60, 900, { status: 'completed' }));
    page.apply(older);
    assert.equal(page.store.get(msg(60).id).status, 'completed');
    page.scrollToTop();
    assert.equal(page.store.size, 250);
    assert.equal(page.store.get(msg(60).id).updated_at, at(900));
  });

  test('updates to messages pages apart each wait for their own page', () => {
    const server = fakeServer(420);
    const page = fakePage(server);
    for (const n of [3, 150, 250]) page.live(server.update(n, 1000 + n, { status: 'failed' }));
    page.live(server.update(400, 2000, { status: 'completed' })); // within the newest page: shown at once
    assert.equal(page.store.get(msg(400).id).status, 'completed');
    assert.equal(page.range.heldAside, 3);
    page.apply(page.fetchOlder()); // 220-319
    assert.equal(page.store.get(msg(250).id).status, 'failed');
    assert.equal(page.range.heldAside, 2);
    page.scrollToTop();
    assert.equal(page.store.size, 420);
    for (const n of [3, 150, 250]) assert.equal(page.store.get(msg(n).id).status, 'failed');
  });
});
