// Unit tests of what the expanded output body shows.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { outputView } from '../output-view.js';
import { shellOutput } from './fakes.mjs';

describe('expanded body', () => {
  test('before the first shell output it shows loading and no output, whatever the message says', () => {
    const view = outputView({ shellOutput: null, unavailable: false, messageStatus: 'running', messageExitCode: null });
    assert.equal(view.loading, true);
    assert.equal(view.stdout, null);
    assert.equal(view.stderr, null);
    assert.equal(view.empty, false);
    assert.equal(view.exit, null);
  });

  test('shows combined output and distinguishes stderr when supplied', () => {
    const view = outputView({
      shellOutput: shellOutput('running', { stdout: 'building\n', stderr: 'warning: x\n' }),
      unavailable: false,
      messageStatus: 'running',
    });
    assert.equal(view.loading, false);
    assert.equal(view.stdout, 'building\n');
    assert.equal(view.stderr, 'warning: x\n');
    assert.equal(view.exit, null, 'no exit line while running');
  });

  test('a shell output with no output yet says so', () => {
    const view = outputView({ shellOutput: shellOutput('running'), unavailable: false, messageStatus: 'running' });
    assert.equal(view.empty, true);
    const bare = outputView({ shellOutput: { status: 'running', output: {} }, unavailable: false, messageStatus: 'running' });
    assert.equal(bare.empty, true);
  });

  test('shows a truncation notice when truncated', () => {
    const view = outputView({ shellOutput: shellOutput('complete', { stdout: 'tail', truncated: true, exit_code: 0 }), unavailable: false, messageStatus: 'complete' });
    assert.equal(view.truncated, true);
  });

  test('on completion shows Exit code N from the shell output', () => {
    const view = outputView({ shellOutput: shellOutput('complete', { stdout: 'x', exit_code: 4 }), unavailable: false, messageStatus: 'failed', messageResult: 'failure' });
    assert.deepEqual(view.exit, { code: 4, text: 'Exit code 4', result: 'failure' });
    const ok = outputView({ shellOutput: shellOutput('complete', { exit_code: 0 }), unavailable: false, messageStatus: 'complete', messageResult: 'success' });
    assert.deepEqual(ok.exit, { code: 0, text: 'Exit code 0', result: 'success' });
  });

  test('the exit line takes its look from the row, not from its own reading of the code', () => {
    const cancelled = outputView({ shellOutput: shellOutput('cancelled', { exit_code: 0 }), unavailable: false, messageStatus: 'cancelled', messageResult: 'neutral' });
    assert.deepEqual(cancelled.exit, { code: 0, text: 'Exit code 0', result: 'neutral' });
  });

  test('a terminal shell output under a summary still running is neutral until the final summary', () => {
    const view = outputView({ shellOutput: shellOutput('complete', { exit_code: 0 }), unavailable: false, messageStatus: 'running', messageResult: 'running' });
    assert.deepEqual(view.exit, { code: 0, text: 'Exit code 0', result: 'neutral' });
  });

  test('a failed command without exit code shows a neutral Exit code unavailable line', () => {
    const view = outputView({ shellOutput: shellOutput('failed', { stdout: 'boom' }), unavailable: false, messageStatus: 'failed', messageResult: 'failure' });
    assert.deepEqual(view.exit, { code: null, text: 'Exit code unavailable', result: 'neutral' });
  });

  test('an unknown exit shows Exit code unavailable, neutral', () => {
    const view = outputView({ shellOutput: shellOutput('complete', { stdout: 'x' }), unavailable: false, messageStatus: 'complete' });
    assert.deepEqual(view.exit, { code: null, text: 'Exit code unavailable', result: 'neutral' });
  });

  test('cancelled without exit shows Exit code unavailable and keeps the transcript', () => {
    const view = outputView({ shellOutput: shellOutput('cancelled', { stdout: 'partial' }), unavailable: false, messageStatus: 'cancelled' });
    assert.equal(view.stdout, 'partial');
    assert.deepEqual(view.exit, { code: null, text: 'Exit code unavailable', result: 'neutral' });
  });

  test('when the feed reports terminal before the final shell output, the exit line uses the summary', () => {
    const view = outputView({ shellOutput: shellOutput('running', { stdout: 'live' }), unavailable: false, messageStatus: 'failed', messageExitCode: 2, messageResult: 'failure' });
    assert.equal(view.stdout, 'live');
    assert.deepEqual(view.exit, { code: 2, text: 'Exit code 2', result: 'failure' });
  });

  test('a failure keeps the last good output and marks it unavailable', () => {
    const view = outputView({ shellOutput: shellOutput('running', { stdout: 'good' }), unavailable: true, messageStatus: 'running' });
    assert.equal(view.unavailable, true);
    assert.equal(view.stdout, 'good');
    assert.equal(view.loading, false);
  });

  test('a failure before any shell output shows unavailable, not loading, and no output', () => {
    const view = outputView({ shellOutput: null, unavailable: true, messageStatus: 'complete', messageExitCode: 0, messageResult: 'success' });
    assert.equal(view.unavailable, true);
    assert.equal(view.loading, false);
    assert.equal(view.stdout, null);
    assert.equal(view.empty, false);
    assert.deepEqual(view.exit, { code: 0, text: 'Exit code 0', result: 'success' }, 'the exit status is not output');
  });

  test('no exit line while the first request is loading, even for a completed command', () => {
    const view = outputView({ shellOutput: null, unavailable: false, messageStatus: 'complete', messageExitCode: 4 });
    assert.equal(view.exit, null);
  });
});
