import { describe, expect, it } from 'vitest';
import { Turns } from './turns.js';

describe('turns', () => {
  it('give each waiting piece a turn of the event loop of its own, in the order they asked', async () => {
    const turns = new Turns();
    let loopTurn = 0;
    let ticking = true;
    const tick = () => {
      loopTurn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const order: number[] = [];
    const seen = await Promise.all(
      [0, 1, 2, 3].map(async (piece) => {
        await turns.next();
        order.push(piece);
        return loopTurn;
      }),
    );
    ticking = false;
    expect(order).toEqual([0, 1, 2, 3]);
    expect(new Set(seen).size).toBe(4);
  });
});
