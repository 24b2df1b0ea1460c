// What a turn's end marker says (pure): running, or ended with the ACP stop reason and the
// turn's duration.

import { timeKey } from './messages.js';

/** Seconds between two RFC 3339 times, or null when either is missing. */
export function durationSeconds(startedAt, completedAt) {
  const [startSeconds, startNanos] = timeKey(startedAt);
  const [endSeconds, endNanos] = timeKey(completedAt);
  if (!Number.isFinite(startSeconds) || !Number.isFinite(endSeconds)) return null;
  return Math.max(0, endSeconds - startSeconds + (endNanos - startNanos) / 1e9);
}

/** `0.4 s`, `12 s`, `3 min 05 s`, `2 h 04 min`. */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined) return '';
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min ${String(whole % 60).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/**
 * @param {{state?: string, stop_reason?: string, started_at?: string, completed_at?: string}} turn
 * @returns {{state: 'running'|'complete', stopReason: string, duration: string}}
 */
export function turnMarker(turn) {
  if (turn?.state !== 'complete') return { state: 'running', stopReason: '', duration: '' };
  const stopReason = typeof turn.stop_reason === 'string' ? turn.stop_reason : '';
  return { state: 'complete', stopReason, duration: formatDuration(durationSeconds(turn.started_at, turn.completed_at)) };
}
