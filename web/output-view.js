// What the expanded output body shows, decided without DOM from the poller's state and the
// row's message. Output text comes only from fetched shell outputs: the message payload carries a
// summary (status, exit code, result, byte counts) and never a body.

import { exitLine, isTerminalStatus, knownExitCode } from './status.js';

/**
 * @param {object} input
 * @param {object|null} input.shellOutput the last successful shell output, or null.
 * @param {boolean} input.unavailable the last request failed.
 * @param {string} input.messageStatus `metadata.status` of the row's message.
 * @param {number|null} input.messageExitCode the summary's known exit code, or null.
 * @param {string} input.messageResult the row's drawn result (`resultOf` of its message).
 * @returns {{
 *   loading: boolean, unavailable: boolean, stdout: string|null, stderr: string|null,
 *   empty: boolean, truncated: boolean,
 *   exit: null | {code: number|null, text: string, result: string}
 * }}
 */
export function outputView({ shellOutput, unavailable, messageStatus, messageExitCode = null, messageResult = 'neutral' }) {
  const output = shellOutput?.output ?? {};
  const stdout = typeof output.stdout === 'string' && output.stdout !== '' ? output.stdout : null;
  const stderr = typeof output.stderr === 'string' && output.stderr !== '' ? output.stderr : null;
  const loading = !shellOutput && !unavailable;
  return {
    loading,
    unavailable: Boolean(unavailable),
    stdout,
    stderr,
    empty: Boolean(shellOutput) && stdout === null && stderr === null,
    truncated: output.truncated === true,
    exit: loading ? null : exitView(shellOutput, messageStatus, messageExitCode, messageResult),
  };
}

/**
 * The exit line, shown once the command is terminal and the first request has answered (so the
 * body appears whole): its code from the shell output when it is terminal,
 * else from the message summary when the feed already reports it terminal (the final shell output
 * may still be on its way). Null while running. Its look is the row's result: the shell output
 * carries none, and the summary's is the server's (ADR 0009).
 */
function exitView(shellOutput, messageStatus, messageExitCode, messageResult) {
  let code;
  if (shellOutput && isTerminalStatus(shellOutput.status)) {
    code = knownExitCode(shellOutput.output);
  } else if (isTerminalStatus(messageStatus)) {
    code = messageExitCode ?? null;
  } else {
    return null;
  }
  // "Exit code unavailable" is neutral even when the command failed: the row's badge already
  // says failure, and the line only reports what is known about the exit code. A summary still
  // `running` under a terminal shell output is neutral until the feed brings the final summary.
  const result = code === null || messageResult === 'running' ? 'neutral' : messageResult;
  return { code, text: exitLine(code), result };
}
