// Unit tests of message time labels: the date appears when the message is not from today.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { sameDay, timeLabel } from '../time-label.js';

const local = (y, m, d, h = 12) => new Date(y, m - 1, d, h, 30, 15);

test('a message from today shows the time only', () => {
  const label = timeLabel(local(2026, 12, 1, 9).toISOString(), local(2026, 12, 1, 18), 'en-GB');
  assert.equal(label.text, '09:30:15');
});

test('an earlier day shows the date, a year ago the year too', () => {
  const now = local(2026, 12, 1);
  assert.equal(timeLabel(local(2026, 11, 29).toISOString(), now, 'en-GB').text, '29 Nov, 12:30:15');
  assert.equal(timeLabel(local(2025, 11, 29).toISOString(), now, 'en-GB').text, '29 Nov 2025, 12:30:15');
});

test('no time, no label', () => {
  assert.equal(timeLabel('', new Date()), null);
  assert.equal(timeLabel('not a time', new Date()), null);
  assert.equal(timeLabel(undefined, new Date()), null);
});

test('sameDay compares the local calendar day', () => {
  assert.equal(sameDay(local(2026, 1, 1, 0), local(2026, 1, 1, 23)), true);
  assert.equal(sameDay(local(2026, 1, 1, 23), local(2026, 1, 2, 0)), false);
});
