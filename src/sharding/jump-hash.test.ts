import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fnv1a64, jumpHash, shardOfName } from './jump-hash.js';

describe('fnv1a64', () => {
  it.each([
    ['', 0xcbf29ce484222325n],
    ['a', 0xaf63dc4c8601ec8cn],
    ['foobar', 0x85944171f73967e8n],
  ])('hashes %j like the reference FNV-1a', (text, expected) => {
    expect(fnv1a64(text)).toBe(expected);
  });
});

describe('jumpHash', () => {
  // The cross-language compatibility values of the published implementations (Guava, Go, C).
  it('gives the reference buckets for keys 0-19 among 100 buckets', () => {
    const golden = [0, 55, 62, 8, 45, 59, 86, 97, 82, 59, 73, 37, 17, 56, 86, 21, 90, 37, 38, 83];
    expect(golden.map((_, key) => jumpHash(BigInt(key), 100))).toEqual(golden);
  });

  it.each([
    [1n, [0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 17, 17]],
    [0xdeadbeefn, [0, 1, 2, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 16, 16, 16]],
    [0x0ddc0ffeebadf00dn, [0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 15, 15, 15, 15]],
  ])('gives key %s the reference C++ buckets for 1 to 19 buckets', (key, expected) => {
    expect(expected.map((_, i) => jumpHash(key, i + 1))).toEqual(expected);
  });

  it.each([
    [10863919174838991n, 11, 6],
    [2016238256797177309n, 11, 3],
    [1673758223894951030n, 11, 5],
    [2n, 100001, 80343],
    [2201n, 100001, 22152],
    [2202n, 100001, 15018],
  ])('puts key %s among %i buckets in bucket %i', (key, buckets, expected) => {
    expect(jumpHash(key, buckets)).toBe(expected);
  });

  it('stays in range and moves a key only to the newest bucket when one is added', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.integer({ min: 1, max: 500 }), (key, buckets) => {
        const before = jumpHash(key, buckets);
        const after = jumpHash(key, buckets + 1);
        expect(before).toBeGreaterThanOrEqual(0);
        expect(before).toBeLessThan(buckets);
        expect(after === before || after === buckets).toBe(true);
      }),
    );
  });

  it.each([0, -1, 1.5, Number.NaN, 2 ** 31])('refuses %s buckets', (buckets) => {
    expect(() => jumpHash(1n, buckets)).toThrow(/whole number of buckets/);
  });
});

describe('shardOfName', () => {
  it('spreads many names evenly over the shards', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) counts[shardOfName(`account-${i}`, 4)]! += 1;
    for (const count of counts) expect(Math.abs(count - 1000)).toBeLessThan(150);
  });

  it('puts every name in shard 0 of 1', () => {
    expect(['prod', 'staging', ''].map((name) => shardOfName(name, 1))).toEqual([0, 0, 0]);
  });
});
