// Pure helpers that read a browser-facing Message (see docs/api.md) and decide
// what a row shows: the command, the working directory, the result, labels. No DOM here, so
// `node --test web/test/` covers every rule. A shell command's result is the server's
// (`shell_exec.result`, ADR 0009): the page draws it and never classifies a command itself.

import { withoutExtraMarks } from './combining-marks.js';

/** Tool statuses after which a command no longer changes. */
export const TERMINAL_STATUSES = Object.freeze(['complete', 'failed', 'cancelled']);

/** Results a shell row can show. `neutral` is the contract's `unknown`. */
export const RESULTS = Object.freeze(['success', 'failure', 'running', 'neutral']);

/** The server's result words and how each is drawn. */
const RESULT_LOOK = Object.freeze({ running: 'running', success: 'success', failure: 'failure', unknown: 'neutral' });

export function isTerminalStatus(status) {
  return TERMINAL_STATUSES.includes(status);
}

/** The `shell_exec` payload of a message, or null when the message is not a shell command. */
export function shellExecOf(message) {
  const normalized = message?.metadata?.normalized;
  if (!normalized || typeof normalized !== 'object') return null;
  const shell = normalized.shell_exec;
  if (shell && typeof shell === 'object') return shell;
  return normalized.kind === 'shell_exec' ? {} : null;
}

/** True for rows drawn as shell commands: `tool_execute` messages or normalized shell payloads. */
export function isShellMessage(message) {
  return message?.type === 'tool_execute' || shellExecOf(message) !== null;
}

/** Which kind of row a message gets: `shell`, `tool` (other tool call) or `chat`. */
export function rowKind(message) {
  if (isShellMessage(message)) return 'shell';
  if (message?.type === 'tool_call') return 'tool';
  return 'chat';
}

export function statusOf(message) {
  const status = message?.metadata?.status;
  return typeof status === 'string' ? status : '';
}

/**
 * A known exit code as an integer, or null when unknown. Absent means unknown; 0 is known.
 * Strings are accepted defensively in case a 64-bit field is ever printed as a JSON string.
 */
export function knownExitCode(output) {
  const value = output?.exit_code;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value);
  return null;
}

/** The summary's exit code for a message, or null when unknown. */
export function exitCodeOf(message) {
  return knownExitCode(shellExecOf(message)?.output);
}

/**
 * How a shell message's result is drawn: the summary's `result` as the server computed it, with
 * `unknown` drawn `neutral`. A missing or unexpected word is neutral too: never success or failure.
 */
export function resultOf(message) {
  const result = shellExecOf(message)?.result;
  return Object.hasOwn(RESULT_LOOK, result) ? RESULT_LOOK[result] : 'neutral';
}

/** Result look of a non-shell tool call: it has no exit code, so `complete` means it worked. */
export function toolCallResult(status) {
  if (status === 'complete') return 'success';
  if (status === 'failed') return 'failure';
  if (status === 'pending' || status === 'running') return 'running';
  return 'neutral';
}

function byteCount(value) {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

/** Retained byte counts of the summary: `{stdout, stderr}`, zero when absent. */
export function outputBytes(message) {
  const output = shellExecOf(message)?.output;
  return { stdout: byteCount(output?.stdout_bytes), stderr: byteCount(output?.stderr_bytes) };
}

/** Whether the summary says output is retained: the only condition for offering the disclosure. */
export function hasRetainedOutput(message) {
  const output = shellExecOf(message)?.output;
  if (!output || typeof output !== 'object') return false;
  if (output.has_output === true) return true;
  const bytes = outputBytes(message);
  return bytes.stdout > 0 || bytes.stderr > 0;
}

/** Whether the summary says the retained output was cut to its newest part. */
export function isTruncated(message) {
  return shellExecOf(message)?.output?.truncated === true;
}

/** The full command: the normalized command, else the message content. Never shortened. */
export function commandOf(message) {
  const command = shellExecOf(message)?.command;
  if (typeof command === 'string' && command !== '') return command;
  return typeof message?.content === 'string' ? message.content : '';
}

/** Characters of a command an accessible name takes at most. */
export const NAMED_COMMAND_CHARS = 60;

/**
 * A command as a bounded part of an accessible name ("Copy command: npm test"), so a screen
 * reader tells one row's buttons and output from another's: its first line, invisible
 * characters dropped, controls and runs of spaces as one space, a character's combining marks
 * past MAX_MARKS dropped (combining-marks.js), cut at NAMED_COMMAND_CHARS characters.
 * The row itself shows the whole command.
 */
export function commandName(command) {
  const firstLine = String(command ?? '').split(/\r?\n/, 1)[0];
  const shown = firstLine
    .replace(/\p{Cf}+/gu, '') // bidi controls, zero-width and tag characters: nothing to say
    .replace(/[\p{Cc}\p{Zl}\p{Zp}\s]+/gu, ' ')
    .trim();
  const named = withoutExtraMarks(shown);
  const chars = Array.from(named);
  if (chars.length <= NAMED_COMMAND_CHARS) return named;
  return `${chars.slice(0, NAMED_COMMAND_CHARS).join('').trimEnd()}…`;
}

/** The working directory, or null when absent or empty (then it is hidden). */
export function workDirOf(message) {
  const dir = shellExecOf(message)?.work_dir;
  return typeof dir === 'string' && dir !== '' ? dir : null;
}

/** Short badge text for a shell row, from its drawn result (`resultOf`), status and exit code. */
export function shellStatusLabel(result, status, exitCode) {
  const known = exitCode !== null && exitCode !== undefined;
  switch (result) {
    case 'running':
      return status === 'pending' ? 'Pending' : 'Running';
    case 'success':
      return 'Succeeded';
    case 'failure':
      return known ? `Failed · exit ${exitCode}` : 'Failed';
    default:
      if (status === 'cancelled') return known ? `Cancelled · exit ${exitCode}` : 'Cancelled';
      if (status === 'complete') return known ? `Completed · exit ${exitCode}` : 'Completed · exit unknown';
      return status ? capitalize(status) : 'Unknown';
  }
}

/** The exit line of an expanded terminal command. */
export function exitLine(exitCode) {
  return exitCode === null || exitCode === undefined ? 'Exit code unavailable' : `Exit code ${exitCode}`;
}

export function capitalize(text) {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}

/** Human byte size: `0 B`, `14 B`, `1.5 KiB`, `300 KiB`, `2.0 MiB`. */
export function formatBytes(bytes) {
  const n = byteCount(bytes);
  if (n < 1024) return `${n} B`;
  const kib = n / 1024;
  if (kib < 1024) return `${kib < 10 ? kib.toFixed(1) : Math.round(kib)} KiB`;
  const mib = kib / 1024;
  return `${mib < 10 ? mib.toFixed(1) : Math.round(mib)} MiB`;
}
