// Unit tests of the REST helpers with a fake fetch.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  ApiError, UnaddressableIdError, bootStatePath, createApi, isNotFound, olderMessagesPath, revisionOf, sessionPath,
  shellOutputPath, watchPath,
} from '../api.js';

function jsonResponse(status, body) {
  return { ok: status >= 200 && status < 300, status, json: async () => body };
}

function fakeFetch(routes) {
  const calls = [];
  const fn = async (url, init) => {
    calls.push({ url, init });
    const handler = routes[url];
    if (!handler) return jsonResponse(404, { code: 5, message: `no route ${url}` });
    return typeof handler === 'function' ? handler(url, init) : handler;
  };
  return { fn, calls };
}

describe('paths', () => {
  test('escape ids and carry the query', () => {
    assert.equal(olderMessagesPath('s/1'), '/api/v1/task-sessions/s%2F1/messages?sort=desc&limit=100');
    assert.equal(olderMessagesPath('s', { before: 'm 9' }), '/api/v1/task-sessions/s/messages?sort=desc&limit=100&before=m+9');
    assert.equal(shellOutputPath('s', 'm'), '/api/v1/task-sessions/s/messages/m/shell-output');
    assert.equal(watchPath('s', 42), '/api/v1/task-sessions/s/messages:watch?since_revision=42');
    assert.equal(watchPath('s', undefined), '/api/v1/task-sessions/s/messages:watch?since_revision=0');
  });

  test('an id a browser would read as a step in the path is refused, never sent elsewhere', () => {
    for (const id of ['.', '..', '']) {
      for (const path of [() => sessionPath(id), () => bootStatePath(id), () => watchPath(id, 1),
        () => shellOutputPath('ses_1', id)]) {
        assert.throws(path, (error) => error instanceof UnaddressableIdError && error.id === id);
      }
    }
    // Dots inside a segment are the segment's own: only `.` and `..` alone are path steps.
    for (const id of ['...', 'a.b', '.a', '..a']) {
      const path = bootStatePath(id);
      assert.equal(new URL(path, 'http://h/').pathname, path, id);
    }
  });

  test('revisions are numbers, also when printed as strings', () => {
    assert.equal(revisionOf(7), 7);
    assert.equal(revisionOf('12'), 12);
    assert.equal(revisionOf(undefined), 0);
    assert.equal(revisionOf('x'), 0);
  });
});

describe('api', () => {
  test('sends the headers it is given on every request, read at each call', async () => {
    let token = 'one';
    const { fn, calls } = fakeFetch({ '/api/v1/task-sessions/s': jsonResponse(200, { session: { id: 's' } }) });
    const api = createApi({ fetch: fn, headers: () => ({ authorization: `Bearer ${token}` }) });
    await api.getSession('s');
    token = 'two';
    await api.getSession('s');
    assert.deepEqual(calls.map((c) => c.init.headers.authorization), ['Bearer one', 'Bearer two']);
    assert.equal(calls[0].init.headers.Accept, 'application/json');
  });

  test('every request tells onRefused of a 401 or 403 answer before its error is thrown', async () => {
    const refused = jsonResponse(401, { code: 16, message: 'the bearer token is unknown or revoked' });
    const { fn } = fakeFetch({
      '/api/v1/task-sessions/s': jsonResponse(403, { code: 7, message: 'missing scope read' }),
      '/api/v1/task-sessions/s/messages?sort=desc&limit=100&before=m1': refused,
      '/api/v1/task-sessions/s/messages/m2/shell-output': refused,
      '/api/v1/task-sessions?sort=desc&limit=20&before=s9': refused,
      '/api/v1/tasks/t/boot-state': refused,
    });
    const told = [];
    const api = createApi({ fetch: fn, onRefused: (error) => told.push(error) });
    const calls = [
      () => api.getSession('s'), () => api.listOlderMessages('s', { before: 'm1' }), () => api.getShellOutput('s', 'm2'),
      () => api.listSessions({ before: 's9' }), () => api.getBootState('t'),
    ];
    for (const call of calls) {
      const count = told.length;
      await assert.rejects(call(), (error) => error instanceof ApiError && told.length === count + 1 && told.at(-1) === error);
    }
    assert.deepEqual(told.map((error) => error.status), [403, 401, 401, 401, 401]);
    assert.equal(told[0].message, 'missing scope read');
  });

  test('other failures are not refusals', async () => {
    const { fn } = fakeFetch({ '/api/v1/task-sessions/s': jsonResponse(503, { code: 14, message: 'down' }) });
    const told = [];
    const api = createApi({ fetch: fn, onRefused: (error) => told.push(error) });
    await assert.rejects(api.getSession('s'), ApiError);
    await assert.rejects(api.getSession('gone'), ApiError); // 404
    assert.deepEqual(told, []);
  });

  test('a 401 is an ApiError with its status', async () => {
    const { fn } = fakeFetch({ '/api/v1/task-sessions/s': jsonResponse(401, { code: 16, message: 'token' }) });
    await assert.rejects(createApi({ fetch: fn }).getSession('s'), (error) => error instanceof ApiError && error.status === 401);
  });

  test('a 404 is what isNotFound says, and nothing else is', async () => {
    const { fn } = fakeFetch({});
    const error = await createApi({ fetch: fn }).getSession('s').catch((e) => e);
    assert.equal(isNotFound(error), true);
    assert.equal(isNotFound(new ApiError(503, 14, 'down')), false);
    assert.equal(isNotFound(new TypeError('network')), false);
  });

  test('a task named .. is refused without a request', async () => {
    const { fn, calls } = fakeFetch({});
    const api = createApi({ fetch: fn });
    await assert.rejects(api.getBootState('..'), UnaddressableIdError);
    await assert.rejects(api.getSession('.'), UnaddressableIdError);
    await assert.rejects(api.listOlderMessages('.'), UnaddressableIdError);
    await assert.rejects(api.getShellOutput('ses_1', '..'), UnaddressableIdError);
    assert.deepEqual(calls, []);
  });

  test('reads the session and the boot state', async () => {
    const fetch = fakeFetch({
      '/api/v1/task-sessions/s': jsonResponse(200, { session: { id: 's', revision: 5 } }),
      '/api/v1/tasks/t/boot-state': jsonResponse(200, {
        initial_state: { session: { id: 's' }, messages: [{ id: 'm' }], turns: [{ id: 'turn_1' }, null, { id: 7 }] },
      }),
    });
    const api = createApi({ fetch: fetch.fn });
    assert.deepEqual(await api.getSession('s'), { id: 's', revision: 5 });
    assert.deepEqual(await api.getBootState('t'), { session: { id: 's' }, messages: [{ id: 'm' }], turns: [{ id: 'turn_1' }] });
  });

  test('a page of older messages: newest first on the wire, oldest first in the answer', async () => {
    const fetch = fakeFetch({
      [olderMessagesPath('s', { before: 'm9', limit: 2 })]: jsonResponse(200, {
        messages: [{ id: 'm8' }, { id: 'm7' }], has_more: true, turns: [{ id: 'turn_1' }],
      }),
      [olderMessagesPath('s', { limit: 2 })]: jsonResponse(200, { messages: [{ id: 'm9' }], has_more: false }),
    });
    const api = createApi({ fetch: fetch.fn });
    assert.deepEqual(await api.listOlderMessages('s', { before: 'm9', limit: 2 }), {
      messages: [{ id: 'm7' }, { id: 'm8' }], turns: [{ id: 'turn_1' }], hasMore: true,
    });
    assert.deepEqual(await api.listOlderMessages('s', { limit: 2 }), { messages: [{ id: 'm9' }], turns: [], hasMore: false });
    assert.equal(olderMessagesPath('s', { before: 'm9', limit: 2 }), '/api/v1/task-sessions/s/messages?sort=desc&limit=2&before=m9');
  });

  test('a 404 becomes an ApiError with the gRPC code and message', async () => {
    const api = createApi({ fetch: fakeFetch({}).fn });
    await assert.rejects(api.getShellOutput('s', 'nope'), (error) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 404);
      assert.equal(error.code, 5);
      return true;
    });
  });

  test('a non-JSON error body still rejects', async () => {
    const api = createApi({
      fetch: async () => ({ ok: false, status: 503, json: async () => { throw new SyntaxError('html'); } }),
    });
    await assert.rejects(api.getSession('s'), (error) => error instanceof ApiError && error.status === 503);
  });

  test('the shell output request passes the abort signal through', async () => {
    const controller = new AbortController();
    const fetch = fakeFetch({ [shellOutputPath('s', 'm')]: jsonResponse(200, { message_id: 'm', status: 'running', output: {} }) });
    const api = createApi({ fetch: fetch.fn });
    const snap = await api.getShellOutput('s', 'm', controller.signal);
    assert.equal(snap.status, 'running');
    assert.equal(fetch.calls[0].init.signal, controller.signal);
  });
});
