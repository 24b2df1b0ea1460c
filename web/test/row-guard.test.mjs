// Unit tests of the row guard: a row that throws is replaced by a plain one, the rest go on.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { guardRows } from '../row-guard.js';

/** A stand-in element: knows what replaced it. */
const fakeElement = (name) => ({ name, replacedBy: null, replaceWith(other) { this.replacedBy = other; } });

function setUp({ failOn }) {
  const errors = [];
  const destroyed = [];
  const realRow = (message) => {
    if (failOn(message)) throw new RangeError(`cannot draw ${message.id}`);
    const row = {
      el: fakeElement(`real ${message.id}`),
      shown: message.content,
      update(next) {
        if (failOn(next)) throw new RangeError(`cannot draw ${next.content}`);
        row.shown = next.content;
      },
      destroy() {
        destroyed.push(message.id);
      },
    };
    return row;
  };
  const plainRow = (message) => {
    const row = { el: fakeElement(`plain ${message.content}`), update(next) { row.el.name = `plain ${next.content}`; }, destroy() {} };
    return row;
  };
  const create = guardRows({
    createRow: realRow,
    createFallbackRow: plainRow,
    kindOf: () => 'chat',
    onError: (error, message) => errors.push(`${message.id}: ${error.message}`),
  });
  return { create, errors, destroyed };
}

describe('guardRows', () => {
  test('a row that cannot be created is a plain row, and the error is reported', () => {
    const { create, errors } = setUp({ failOn: (message) => message.content === 'hostile' });
    const good = create({ id: 'm1', content: 'fine' });
    const bad = create({ id: 'm2', content: 'hostile' });
    assert.equal(good.el.name, 'real m1');
    assert.equal(bad.el.name, 'plain hostile');
    assert.equal(bad.kind, 'chat');
    assert.deepEqual(errors, ['m2: cannot draw m2']);
  });

  test('a row whose update throws is swapped for a plain row in place; later updates reach it', () => {
    const { create, errors, destroyed } = setUp({ failOn: (message) => message.content === 'hostile' });
    const row = create({ id: 'm1', content: 'fine' });
    const before = row.el;
    row.update({ id: 'm1', content: 'hostile' });
    assert.equal(before.replacedBy, row.el);
    assert.equal(row.el.name, 'plain hostile');
    assert.deepEqual(destroyed, ['m1']);
    assert.deepEqual(errors, ['m1: cannot draw hostile']);
    row.update({ id: 'm1', content: 'fine again' });
    assert.equal(row.el.name, 'plain fine again');
  });

  test('rows that work are left as they are', () => {
    const { create, errors } = setUp({ failOn: () => false });
    const row = create({ id: 'm1', content: 'a' });
    const el = row.el;
    row.update({ id: 'm1', content: 'b' });
    assert.equal(row.el, el);
    assert.equal(el.replacedBy, null);
    assert.deepEqual(errors, []);
  });
});
