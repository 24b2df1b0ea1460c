// Unit tests of the top bar's parts: the agent and task appear only when named.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { sessionHeaderParts } from '../session-header.js';

const SESSION = { id: 'ses_1', task_id: 'demo', agent: 'claude', state: 'idle', revision: 0 };

describe('sessionHeaderParts', () => {
  test('names the id, the agent and the task, in that order', () => {
    assert.deepEqual(sessionHeaderParts(SESSION), [
      { kind: 'id', text: 'ses_1' },
      { kind: 'agent', text: 'claude' },
      { kind: 'task', text: 'demo' },
    ]);
  });

  for (const agent of ['', '  ', null, undefined, 7, ['claude'], { name: 'claude' }]) {
    test(`a session without an agent name (${JSON.stringify(agent)}) shows no agent part`, () => {
      const parts = sessionHeaderParts({ ...SESSION, agent });
      assert.deepEqual(parts.map((part) => part.kind), ['id', 'task']);
      assert.ok(parts.every((part) => typeof part.text === 'string' && !part.text.includes('null')));
    });
  }

  test('a session created with only a task id (agent field omitted) shows no agent part', () => {
    const { agent: _omitted, ...withoutAgent } = SESSION;
    assert.deepEqual(sessionHeaderParts(withoutAgent).map((part) => part.text), ['ses_1', 'demo']);
  });

  test('a missing or empty task id shows no task part', () => {
    assert.deepEqual(sessionHeaderParts({ ...SESSION, task_id: null }).map((part) => part.kind), ['id', 'agent']);
    assert.deepEqual(sessionHeaderParts({ ...SESSION, task_id: '' }).map((part) => part.kind), ['id', 'agent']);
  });
});
