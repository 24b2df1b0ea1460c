// Unit tests of the turn end marker: stop reason as ACP names it, duration, running.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { durationSeconds, formatDuration, turnMarker } from '../turns.js';

test('a completed turn shows its stop reason and duration', () => {
  const turn = { state: 'complete', stop_reason: 'max_tokens', started_at: '2026-12-01T10:00:00Z', completed_at: '2026-12-01T10:03:05.400Z' };
  assert.deepEqual(turnMarker(turn), { state: 'complete', stopReason: 'max_tokens', duration: '3 min 05 s' });
});

test('a running turn says it is running', () => {
  assert.deepEqual(turnMarker({ state: 'running', started_at: '2026-12-01T10:00:00Z' }), { state: 'running', stopReason: '', duration: '' });
  assert.equal(turnMarker(undefined).state, 'running');
});

test('a completed turn without a stop reason keeps it empty', () => {
  assert.equal(turnMarker({ state: 'complete' }).stopReason, '');
  assert.equal(turnMarker({ state: 'complete' }).duration, '');
});

test('durations of any fraction precision, never negative', () => {
  assert.equal(durationSeconds('2026-12-01T10:00:00.25Z', '2026-12-01T10:00:01Z'), 0.75);
  assert.equal(durationSeconds('2026-12-01T10:00:05Z', '2026-12-01T10:00:01Z'), 0);
  assert.equal(durationSeconds('', '2026-12-01T10:00:01Z'), null);
});

test('formatDuration picks a readable unit', () => {
  assert.equal(formatDuration(0.42), '0.4 s');
  assert.equal(formatDuration(12.4), '12 s');
  assert.equal(formatDuration(125), '2 min 05 s');
  assert.equal(formatDuration(7440), '2 h 04 min');
  assert.equal(formatDuration(null), '');
});
