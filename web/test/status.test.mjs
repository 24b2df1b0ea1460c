// Unit tests of the pure row helpers: the server's result, command fallback, output offer.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  NAMED_COMMAND_CHARS,
  commandName,
  commandOf,
  exitCodeOf,
  exitLine,
  formatBytes,
  hasRetainedOutput,
  isShellMessage,
  isTerminalStatus,
  knownExitCode,
  resultOf,
  rowKind,
  shellStatusLabel,
  toolCallResult,
  workDirOf,
} from '../status.js';

function shellMessage({ status = 'complete', result, command = 'make test', workDir = '/repo', content = 'make test', output = {} } = {}) {
  return {
    id: 'msg_1',
    session_id: 'ses_1',
    type: 'tool_execute',
    author_type: 'agent',
    content,
    created_at: '2026-07-16T12:00:00Z',
    updated_at: '2026-07-16T12:00:01Z',
    metadata: {
      status,
      title: command,
      normalized: {
        kind: 'shell_exec',
        shell_exec: {
          command,
          work_dir: workDir,
          output: { truncated: false, has_output: false, stdout_bytes: 0, stderr_bytes: 0, ...output },
          ...(result === undefined ? {} : { result }),
        },
      },
    },
  };
}

describe("the server's result (ADR 0009)", () => {
  test('success, failure and running are drawn as the server says', () => {
    assert.equal(resultOf(shellMessage({ result: 'success', output: { exit_code: 0 } })), 'success');
    assert.equal(resultOf(shellMessage({ result: 'failure', output: { exit_code: 4 } })), 'failure');
    assert.equal(resultOf(shellMessage({ status: 'running', result: 'running' })), 'running');
  });

  test('the page does not classify: a running command whose process exited 1 stays running', () => {
    const message = shellMessage({ status: 'running', result: 'running', output: { exit_code: 1 } });
    assert.equal(resultOf(message), 'running');
  });

  test('unknown is drawn neutral, never success or failure', () => {
    assert.equal(resultOf(shellMessage({ status: 'complete', result: 'unknown' })), 'neutral');
    assert.equal(resultOf(shellMessage({ status: 'cancelled', result: 'unknown', output: { exit_code: 0 } })), 'neutral');
  });

  test('a missing or unexpected result is neutral, whatever the status and exit code say', () => {
    assert.equal(resultOf(shellMessage({ output: { exit_code: 0 } })), 'neutral');
    assert.equal(resultOf(shellMessage({ result: 'weird', output: { exit_code: 0 } })), 'neutral');
    assert.equal(resultOf(shellMessage({ result: 'toString' })), 'neutral');
    assert.equal(resultOf({ type: 'tool_execute', content: 'ls' }), 'neutral');
  });

  test('terminal statuses are complete, failed and cancelled', () => {
    assert.deepEqual(
      ['pending', 'running', 'complete', 'failed', 'cancelled', ''].map(isTerminalStatus),
      [false, false, true, true, true, false],
    );
  });

  test('non-shell tool calls: complete looks like success, no exit code involved', () => {
    assert.deepEqual(
      ['complete', 'failed', 'running', 'pending', 'cancelled', ''].map(toolCallResult),
      ['success', 'failure', 'running', 'running', 'neutral', 'neutral'],
    );
  });
});

describe('exit codes', () => {
  test('absent means unknown and 0 is known', () => {
    assert.equal(knownExitCode({}), null);
    assert.equal(knownExitCode({ exit_code: 0 }), 0);
    assert.equal(knownExitCode({ exit_code: 4 }), 4);
    assert.equal(knownExitCode({ exit_code: -1 }), -1);
    assert.equal(knownExitCode(undefined), null);
  });

  test('non-integers are unknown; numeric strings are accepted', () => {
    assert.equal(knownExitCode({ exit_code: null }), null);
    assert.equal(knownExitCode({ exit_code: 1.5 }), null);
    assert.equal(knownExitCode({ exit_code: 'x' }), null);
    assert.equal(knownExitCode({ exit_code: '3' }), 3);
  });

  test('exitCodeOf reads the summary', () => {
    assert.equal(exitCodeOf(shellMessage({ output: { exit_code: 0 } })), 0);
    assert.equal(exitCodeOf(shellMessage()), null);
  });

  test('exit line text', () => {
    assert.equal(exitLine(0), 'Exit code 0');
    assert.equal(exitLine(4), 'Exit code 4');
    assert.equal(exitLine(null), 'Exit code unavailable');
  });
});

describe('badge labels', () => {
  test('say what the result is', () => {
    assert.equal(shellStatusLabel('running', 'pending', null), 'Pending');
    assert.equal(shellStatusLabel('running', 'running', null), 'Running');
    assert.equal(shellStatusLabel('running', 'running', 1), 'Running');
    assert.equal(shellStatusLabel('success', 'complete', 0), 'Succeeded');
    assert.equal(shellStatusLabel('failure', 'failed', 4), 'Failed · exit 4');
    assert.equal(shellStatusLabel('failure', 'failed', null), 'Failed');
    assert.equal(shellStatusLabel('failure', 'cancelled', 130), 'Failed · exit 130');
    assert.equal(shellStatusLabel('neutral', 'complete', null), 'Completed · exit unknown');
    assert.equal(shellStatusLabel('neutral', 'cancelled', null), 'Cancelled');
    assert.equal(shellStatusLabel('neutral', 'cancelled', 0), 'Cancelled · exit 0');
    assert.equal(shellStatusLabel('neutral', '', null), 'Unknown');
  });
});

describe('command and working directory', () => {
  test('the normalized command is shown in full', () => {
    const long = `bash -lc '${'x'.repeat(2000)}'`;
    assert.equal(commandOf(shellMessage({ command: long })), long);
  });

  test('an empty command falls back to the message content', () => {
    assert.equal(commandOf(shellMessage({ command: '', content: 'ls -la' })), 'ls -la');
  });

  test('a message without a shell payload uses its content', () => {
    assert.equal(commandOf({ type: 'tool_execute', content: 'pwd' }), 'pwd');
    assert.equal(commandOf({ type: 'tool_execute' }), '');
  });

  test('the working directory is hidden when empty', () => {
    assert.equal(workDirOf(shellMessage({ workDir: '/repo' })), '/repo');
    assert.equal(workDirOf(shellMessage({ workDir: '' })), null);
    assert.equal(workDirOf({ type: 'tool_execute' }), null);
  });
});

describe('output disclosure offer', () => {
  test('offered when has_output is true', () => {
    assert.equal(hasRetainedOutput(shellMessage({ output: { has_output: true } })), true);
  });

  test('offered when a byte count is positive', () => {
    assert.equal(hasRetainedOutput(shellMessage({ output: { stdout_bytes: 14 } })), true);
    assert.equal(hasRetainedOutput(shellMessage({ output: { stderr_bytes: 3 } })), true);
    assert.equal(hasRetainedOutput(shellMessage({ output: { stdout_bytes: '14' } })), true);
  });

  test('not offered without retained output', () => {
    assert.equal(hasRetainedOutput(shellMessage()), false);
    assert.equal(hasRetainedOutput({ type: 'tool_execute', content: 'ls' }), false);
  });
});

describe('row kinds', () => {
  test('tool_execute and normalized shell payloads are shell rows', () => {
    assert.equal(rowKind(shellMessage()), 'shell');
    assert.equal(isShellMessage({ type: 'tool_call', metadata: { normalized: { kind: 'shell_exec' } } }), true);
    assert.equal(rowKind({ type: 'tool_execute', content: 'ls' }), 'shell');
  });

  test('other tool calls and chat text', () => {
    assert.equal(rowKind({ type: 'tool_call', metadata: { title: 'Read file', status: 'complete' } }), 'tool');
    assert.equal(rowKind({ type: 'message', author_type: 'user', content: 'hi' }), 'chat');
    assert.equal(rowKind({ type: 'message', author_type: 'agent', content: 'hello' }), 'chat');
  });
});

describe('formatBytes', () => {
  test('bytes, KiB and MiB', () => {
    assert.deepEqual(
      [0, 14, 1023, 1536, 300 * 1024, 2.5 * 1024 * 1024, -5, undefined].map(formatBytes),
      ['0 B', '14 B', '1023 B', '1.5 KiB', '300 KiB', '2.5 MiB', '0 B', '0 B'],
    );
  });
});

describe('a command in an accessible name', () => {
  test('is its first line, spaces collapsed', () => {
    assert.equal(commandName('npm  test\t--watch'), 'npm test --watch');
    assert.equal(commandName('cat <<EOF\nsecret\nEOF'), 'cat <<EOF');
    assert.equal(commandName(''), '');
    assert.equal(commandName(undefined), '');
  });

  test('drops what a screen reader would read wrongly or not at all', () => {
    assert.equal(commandName('cat \u202Etxt.exe'), 'cat txt.exe');
    assert.equal(commandName('rm\u200B -rf\u0007 x\u2028y'), 'rm -rf x y');
  });

  test('is bounded, whatever the command', () => {
    const name = commandName('x'.repeat(100_000));
    assert.equal(Array.from(name).length, NAMED_COMMAND_CHARS + 1);
    assert.ok(name.endsWith('…'));
    const emoji = commandName('😀'.repeat(NAMED_COMMAND_CHARS + 5));
    assert.equal(Array.from(emoji).length, NAMED_COMMAND_CHARS + 1, 'cut between characters');
  });

  test('keeps at most MAX_MARKS combining marks on a character (combining-marks.js)', () => {
    assert.equal(commandName(`echo Z${'\u0301'.repeat(131_000)} x`), `echo Z${'\u0301'.repeat(16)} x`);
    assert.equal(commandName('echo Tiếng Việt'), 'echo Tiếng Việt');
  });
});
