// Unit tests of the index's paging (session-pages.js): a cursor deleted meanwhile never leaves
// "Show older sessions" failing for good.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { ApiError } from '../api.js';
import { createSessionPages } from '../session-pages.js';

/** A service's List sessions, newest first, `limit` a page, over ids the test deletes or adds. */
function fakeService(count, limit = 3) {
  const ids = Array.from({ length: count }, (_, i) => `s${String(count - i).padStart(2, '0')}`); // newest first
  const createdAt = (id) => new Date(Date.UTC(2026, 11, 6, 10) + Number(id.slice(1)) * 1000).toISOString(); // s09 before s10
  const requests = [];
  return {
    requests,
    delete: (...gone) => gone.forEach((id) => ids.splice(ids.indexOf(id), 1)),
    create: (id) => ids.unshift(id),
    async listSessions({ before } = {}) {
      requests.push(before ?? '');
      let from = 0;
      if (before !== undefined) {
        const at = ids.indexOf(before);
        if (at < 0) throw new ApiError(404, 5, `session (before) '${before}' not found`);
        from = at + 1;
      }
      const page = ids.slice(from, from + limit);
      return {
        sessions: page.map((id) => ({ id, created_at: createdAt(id) })),
        total: ids.length,
        hasMore: from + limit < ids.length,
        cursor: page.at(-1) ?? '',
      };
    },
  };
}

const idsOf = (page) => page.sessions.map((session) => session.id);

describe('session pages', () => {
  test('each page goes on from the last session shown', async () => {
    const service = fakeService(7);
    const pages = createSessionPages(service.listSessions);
    assert.deepEqual(idsOf(await pages.next()), ['s07', 's06', 's05']);
    assert.deepEqual(idsOf(await pages.next()), ['s04', 's03', 's02']);
    const last = await pages.next();
    assert.deepEqual(idsOf(last), ['s01']);
    assert.equal(last.hasMore, false);
    assert.deepEqual(service.requests, ['', 's05', 's02']);
  });

  test('the last session shown deleted: the page goes on from the one before it', async () => {
    const service = fakeService(10);
    const pages = createSessionPages(service.listSessions);
    await pages.next(); // s10 s09 s08
    service.delete('s08');
    const page = await pages.next();
    assert.deepEqual(idsOf(page), ['s07', 's06', 's05']);
    assert.deepEqual(page.gone, ['s08'], 'the list can drop it');
    assert.equal(page.total, 9);
    assert.deepEqual(service.requests, ['', 's08', 's09']);
    assert.deepEqual(idsOf(await pages.next()), ['s04', 's03', 's02'], 'and on from there');
  });

  test('many shown deleted (a task deleted): it goes further back, then from the newest', async () => {
    const service = fakeService(20);
    const pages = createSessionPages(service.listSessions);
    for (let i = 0; i < 3; i += 1) await pages.next(); // s20 ... s12
    service.delete('s20', 's19', 's18', 's17', 's16', 's15', 's14', 's13', 's12');
    const page = await pages.next();
    assert.deepEqual(idsOf(page), ['s11', 's10', 's09']);
    assert.equal(new Set(service.requests).size, service.requests.length - 1, 'no cursor asked twice but the newest');
    assert.ok(service.requests.length <= 10, service.requests.join());
  });

  test('sessions created since the list was loaded are not put at its end', async () => {
    const service = fakeService(9);
    const pages = createSessionPages(service.listSessions);
    await pages.next(); // s09 s08 s07
    service.create('s98');
    service.create('s99');
    service.delete('s09', 's08', 's07');
    const page = await pages.next();
    assert.deepEqual(idsOf(page), ['s06'], 'from the newest: s99 and s98 are newer than all shown');
    assert.deepEqual(page.gone, ['s07', 's08', 's09']);
    assert.deepEqual(idsOf(await pages.next()), ['s05', 's04', 's03']);
  });

  test('a fallback page of sessions already shown pages on to new ones', async () => {
    const service = fakeService(12, 2);
    const pages = createSessionPages(service.listSessions);
    for (let i = 0; i < 3; i += 1) await pages.next(); // s12 ... s07
    service.delete('s07');
    assert.deepEqual(idsOf(await pages.next()), ['s06', 's05']);
  });

  test('another failure is the caller\'s to show, and the next press tries again', async () => {
    const service = fakeService(6);
    const pages = createSessionPages(service.listSessions);
    await pages.next();
    const real = service.listSessions;
    let failing = true;
    const flaky = createSessionPages(async (options) => {
      if (failing && options.before) throw new ApiError(503, 14, 'unavailable');
      return real(options);
    });
    await flaky.next();
    await assert.rejects(flaky.next(), /unavailable/);
    failing = false;
    assert.deepEqual(idsOf(await flaky.next()), ['s03', 's02', 's01']);
  });
});
