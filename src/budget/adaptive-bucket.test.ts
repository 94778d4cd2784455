import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdaptiveTokenBucket, MIN_RATE_FRACTION } from './adaptive-bucket.js';

const T0 = 1_000_000;

function bucket(overrides: Partial<{ ratePerSecond: number; capacity: number; initialTokens: number }> = {}) {
  return new AdaptiveTokenBucket({ ratePerSecond: 2, capacity: 10, initialTokens: 5, nowMs: T0, ...overrides });
}

function drain(b: AdaptiveTokenBucket, nowMs: number): number {
  let n = 0;
  while (b.tryTake(nowMs)) n++;
  return n;
}

describe('AdaptiveTokenBucket', () => {
  it('starts with the initial tokens and refuses once empty', () => {
    const b = bucket();
    expect(drain(b, T0)).toBe(5);
    expect(b.tryTake(T0)).toBe(false);
    expect(b.msUntilToken(T0)).toBe(500);
  });

  it('refills at the configured rate up to capacity, never beyond', () => {
    const b = bucket({ initialTokens: 0 });
    expect(b.available(T0 + 1_500)).toBeCloseTo(3, 9);
    expect(b.available(T0 + 60_000)).toBe(10);
  });

  it.each<[string, number, number]>([
    ['a quarter second', 250, 0],
    ['one second', 1_000, 2],
    ['four seconds', 4_000, 8],
    ['a minute (capped at capacity)', 60_000, 10],
  ])('after %s an empty bucket yields %i tokens', (_label, elapsedMs, expected) => {
    const b = bucket({ initialTokens: 0 });
    expect(drain(b, T0 + elapsedMs)).toBe(expected);
  });

  it('a pause empties the bucket and refills nothing until it ends', () => {
    const b = bucket({ initialTokens: 10 });
    b.pauseUntil(T0, T0 + 30_000, true);
    expect(b.available(T0 + 29_999)).toBe(0);
    expect(b.msUntilToken(T0 + 10_000)).toBeGreaterThanOrEqual(20_000);
    expect(b.available(T0 + 30_000)).toBe(0);
  });

  it('halves the rate at a 429, then climbs back by 25% of the configured rate per minute', () => {
    const b = bucket();
    const resume = T0 + 10_000;
    b.pauseUntil(T0, resume, true);
    expect(b.ratePerSecondAt(resume)).toBeCloseTo(1, 9);
    expect(b.ratePerSecondAt(resume + 30_000)).toBeCloseTo(1.25, 9);
    expect(b.ratePerSecondAt(resume + 60_000)).toBeCloseTo(1.5, 9);
    expect(b.ratePerSecondAt(resume + 120_000)).toBeCloseTo(2, 9);
    expect(b.ratePerSecondAt(resume + 3_600_000)).toBe(2);
  });

  it('halves a partly recovered rate again at the next 429, down to the floor', () => {
    const b = bucket({ ratePerSecond: 4 });
    b.pauseUntil(T0, T0 + 1_000, true);
    // 2/s at resume, 3.5/s a minute and a half later; the next 429 halves that, not the configured 4/s.
    const later = T0 + 1_000 + 90_000;
    expect(b.ratePerSecondAt(later)).toBeCloseTo(3.5, 9);
    b.pauseUntil(later, later + 1_000, true);
    expect(b.ratePerSecondAt(later + 1_000)).toBeCloseTo(2, 9);
  });

  it('integrates the climbing rate exactly', () => {
    const b = bucket({ capacity: 1_000 });
    const resume = T0 + 5_000;
    b.pauseUntil(T0, resume, true);
    // Rate goes 1.0 -> 1.5 tokens/s linearly over the first minute: mean 1.25.
    expect(b.available(resume + 60_000)).toBeCloseTo(75, 6);
    // Past the point where it reaches 2/s (2 min), the extra time accrues at 2/s.
    const atSixMinutes = 75 + ((1.5 + 2) / 2) * 60 + 2 * 240;
    expect(b.available(resume + 360_000)).toBeCloseTo(atSixMinutes, 6);
  });

  it('repeated 429 episodes (a storm) never take the rate below the floor of half', () => {
    const b = bucket();
    let now = T0;
    for (let i = 0; i < 12; i++) {
      b.pauseUntil(now, now + 1_000, true);
      now += 1_000;
    }
    expect(MIN_RATE_FRACTION).toBe(0.5);
    expect(b.ratePerSecondAt(now)).toBeCloseTo(1, 9);
    // And from the floor, back to the configured rate in two minutes.
    expect(b.ratePerSecondAt(now + 120_000)).toBeCloseTo(2, 9);
  });

  it('a 429 from the same episode moves the resume time without halving again', () => {
    const b = bucket();
    b.pauseUntil(T0, T0 + 10_000, true);
    b.pauseUntil(T0 + 100, T0 + 20_000, false);
    expect(b.available(T0 + 19_999)).toBe(0);
    expect(b.ratePerSecondAt(T0 + 20_000)).toBeCloseTo(1, 9);
  });

  it('a second pause never shortens the first', () => {
    const b = bucket();
    b.pauseUntil(T0, T0 + 20_000, true);
    b.pauseUntil(T0 + 1, T0 + 5_000, false);
    expect(b.available(T0 + 19_000)).toBe(0);
  });

  it('hands out at most capacity + rate × window in any window, whatever the call pattern', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 300 }), (gaps) => {
        const b = bucket({ initialTokens: 10 });
        const taken: number[] = [];
        let now = T0;
        for (const gap of gaps) {
          now += gap;
          while (b.tryTake(now)) taken.push(now);
        }
        const windowMs = 5_000;
        for (let i = 0; i < taken.length; i++) {
          const start = taken[i] ?? 0;
          const inWindow = taken.filter((t) => t >= start && t < start + windowMs).length;
          expect(inWindow).toBeLessThanOrEqual(10 + (2 * windowMs) / 1000);
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe('AdaptiveTokenBucket.reconfigure', () => {
  it('refills at the new rate from then on and keeps tokens up to the new capacity', () => {
    const b = bucket({ initialTokens: 10 });
    b.reconfigure(1, 4, T0);
    expect(b.capacity).toBe(4);
    expect(drain(b, T0)).toBe(4);
    expect(b.available(T0 + 2_000)).toBeCloseTo(2, 9);
    expect(b.ratePerSecondAt(T0 + 3_600_000)).toBe(1);
  });

  it('keeps the tokens earned at the old rate before the change', () => {
    const b = bucket({ initialTokens: 0 });
    b.reconfigure(0.5, 10, T0 + 1_000);
    expect(b.available(T0 + 1_000)).toBeCloseTo(2, 9);
    expect(b.available(T0 + 3_000)).toBeCloseTo(3, 9);
  });

  it('lowered after a 429, stays lowered in proportion and climbs back to the new rate', () => {
    const b = bucket();
    b.pauseUntil(T0, T0 + 10_000, true);
    b.reconfigure(1, 10, T0 + 5_000);
    expect(b.ratePerSecondAt(T0 + 10_000)).toBeCloseTo(0.5, 9);
    expect(b.ratePerSecondAt(T0 + 10_000 + 120_000)).toBeCloseTo(1, 9);
  });
});

