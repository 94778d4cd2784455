import { createTask } from 'node-cron';
import { describe, expect, it } from 'vitest';
import { analyseCron, cronFiresAt, CRON_TIMEZONE } from './cron.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;

describe('analyseCron', () => {
  it.each([
    ['17 */2 * * *', 2 * HOUR, 12],
    ['0 * * * *', HOUR, 24],
    ['*/30 * * * *', 30 * MINUTE, 48],
    ['0 */3 * * *', 3 * HOUR, 8],
    ['0 22 * * *', 24 * HOUR, 1],
    // Late evening and just after midnight: the gap spans the day boundary.
    ['30 23 * * *', 24 * HOUR, 1],
    ['0 0,23 * * *', HOUR, 2],
    // Two runs on the first of each month only: an 8-day sample would miss this one most months.
    ['0 0,1 1 * *', HOUR, 2],
    ['0 0 L-1,L * *', 24 * HOUR, 1],
    ['*/5 * * * * *', 5_000, 17_280],
    ['0 0 * * mon#1', 28 * 24 * HOUR, 1],
    ['@daily', 24 * HOUR, 1],
    ['0 9-17/4 * * 1-5', 4 * HOUR, 3],
    ['0 22-2 * * *', HOUR, 5],
  ])('%j: shortest gap %d ms, %d runs a day', (expression, gapMs, runs) => {
    expect(analyseCron(expression)).toEqual({ ok: true, shortestGapMs: gapMs, firesPerMatchingDay: runs });
  });

  it.each([
    ['x', '"x" is not a valid cron expression: expected 5 or 6 fields but got 1'],
    ['1 2 3', '"1 2 3" is not a valid cron expression: expected 5 or 6 fields but got 3'],
    ['70 * * * *', '"70 * * * *" is not a valid cron expression: the minute field "70" is malformed or out of range'],
    ['0 25 * * *', '"0 25 * * *" is not a valid cron expression: the hour field "25" is malformed or out of range'],
    ['0 0 30 2 *', '"0 0 30 2 *" is not a valid cron expression: day-of-month "30" never occurs in the months it names'],
    ['0 0 * * * $', '"0 0 * * * $" is not a valid cron expression: pattern includes illegal characters'],
  ])('%j is refused', (expression, error) => {
    expect(analyseCron(expression)).toEqual({
      ok: false,
      error: `${error} (5 fields "minute hour day-of-month month day-of-week", or 6 with seconds first)`,
    });
  });

  it('finds a leap-day-only schedule, which fires once in four years', () => {
    expect(analyseCron('0 0 29 2 *')).toMatchObject({ ok: true, firesPerMatchingDay: 1 });
  });
});

/**
 * The day rules are re-implemented in cron.ts (node-cron does not export its matcher),
 * so they are held against node-cron's own `match`.
 */
describe('cronFiresAt agrees with node-cron', () => {
  const expressions = [
    '0 0 L * *',
    '0 0 15W * *',
    '0 0 1W * *',
    '0 0 LW * *',
    '0 0 L-3 * *',
    '0 0 * * 5L',
    '0 0 * * 1#2',
    '0 0 1,15 * 1-5',
    '0 0 * feb sun',
    '17 */2 * * *',
    '*/20 5-7 * * *',
    '0 22-2 * * *',
  ];

  it.each(expressions)('%j', (expression) => {
    const task = createTask(expression, () => undefined, { timezone: CRON_TIMEZONE });
    const firesAt = cronFiresAt(expression);
    try {
      expect(firesAt).toBeDefined();
      // Every day of four years (a leap cycle), at times these schedules fire at and times they do not.
      const timesOfDay = [0, 17 * MINUTE, 2 * HOUR + 17 * MINUTE, 5 * HOUR + 20 * MINUTE, 23 * HOUR];
      let fired = 0;
      for (let day = 0; day < 4 * 366; day++) {
        for (const timeOfDay of timesOfDay) {
          const instant = Date.UTC(2025, 0, 1) + day * 86_400_000 + timeOfDay;
          const expected = task.match(new Date(instant));
          if (firesAt?.(instant) !== expected) expect.fail(`${new Date(instant).toISOString()}: node-cron says ${expected}`);
          if (expected) fired++;
        }
      }
      expect(fired).toBeGreaterThan(10);
    } finally {
      void task.destroy();
    }
  });

  it('finds matching instants at all, so the agreement above is not only on "no"', () => {
    const firesAt = cronFiresAt('0 0 L * *');
    expect(firesAt?.(Date.UTC(2028, 1, 29))).toBe(true);
    expect(firesAt?.(Date.UTC(2027, 1, 28))).toBe(true);
    expect(firesAt?.(Date.UTC(2028, 1, 28))).toBe(false);
  });
});
