// Unit tests of the fetch-based SSE reader: parsing, headers, and the EventSource-like events
// the feed relies on.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { authHeaders, createTokenStore, needsSignIn } from '../auth.js';
import { createSseParser, fetchEventSource } from '../event-stream.js';
import { flush } from './fakes.mjs';

function streamOf(chunks) {
  const encoder = new TextEncoder();
  let controller;
  const body = new ReadableStream({
    start(c) {
      controller = c;
      for (const chunk of chunks) c.enqueue(encoder.encode(chunk));
    },
  });
  return { body, push: (text) => controller.enqueue(encoder.encode(text)), end: () => controller.close() };
}

function sseResponse(stream, status = 200) {
  return new Response(stream.body, { status, headers: { 'content-type': 'text/event-stream' } });
}

describe('createSseParser', () => {
  test('joins data lines, dispatches at blank lines, across any chunk boundary', () => {
    const seen = [];
    const parser = createSseParser((data) => seen.push(data));
    for (const chunk of ['da', 'ta: {"a":1}\n', '\ndata:x\r\ndata: y\r\n\r', '\n: comment\n\nevent: e\n']) {
      parser.push(chunk);
    }
    assert.deepEqual(seen, ['{"a":1}', 'x\ny']);
  });
});

describe('fetchEventSource', () => {
  test('sends the headers, opens, delivers each event, then errors when the stream ends', async () => {
    const stream = streamOf(['data: {"n":1}\n\n']);
    const calls = [];
    const Source = fetchEventSource({
      headers: () => ({ authorization: 'Bearer t' }),
      fetch: async (url, init) => {
        calls.push({ url, init });
        return sseResponse(stream);
      },
    });
    const events = [];
    const source = new Source('/feed');
    source.onopen = () => events.push('open');
    source.onmessage = (event) => events.push(event.data);
    source.onerror = () => events.push('error');
    await flush();
    stream.push('data: {"n":2}\n\n');
    await flush();
    stream.end();
    await flush();
    assert.equal(calls[0].url, '/feed');
    assert.equal(calls[0].init.headers.authorization, 'Bearer t');
    assert.equal(calls[0].init.headers.Accept, 'text/event-stream');
    assert.deepEqual(events, ['open', '{"n":1}', '{"n":2}', 'error']);
  });

  test('an event its handler throws on is reported, and the stream goes on unbroken', async () => {
    const stream = streamOf(['data: bad\n\ndata: good\n\n']);
    const reported = [];
    const Source = fetchEventSource({ fetch: async () => sseResponse(stream), onHandlerError: (error) => reported.push(error.message) });
    const events = [];
    const source = new Source('/feed');
    source.onmessage = (event) => {
      if (event.data === 'bad') throw new RangeError('Maximum call stack size exceeded');
      events.push(event.data);
    };
    source.onerror = () => events.push('error');
    await flush();
    stream.push('data: later\n\n');
    await flush();
    assert.deepEqual(reported, ['Maximum call stack size exceeded']);
    assert.deepEqual(events, ['good', 'later']); // no error: the feed does not reconnect past it
  });

  test('close() stops delivery and reports no error', async () => {
    const stream = streamOf([]);
    const Source = fetchEventSource({ fetch: async () => sseResponse(stream) });
    const events = [];
    const source = new Source('/feed');
    source.onmessage = (event) => events.push(event.data);
    source.onerror = () => events.push('error');
    await flush();
    source.close();
    stream.push('data: late\n\n');
    await flush();
    assert.deepEqual(events, []);
  });

  test('a 401 is reported as refused, then as an error, and never opens', async () => {
    const refused = [];
    const Source = fetchEventSource({
      onRefused: (status) => refused.push(status),
      fetch: async () => new Response('{"code":16}', { status: 401, headers: { 'content-type': 'application/json' } }),
    });
    const events = [];
    const source = new Source('/feed');
    source.onopen = () => events.push('open');
    source.onerror = (event) => events.push(`error ${event.status}`);
    await flush();
    assert.deepEqual(refused, [401]);
    assert.deepEqual(events, ['error 401']);
  });

  test('a feed refused with a JSON error carries the reason its details name', async () => {
    const body = {
      code: 3,
      message: "since_revision: is ahead of the session's latest revision 0",
      details: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'REVISION_AHEAD', domain: 'shellexec', metadata: {} },
        { '@type': 'type.googleapis.com/google.rpc.BadRequest', field_violations: [{ field: 'since_revision', reason: '' }] },
      ],
    };
    const Source = fetchEventSource({
      fetch: async () => new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } }),
    });
    const events = [];
    const source = new Source('/feed?since_revision=9');
    source.onerror = (event) => events.push([event.status, event.reason]);
    await flush();
    assert.deepEqual(events, [[400, 'REVISION_AHEAD']]);
  });

  test('a network failure is an error', async () => {
    const Source = fetchEventSource({ fetch: async () => { throw new TypeError('network'); } });
    const events = [];
    const source = new Source('/feed');
    source.onerror = () => events.push('error');
    await flush();
    assert.deepEqual(events, ['error']);
  });
});

describe('auth', () => {
  function memoryStorage() {
    const items = new Map();
    return {
      getItem: (key) => (items.has(key) ? items.get(key) : null),
      setItem: (key, value) => items.set(key, String(value)),
      removeItem: (key) => items.delete(key),
      items,
    };
  }

  test('the token store keeps one trimmed token and forgets it on clear', () => {
    const storage = memoryStorage();
    const tokens = createTokenStore(storage);
    assert.equal(tokens.get(), '');
    tokens.set('  shx_abc \n');
    assert.equal(tokens.get(), 'shx_abc');
    assert.equal(storage.items.size, 1);
    tokens.clear();
    assert.equal(tokens.get(), '');
  });

  test('headers carry the token as a bearer token, and nothing without one', () => {
    assert.deepEqual(authHeaders('shx_abc'), { authorization: 'Bearer shx_abc' });
    assert.deepEqual(authHeaders(''), {});
  });

  test('only a 401 asks for a sign-in', () => {
    assert.equal(needsSignIn({ status: 401 }), true);
    assert.equal(needsSignIn({ status: 403 }), false);
    assert.equal(needsSignIn(new Error('x')), false);
  });
});
