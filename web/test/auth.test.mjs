// Unit tests of what the page checks about a token before it keeps one, and of what an answer
// says about the token held (auth.js).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { MAX_TOKEN_LENGTH, createRefusals, refusalOf, tokenProblem } from '../auth.js';

describe('tokenProblem', () => {
  test('a token the service makes, or any bearer token a header carries, is fine', () => {
    assert.equal(tokenProblem('shx_Q2hlY2sgdGhpcw-_AbC123'), null);
    assert.equal(tokenProblem('  abc.DEF~ghi+jkl/mno==  '), null, 'trimmed, as it is kept');
    assert.equal(tokenProblem('x'.repeat(MAX_TOKEN_LENGTH)), null);
  });

  test('a character no header can carry is named: fetch would throw before sending anything', () => {
    assert.match(tokenProblem('shx_abc\u2026'), /"…" \(U\+2026\)/);
    assert.match(tokenProblem('shx_ab cd'), /U\+0020/);
    assert.match(tokenProblem('"shx_abc"'), /U\+0022/);
    assert.match(tokenProblem('shx_ab\ncd'), /U\+000A/);
    assert.match(tokenProblem('shx_a=b'), /"=" \(U\+003D\)/, '= only at its end');
  });

  test('more than 256 characters is more than the token', () => {
    assert.match(tokenProblem('x'.repeat(MAX_TOKEN_LENGTH + 1)), /at most 256 characters; this has 257/);
  });

  test('an empty token says so', () => {
    assert.match(tokenProblem('   '), /empty/);
  });
});

describe('refusalOf', () => {
  test('401 is an unknown token; 403 with a token is one without the scope; others are not about it', () => {
    assert.equal(refusalOf({ status: 401 }, false), 'unknown');
    assert.equal(refusalOf({ status: 401 }, true), 'unknown');
    assert.equal(refusalOf({ status: 403 }, true), 'scope');
    assert.equal(refusalOf({ status: 403 }, false), null, 'without a token a 403 is the browser boundary');
    assert.equal(refusalOf({ status: 404 }, true), null);
    assert.equal(refusalOf(new TypeError('Failed to fetch'), true), null);
  });
});

describe('createRefusals', () => {
  const setup = (holds = true) => {
    const told = [];
    const refusals = createRefusals({ holdsToken: () => holds, onRefused: (...args) => told.push(args) });
    return { refusals, told };
  };

  test('the first answer refusing the token is told once, with why and what the service said', () => {
    const { refusals, told } = setup();
    assert.equal(refusals.check({ status: 404, message: 'not found' }), false);
    assert.equal(refusals.check(new TypeError('Failed to fetch')), false);
    assert.equal(refusals.refused, false);
    assert.equal(refusals.check({ status: 401, message: 'the bearer token is unknown or revoked' }), true);
    assert.deepEqual(told, [['unknown', 'the bearer token is unknown or revoked']]);
    assert.equal(refusals.refused, true);
  });

  test('once refused, every later answer is said to be handled and nothing is told again', () => {
    // The feed, a page of older messages and an open output may each be refused: the form shows
    // once, and no error line replaces it.
    const { refusals, told } = setup();
    refusals.check({ status: 403, message: 'missing scope read' });
    assert.equal(refusals.check({ status: 401 }), true);
    assert.equal(refusals.check({ status: 500, message: 'down' }), true);
    assert.deepEqual(told, [['scope', 'missing scope read']]);
  });

  test('a 403 to a tab without a token is not about a token; a feed refusal carries no message', () => {
    const anonymous = setup(false);
    assert.equal(anonymous.refusals.check({ status: 403 }), false);
    assert.deepEqual(anonymous.told, []);
    const { refusals, told } = setup();
    refusals.check({ status: 401 });
    assert.deepEqual(told, [['unknown', '']]);
  });
});
