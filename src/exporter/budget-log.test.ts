import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../lib/clock.js';
import { budgetEventLogger } from './budget-log.js';

describe('the request budget in the log', () => {
  it('a 429 on every request for 10 minutes gives a start, a line a minute and an end, not a line per 429', () => {
    const clock = new FakeClock();
    const lines: { level: string; msg: string; pausesTotal?: number }[] = [];
    const log = pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) });
    const onEvent = budgetEventLogger(log, clock);
    let pauses = 0;
    for (let second = 0; second < 600; second++) {
      // Two requests a second, each answered 429: each pauses the budget again.
      for (let i = 0; i < 2; i++) {
        onEvent({ type: 'paused', account: 'prod', untilMs: clock.now() + 1_000, pauseMs: 1_000, retryAfter: '1', effectiveRatePerSecond: 0.5 });
        pauses++;
      }
      clock.advance(1_000);
    }
    clock.advance(3 * 60_000);
    const about = lines.filter((l) => l.msg.startsWith('request budget: '));
    expect(about[0]?.msg).toMatch(/^request budget: paused/);
    expect(about.at(-1)).toMatchObject({ level: 'info', pausesTotal: pauses });
    expect(about.length).toBeLessThanOrEqual(1 + 10 + 1);
    expect(lines).toHaveLength(about.length);
  });

  it('logs a recovered key at once, and a refused one only at debug (the runtime logs it with the reason)', () => {
    const lines: { level: string; msg: string }[] = [];
    const log = pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) });
    const onEvent = budgetEventLogger(log, new FakeClock());
    onEvent({ type: 'auth_failed', account: 'prod', kind: 'unauthorized', retryAtMs: 0 });
    onEvent({ type: 'auth_recovered', account: 'prod' });
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['debug', 'request budget: auth_failed'],
      ['warn', 'request budget: auth_recovered'],
    ]);
  });
});
