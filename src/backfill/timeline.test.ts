import { describe, expect, it } from 'vitest';
import type { SeriesResult } from '../sources/series/fetch.js';
import { assembleHistory, historyWindows, relativeWindow } from './timeline.js';
import { SeriesPoints } from '../sources/series/points.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);

/** An answer as the API gives it: points every `intervalS` from the first grid time after now - span to now, value = bucket start in minutes. */
function answer(spanMs: number, intervalS: number, names = ['a'], now = NOW): SeriesResult {
  const step = intervalS * 1000;
  const points: { timestamp: string; value: number }[] = [];
  for (let t = Math.ceil((now - spanMs) / step) * step; t <= now; t += step) points.push({ timestamp: new Date(t).toISOString(), value: t / MIN });
  const since = new Date(now - spanMs).toISOString();
  return { hostUuid: 'h', series: Object.fromEntries(names.map((n) => [n, { since, intervalSeconds: intervalS, points: SeriesPoints.of(points) }])), window: { since, intervalSeconds: intervalS }, batches: 1 };
}

describe('historyWindows', () => {
  it.each([
    { span: 30 * DAY, expected: ['240m@60', '1d@120', '2d@300', '7d@900', '30d@3600'] },
    { span: 90 * DAY, expected: ['240m@60', '1d@120', '2d@300', '7d@900', '90d@3600'] },
    { span: 3 * DAY, expected: ['240m@60', '1d@120', '2d@300', '3d@900'] },
    { span: 14 * DAY, expected: ['240m@60', '1d@120', '2d@300', '7d@900', '2w@3600'] },
    { span: 2 * HOUR, expected: ['2h@60'] },
    { span: 36 * HOUR, expected: ['240m@60', '1d@120', '36h@300'] },
  ])('a history of $span ms takes one window per interval class: $expected', ({ span, expected }) => {
    expect(historyWindows(span).map((w) => `${w.since}@${w.intervalSeconds}`)).toEqual(expected);
  });

  it('leaves out windows whose class lies after the end of history or before what is written', () => {
    // History ends 3 days ago: the 240m, 1d and 2d classes would only cover time after it.
    expect(historyWindows(30 * DAY, 3 * DAY).map((w) => w.since)).toEqual(['7d', '30d']);
    // Written up to 10 days ago: the 30d window still covers 10 to 7 days ago.
    expect(historyWindows(30 * DAY, 0, 10 * DAY).map((w) => w.since)).toEqual(['240m', '1d', '2d', '7d', '30d']);
    // Written up to 5 hours ago: only the finest classes are left.
    expect(historyWindows(30 * DAY, 0, 5 * HOUR).map((w) => w.since)).toEqual(['240m', '1d']);
  });

  it('writes windows in the largest unit that divides them', () => {
    expect([relativeWindow(90 * MIN), relativeWindow(3 * HOUR), relativeWindow(2 * DAY), relativeWindow(21 * DAY), relativeWindow(61_000)]).toEqual(['90m', '3h', '2d', '3w', '2m']);
  });
});

describe('assembleHistory', () => {
  const all = [answer(4 * HOUR, 60), answer(DAY, 120), answer(2 * DAY, 300), answer(7 * DAY, 900), answer(30 * DAY, 3600)];

  it('takes each bucket from the finest answer that has it, handing over on shared grid times, without gap or overlap', () => {
    const steps = assembleHistory(all, -Infinity, NOW - 3 * MIN);
    for (let i = 1; i < steps.length; i++) {
      const previous = steps[i - 1]!;
      expect(steps[i]!.t, `step ${i}`).toBe(previous.t + previous.intervalMs);
    }
    const intervals = steps.map((s) => s.intervalMs / 1000);
    // Coarse to fine, each class once, in order.
    expect([...new Set(intervals)]).toEqual([3600, 900, 300, 120, 60]);
    // Each class reaches as close to its window's start as the grids allow.
    const firstOf = (seconds: number) => steps.find((s) => s.intervalMs === seconds * 1000)!.t;
    expect(NOW - firstOf(60)).toBeLessThanOrEqual(4 * HOUR);
    expect(NOW - firstOf(60)).toBeGreaterThan(4 * HOUR - 2 * MIN);
    expect(NOW - firstOf(900)).toBeLessThanOrEqual(7 * DAY);
    expect(NOW - firstOf(900)).toBeGreaterThan(7 * DAY - HOUR);
    // Whole buckets only: the last one ends by the end given.
    const last = steps[steps.length - 1]!;
    expect(last.t + last.intervalMs).toBeLessThanOrEqual(NOW - 3 * MIN);
    expect(last.t + last.intervalMs).toBeGreaterThan(NOW - 5 * MIN);
    expect(last.points.a?.value).toBe(last.t / MIN);
  });

  it('hands over between grids that share few times (300 s to 120 s meet every 10 minutes)', () => {
    const steps = assembleHistory([answer(DAY, 120), answer(2 * DAY, 300)], -Infinity, NOW);
    const handover = steps.findIndex((s) => s.intervalMs === 120_000);
    expect(steps[handover]!.t % (10 * MIN)).toBe(0);
    expect(steps[handover - 1]!.t + 300_000).toBe(steps[handover]!.t);
  });

  it('goes on from where a stopped backfill got to, and ends where it is told', () => {
    const from = NOW - 10 * DAY;
    const until = NOW - 5 * DAY;
    const steps = assembleHistory(all, from, until);
    expect(steps[0]!.t).toBe(from);
    const last = steps[steps.length - 1]!;
    expect(last.t + last.intervalMs).toBe(until);
    expect(new Set(steps.map((s) => s.intervalMs / 1000))).toEqual(new Set([3600, 900]));
  });

  it('merges the names of several batches of one window', () => {
    const one = answer(4 * HOUR, 60, ['a']);
    const two = answer(4 * HOUR, 60, ['b']);
    const steps = assembleHistory([{ ...one, series: { ...one.series, ...two.series } }], -Infinity, NOW);
    expect(Object.keys(steps[0]!.points).sort()).toEqual(['a', 'b']);
  });

  it('hands over to a window at its latest batch\'s start, so that a batch answered minutes after the first misses no minute', () => {
    // The 60 s window's names in two batches: `b` asked 3 minutes after `a`, after a slow answer.
    const first = answer(4 * HOUR, 60, ['a']);
    const late = answer(4 * HOUR, 60, ['b'], NOW + 3 * MIN);
    const fine = { ...first, series: { ...first.series, ...late.series }, window: undefined, batches: 2 };
    const coarse = answer(DAY, 120, ['a', 'b'], NOW + 4 * MIN);
    const steps = assembleHistory([fine, coarse], -Infinity, NOW);
    for (const name of ['a', 'b']) {
      const own = steps.filter((s) => s.points[name] !== undefined);
      for (let i = 1; i < own.length; i++) expect(own[i]!.t, `${name}, step ${i}`).toBe(own[i - 1]!.t + own[i - 1]!.intervalMs);
    }
    const handover = steps.find((s) => s.intervalMs === 60_000)!.t;
    expect(handover).toBeGreaterThanOrEqual(NOW + 3 * MIN - 4 * HOUR);
  });
});
