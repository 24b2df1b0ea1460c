// Unit tests of announcing, politely and boundedly, the commands that finish while the page is open.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { QUIET_MS, createCommandFinished } from '../command-finished.js';
import { FakeClock } from './fakes.mjs';

const shell = (id, command, status, result, exitCode) => ({
  id,
  type: 'tool_execute',
  metadata: {
    status,
    normalized: { kind: 'shell_exec', shell_exec: { command, result, output: exitCode === undefined ? {} : { exit_code: exitCode } } },
  },
});
const running = (id, command) => shell(id, command, 'running', 'running');
const failed = (id, command, code) => shell(id, command, 'failed', 'failure', code);
const passed = (id, command) => shell(id, command, 'complete', 'success', 0);

function setup() {
  const clock = new FakeClock();
  const said = [];
  const finished = createCommandFinished({ say: (text) => said.push(text), setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout });
  return { clock, said, finished };
}

describe('createCommandFinished', () => {
  test('a command seen running is announced when it finishes, with its result', () => {
    const { said, finished } = setup();
    finished.seen(running('m1', 'npm test'));
    assert.deepEqual(said, []);
    finished.seen(failed('m1', 'npm test', 2));
    assert.deepEqual(said, ['Finished: npm test, Failed · exit 2']);
    finished.seen(failed('m1', 'npm test', 2)); // an update of a finished command
    assert.equal(said.length, 1);
  });

  test('a command never seen running is not announced', () => {
    const { said, finished } = setup();
    finished.seen(passed('m1', 'make')); // loaded finished
    finished.seen({ id: 'm2', type: 'agent_message', content: 'hi' });
    assert.deepEqual(said, []);
  });

  test('at most one announcement in each quiet time; the rest are told together', async () => {
    const { clock, said, finished } = setup();
    for (let n = 0; n < 50; n += 1) finished.seen(running(`m${n}`, `step ${n}`));
    for (let n = 0; n < 50; n += 1) finished.seen(passed(`m${n}`, `step ${n}`));
    assert.deepEqual(said, ['Finished: step 0, Succeeded']);
    await clock.advance(QUIET_MS);
    assert.deepEqual(said.slice(1), ['49 more commands finished; the last: step 49, Succeeded']);
    await clock.advance(QUIET_MS * 10);
    assert.equal(said.length, 2, 'nothing more to say');

    finished.seen(running('late', 'ls'));
    finished.seen(passed('late', 'ls'));
    assert.equal(said.at(-1), 'Finished: ls, Succeeded');
  });

  test('the command is named within bounds', () => {
    const { said, finished } = setup();
    finished.seen(running('m1', `echo ${'x'.repeat(10_000)}\nmore`));
    finished.seen(passed('m1', `echo ${'x'.repeat(10_000)}\nmore`));
    assert.ok(said[0].length < 100, said[0]);
  });

  test('stop cancels what was held', async () => {
    const { clock, said, finished } = setup();
    finished.seen(running('a', 'a'));
    finished.seen(running('b', 'b'));
    finished.seen(passed('a', 'a'));
    finished.seen(passed('b', 'b'));
    finished.stop();
    await clock.advance(QUIET_MS);
    assert.deepEqual(said, ['Finished: a, Succeeded']);
  });
});
