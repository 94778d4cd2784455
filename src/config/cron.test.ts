import { createTask } from 'node-cron';
import { describe, expect, it } from 'vitest';
import { analyseCron, cronSchedule, CRON_TIMEZONE } from './cron.js';

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
 * The next fire time comes from node-cron's own matcher; it is held against node-cron's own
 * walk to the next runs (which starts from the real time now).
 */
describe('cronSchedule agrees with node-cron', () => {
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
    try {
      // Whole seconds, so node-cron's walk (which starts from the current second) and ours start alike.
      const now = Math.floor(Date.now() / 1000) * 1000;
      const expected = task.getNextRuns(6).map((date) => date.getTime());
      const schedule = cronSchedule(expression);
      const ours: number[] = [];
      let after = now;
      for (let i = 0; i < 6; i++) {
        const next = schedule.nextFireMs(after);
        if (next === undefined) break;
        ours.push(next);
        after = next;
      }
      expect(ours.map((t) => new Date(t).toISOString())).toEqual(expected.map((t) => new Date(t).toISOString()));
    } finally {
      void task.destroy();
    }
  });

  it('finds the next fire time after any instant, strictly after it', () => {
    const schedule = cronSchedule('0 0 L * *');
    expect(schedule.nextFireMs(Date.UTC(2028, 1, 28))).toBe(Date.UTC(2028, 1, 29));
    expect(schedule.nextFireMs(Date.UTC(2028, 1, 29))).toBe(Date.UTC(2028, 2, 31));
    expect(cronSchedule('17 */2 * * *').nextFireMs(Date.UTC(2026, 10, 26, 8, 17))).toBe(Date.UTC(2026, 10, 26, 10, 17));
  });

  it('refuses an invalid expression with the same words as the check', () => {
    expect(() => cronSchedule('x')).toThrow('"x" is not a valid cron expression');
  });
});
