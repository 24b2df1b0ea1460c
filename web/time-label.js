// How a message time is written (pure): the time of day for today, the date too otherwise.

/**
 * @param {string} value an RFC 3339 time from the API.
 * @param {Date} now
 * @returns {{text: string, title: string}|null} null when `value` is not a time.
 */
export function timeLabel(value, now, locale = undefined) {
  const date = typeof value === 'string' ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) return null;
  const clock = date.toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const title = date.toLocaleString(locale);
  if (sameDay(date, now)) return { text: clock, title };
  const options = { month: 'short', day: 'numeric' };
  if (date.getFullYear() !== now.getFullYear()) options.year = 'numeric';
  return { text: `${date.toLocaleDateString(locale, options)}, ${clock}`, title };
}

/** Whether two times fall on the same local calendar day. */
export function sameDay(a, b) {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
}
