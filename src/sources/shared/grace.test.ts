import { describe, expect, it } from 'vitest';
import { carryAbsent, GraceMap } from './grace.js';

const HOUR = 3_600_000;

describe('GraceMap', () => {
  it.each([
    { name: 'back within the grace period: the state continues', backAfterMs: HOUR, want: 'old' },
    { name: 'back after it: the state is gone', backAfterMs: HOUR + 1, want: undefined },
  ])('$name', ({ backAfterMs, want }) => {
    const states = new GraceMap<string, string>(HOUR);
    states.set('h1', 'old');
    states.release('h1', 0);
    states.sweep(backAfterMs);
    expect(states.get('h1')).toBe(want);
  });

  it('keeps live entries however old, and counts what it drops', () => {
    const states = new GraceMap<string, number>(HOUR);
    states.set('live', 1);
    states.set('gone', 2);
    states.set('back', 3);
    states.release('gone', 0);
    states.release('back', 0);
    states.set('back', 4);
    states.release('never-set', 0);
    expect(states.sweep(10 * HOUR)).toBe(1);
    expect([states.get('live'), states.get('gone'), states.get('back'), states.size, states.releasedSize]).toEqual([1, undefined, 4, 2, 0]);
  });

  it('refuses a negative grace period', () => {
    expect(() => new GraceMap(-1)).toThrow(/grace period/);
  });
});

describe('carryAbsent', () => {
  it('copies absent entries seen within the grace period, never over the poll’s own', () => {
    const previous = new Map([
      ['present', { v: 1, seen: 0 }],
      ['recent', { v: 2, seen: 100 }],
      ['old', { v: 3, seen: 0 }],
    ]);
    const next = new Map([['present', { v: 9, seen: 200 }]]);
    carryAbsent(previous, next, (e) => e.seen, 150, 100);
    expect([...next]).toEqual([
      ['present', { v: 9, seen: 200 }],
      ['recent', { v: 2, seen: 100 }],
    ]);
  });
});
