// Message ordering and idempotent upserts, without DOM. The chat shows messages by created_at,
// then id; feed events are upserts by id (replays after a reconnect are harmless).

const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$/i;

/**
 * A sortable key for an RFC 3339 timestamp: `[epoch seconds, nanoseconds]`. Fractions of any
 * precision compare correctly (`...00.25Z` after `...00Z`), unlike a plain string comparison.
 * Unparseable or missing values sort first.
 */
export function timeKey(value) {
  const match = typeof value === 'string' ? TIMESTAMP.exec(value.trim()) : null;
  if (!match) return [-Infinity, 0];
  const seconds = Date.parse(`${match[1]}${match[3] ?? 'Z'}`) / 1000;
  if (!Number.isFinite(seconds)) return [-Infinity, 0];
  const nanos = Number((match[2] ?? '').padEnd(9, '0').slice(0, 9));
  return [seconds, nanos];
}

export function compareTimes(a, b) {
  const [sa, na] = timeKey(a);
  const [sb, nb] = timeKey(b);
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (na !== nb) return na < nb ? -1 : 1;
  return 0;
}

/** Chat order: created_at, then id. */
export function compareMessages(a, b) {
  const byTime = compareTimes(a.created_at, b.created_at);
  if (byTime !== 0) return byTime;
  const ia = String(a.id);
  const ib = String(b.id);
  return ia < ib ? -1 : ia > ib ? 1 : 0;
}

/**
 * An ordered set of messages keyed by id.
 * `upsert(message)` returns `{change, index, previousIndex, message}` where change is
 * `added`, `updated` or `ignored` (no id, or an older version than the one held: a replayed
 * event must not move a message back in time).
 */
export function createMessageStore() {
  const byId = new Map();
  let ordered = [];

  function indexFor(message) {
    let lo = 0;
    let hi = ordered.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareMessages(ordered[mid], message) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Where a held message is: a binary search, since (created_at, id) is unique. */
  function indexOfHeld(held) {
    const index = indexFor(held);
    return ordered[index] === held ? index : ordered.indexOf(held);
  }

  return {
    upsert(message) {
      if (!message || message.id === undefined || message.id === null || message.id === '') {
        return { change: 'ignored', index: -1, previousIndex: -1, message };
      }
      const held = byId.get(message.id);
      if (held && compareTimes(held.updated_at, message.updated_at) > 0) {
        return { change: 'ignored', index: indexOfHeld(held), previousIndex: -1, message: held };
      }
      let previousIndex = -1;
      if (held) {
        previousIndex = indexOfHeld(held);
        ordered.splice(previousIndex, 1);
      }
      const index = indexFor(message);
      ordered.splice(index, 0, message);
      byId.set(message.id, message);
      return { change: held ? 'updated' : 'added', index, previousIndex, message };
    },
    get(id) {
      return byId.get(id);
    },
    /** The message after `id` in chat order, or undefined. */
    next(id) {
      const held = byId.get(id);
      if (!held) return undefined;
      return ordered[indexOfHeld(held) + 1];
    },
    /** The index of message `id` in chat order, or -1. */
    indexOf(id) {
      const held = byId.get(id);
      return held ? indexOfHeld(held) : -1;
    },
    /** The message at `index` in chat order. */
    at(index) {
      return ordered[index];
    },
    list() {
      return ordered.slice();
    },
    get size() {
      return ordered.length;
    },
  };
}
