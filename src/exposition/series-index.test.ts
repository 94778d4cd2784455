import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeriesIndex, familySeed, hashString, type SeriesHash } from './series-index.js';

function hashOf(family: string, key: string): SeriesHash {
  const seed = familySeed(family);
  const out = { hi: 0, lo: 0 };
  hashString(key, seed.hi, seed.lo, out);
  return out;
}

describe('SeriesIndex', () => {
  it('gives a series to its first claimant and names that owner to later ones', () => {
    const index = new SeriesIndex();
    const { hi, lo } = hashOf('demo_up', 'host="a"');
    expect(index.claim(hi, lo, 1)).toBe(0);
    expect(index.claim(hi, lo, 2)).toBe(1);
    expect(index.claim(hi, lo, 1)).toBe(1);
    expect(index.size).toBe(1);
  });

  it('releases only for the owner', () => {
    const index = new SeriesIndex();
    const { hi, lo } = hashOf('demo_up', 'host="a"');
    index.claim(hi, lo, 1);
    index.release(hi, lo, 2);
    expect(index.claim(hi, lo, 2)).toBe(1);
    index.release(hi, lo, 1);
    expect(index.claim(hi, lo, 2)).toBe(0);
  });

  it('tells the same labels in two families apart', () => {
    const a = hashOf('demo_a', 'host="x"');
    const b = hashOf('demo_b', 'host="x"');
    expect([a.hi, a.lo]).not.toEqual([b.hi, b.lo]);
  });

  it('behaves like a map from key to owner through growth and deletions', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1, max: 4 })), { maxLength: 4000 }),
        (operations) => {
          const index = new SeriesIndex();
          const model = new Map<number, number>();
          for (const [claim, key, owner] of operations) {
            const { hi, lo } = hashOf('demo', `k="${key}"`);
            if (claim) {
              const expected = model.get(key) ?? 0;
              expect(index.claim(hi, lo, owner)).toBe(expected);
              if (expected === 0) model.set(key, owner);
            } else {
              index.release(hi, lo, owner);
              if (model.get(key) === owner) model.delete(key);
            }
          }
          expect(index.size).toBe(model.size);
          for (const [key, owner] of model) {
            const { hi, lo } = hashOf('demo', `k="${key}"`);
            expect(index.claim(hi, lo, 99)).toBe(owner);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('finds no collision among 300,000 distinct series of one family', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 300_000; i++) {
      const { hi, lo } = hashOf('monapi_system_cpu_user_ratio', `account="a${i % 25}",host="host-${i}.example.com",host_uuid="${i}"`);
      seen.add(`${hi},${lo}`);
    }
    expect(seen.size).toBe(300_000);
  });
});
