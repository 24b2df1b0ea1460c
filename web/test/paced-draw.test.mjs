// Unit tests of the paced draw: requests share a draw, a slow draw spaces the next one out, the
// newest request is always drawn, and a cancelled draw never runs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { createPacedDraw, DRAW_SHARE } from '../paced-draw.js';
import { FakeClock } from './fakes.mjs';

/** A paced draw on a fake clock whose frames come as soon as their wait is over; each draw
 * records what it drew and takes `cost()` milliseconds, which move the draw's clock on (the
 * page's thread is busy while it draws). */
function setUp(cost = () => 0) {
  const clock = new FakeClock();
  let spent = 0; // drawing
  const now = () => clock.now + spent;
  const drawn = [];
  let text = '';
  const paced = createPacedDraw(
    () => {
      drawn.push({ text, at: now() });
      spent += cost(text);
    },
    {
      now,
      later: (ms, fn) => {
        const id = clock.setTimeout(fn, ms);
        return () => clock.clearTimeout(id);
      },
    },
  );
  const stream = (chunk) => {
    text += chunk;
    paced.request();
  };
  return { clock, drawn, paced, stream };
}

describe('createPacedDraw', () => {
  test('the requests before a frame share one draw of the newest state', async () => {
    const { clock, drawn, stream } = setUp();
    for (let i = 0; i < 1000; i += 1) stream('x');
    assert.deepEqual(drawn, []); // nothing is drawn inside the event that asked
    await clock.advance(0);
    assert.deepEqual(drawn, [{ text: 'x'.repeat(1000), at: 0 }]);
    await clock.advance(1000);
    assert.equal(drawn.length, 1); // nothing new asked, nothing drawn
  });

  test('after a slow draw, drawing takes at most its share of the time', async () => {
    const { clock, drawn, stream } = setUp((text) => text.length); // 1 ms per character
    stream('x'.repeat(100));
    await clock.advance(0);
    stream('y'); // drawn no sooner than 100 ms * (1 / share - 1) after the first draw ended
    await clock.advance(399);
    assert.equal(drawn.length, 1);
    await clock.advance(1);
    assert.deepEqual(drawn.map(({ at }) => at), [0, 100 + 100 * (1 / DRAW_SHARE - 1)]);
  });

  test('a reply streamed in 1,000 chunks is drawn a few times, ending with all of it', async () => {
    // Chunks every 5 ms; a draw costs 1 ms per 100 characters, like parsing Markdown.
    const { clock, drawn, stream } = setUp((text) => text.length / 100);
    for (let i = 0; i < 1000; i += 1) {
      stream('x'.repeat(128));
      await clock.advance(5);
    }
    await clock.advance(10_000);
    assert.equal(drawn.at(-1).text.length, 128_000);
    // Unpaced, 1,000 draws would take 640 s for 5 s of streaming.
    const drawing = drawn.reduce((sum, { text }) => sum + text.length / 100, 0);
    const streaming = drawn.at(-1).at;
    assert.ok(drawing <= DRAW_SHARE * streaming + 1280, `${drawing} ms drawing in ${streaming} ms`);
    assert.ok(drawn.length < 100, `${drawn.length} draws`);
  });

  test('a cancelled draw never runs, and a later request draws again', async () => {
    const { clock, drawn, paced, stream } = setUp();
    stream('a');
    paced.cancel();
    await clock.advance(100);
    assert.deepEqual(drawn, []);
    stream('b');
    await clock.advance(0);
    assert.deepEqual(drawn.map(({ text }) => text), ['ab']);
  });
});
