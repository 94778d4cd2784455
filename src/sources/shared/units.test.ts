import { describe, expect, it } from 'vitest';
import type { SourceUnit } from '../../upstream/monitoring/metric-catalogue.js';
import { baseUnitOf, parseTimestampMs, timestampSeconds, toBaseUnit } from './units.js';

describe('toBaseUnit', () => {
  it.each<{ unit: SourceUnit; input: number; want: number; base: string | undefined }>([
    { unit: 'percent', input: 42.5, want: 0.425, base: 'ratio' },
    { unit: 'percent', input: 0, want: 0, base: 'ratio' },
    { unit: 'kilobytes', input: 2, want: 2048, base: 'bytes' },
    { unit: 'bytes', input: 17, want: 17, base: 'bytes' },
    { unit: 'milliseconds', input: 250, want: 0.25, base: 'seconds' },
    { unit: 'seconds', input: 1.5, want: 1.5, base: 'seconds' },
    { unit: 'count', input: 7, want: 7, base: undefined },
    { unit: 'status', input: 1, want: 1, base: undefined },
    { unit: 'none', input: -3, want: -3, base: undefined },
  ])('$input $unit → $want ($base)', ({ unit, input, want, base }) => {
    expect(toBaseUnit(input, unit)).toBeCloseTo(want, 12);
    expect(baseUnitOf(unit)).toBe(base);
  });
});

describe('timestamps', () => {
  it.each([
    { input: '2026-11-22T12:00:00Z', want: Date.UTC(2026, 10, 22, 12) },
    { input: '2026-11-22T13:00:00+01:00', want: Date.UTC(2026, 10, 22, 12) },
    { input: '2026-11-22T12:00:00.250Z', want: Date.UTC(2026, 10, 22, 12) + 250 },
  ])('$input', ({ input, want }) => {
    expect(parseTimestampMs(input, 'x')).toBe(want);
    expect(timestampSeconds(input, 'x')).toBe(want / 1000);
  });

  it('names the field on bad input', () => {
    expect(() => parseTimestampMs('yesterday', 'host.last_seen')).toThrow(/host\.last_seen.*"yesterday"/);
  });
});
