// Unit tests of the page addresses.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { parseRoute, sessionUrl } from '../route.js';

test('/sessions/ID selects a session', () => {
  assert.deepEqual(parseRoute('http://h/sessions/ses_1'), { sessionId: 'ses_1' });
  assert.deepEqual(parseRoute('http://h/sessions/ses%2F1/'), { sessionId: 'ses/1' });
});

test('?session=ID selects a session', () => {
  assert.deepEqual(parseRoute('http://h/?session=ses_2'), { sessionId: 'ses_2' });
});

test('?task=ID selects a task (boot state)', () => {
  assert.deepEqual(parseRoute('http://h/?task=task_9'), { taskId: 'task_9' });
});

test('nothing selected', () => {
  assert.equal(parseRoute('http://h/'), null);
  assert.equal(parseRoute('http://h/?session=%20'), null);
  assert.equal(parseRoute('http://h/sessions/'), null);
});

test('sessionUrl round-trips', () => {
  assert.deepEqual(parseRoute(`http://h${sessionUrl('a b/c')}`), { sessionId: 'a b/c' });
});

test('sessionUrl keeps a dot id itself: in the query, not a path step', () => {
  for (const id of ['.', '..']) {
    const url = new URL(sessionUrl(id), 'http://h/').href; // as the browser resolves it
    assert.deepEqual(parseRoute(url), { sessionId: id });
  }
  assert.equal(sessionUrl('a.b'), '/sessions/a.b');
});
