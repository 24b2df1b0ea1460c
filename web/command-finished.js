// Says, politely, when a command the page saw running has finished, for a screen reader: the
// badge changes colour and words, which nobody hears. An agent may finish commands by the
// dozen, so at most one announcement goes out every QUIET_MS; the commands finishing in
// between are told together at the end of that time ("3 more commands finished; the last:
// npm test, Failed · exit 2"). A command the page never saw running (loaded finished, or an
// older page) is never announced, nor is a replayed event the list ignored.

import { commandName, commandOf, exitCodeOf, isShellMessage, isTerminalStatus, resultOf, shellStatusLabel, statusOf } from './status.js';

/** The least time between two announcements (ms). */
export const QUIET_MS = 5_000;

/**
 * @param {object} deps
 * @param {(text: string) => void} deps.say puts the text in a polite live region
 * @param {typeof setTimeout} [deps.setTimeout]
 * @param {typeof clearTimeout} [deps.clearTimeout]
 * @param {number} [deps.quietMs]
 * @returns {{seen(message: object): void, stop(): void}}
 */
export function createCommandFinished({
  say,
  setTimeout: schedule = globalThis.setTimeout.bind(globalThis),
  clearTimeout: unschedule = globalThis.clearTimeout.bind(globalThis),
  quietMs = QUIET_MS,
}) {
  const running = new Set(); // ids of the shell messages the page holds as running
  let quiet = null; // the timer of the quiet time after an announcement
  let held = { count: 0, last: '' }; // what finished during the quiet time

  function announce(text) {
    say(text);
    quiet = schedule(() => {
      quiet = null;
      if (held.count === 0) return;
      const { count, last } = held;
      held = { count: 0, last: '' };
      announce(count === 1 ? `Finished: ${last}` : `${count} more commands finished; the last: ${last}`);
    }, quietMs);
  }

  return {
    /** A message as the list now holds it (from the loaded page or a feed event it took). */
    seen(message) {
      if (!isShellMessage(message) || typeof message.id !== 'string') return;
      if (!isTerminalStatus(statusOf(message))) {
        running.add(message.id);
        return;
      }
      if (!running.delete(message.id)) return;
      const status = statusOf(message);
      const what = `${commandName(commandOf(message)) || 'a command'}, ${shellStatusLabel(resultOf(message), status, exitCodeOf(message))}`;
      if (quiet === null) announce(`Finished: ${what}`);
      else held = { count: held.count + 1, last: what };
    },
    stop() {
      if (quiet !== null) unschedule(quiet);
      quiet = null;
      running.clear();
    },
  };
}
