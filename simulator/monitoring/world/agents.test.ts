import { describe, expect, it } from 'vitest';

import {
  type AgentSchedule,
  BUFFER_MINUTES,
  isLostReport,
  lastSeenMs,
  MINUTE_MS,
  ONLINE_WINDOW_MS,
  type Outage,
  outageAt,
  readableFromMs,
} from './agents.js';

const DAY0 = Math.floor(Date.UTC(2026, 10, 1) / MINUTE_MS);
const lag = 45_000;
const steady: AgentSchedule = { key: 11, behaviour: 'steady', lagMs: lag, firstMinute: 0 };
const quiet: AgentSchedule = { key: 12, behaviour: 'quiet', lagMs: lag, firstMinute: 0 };
const flappy: AgentSchedule = { key: 13, behaviour: 'flappy', lagMs: lag, firstMinute: 0 };

/** Distinct outages of an agent within [from, to) minutes. */
function outages(agent: AgentSchedule, from: number, to: number): Outage[] {
  const found = new Map<number, Outage>();
  for (let m = from; m < to; m++) {
    const o = outageAt(agent, m);
    if (o) found.set(o.start, o);
  }
  return [...found.values()];
}

describe('outages', () => {
  it('a steady agent never goes quiet', () => {
    expect(outages(steady, DAY0, DAY0 + 3 * 1440)).toEqual([]);
  });

  it('a quiet agent has long outages (2-8 h) and a flappy one short ones (2-7 min)', () => {
    const long = outages(quiet, DAY0, DAY0 + 10 * 1440);
    const short = outages(flappy, DAY0, DAY0 + 10 * 1440);
    expect(long.length).toBeGreaterThan(3);
    expect(short.length).toBeGreaterThan(3);
    for (const o of long) expect(o.end - o.start).toBeGreaterThanOrEqual(120);
    for (const o of long) expect(o.end - o.start).toBeLessThanOrEqual(480);
    for (const o of short) expect(o.end - o.start).toBeGreaterThanOrEqual(2);
    for (const o of short) expect(o.end - o.start).toBeLessThanOrEqual(7);
  });

  it('loses about 0.2 % of reports', () => {
    let lost = 0;
    for (let m = DAY0; m < DAY0 + 50_000; m++) if (isLostReport(steady, m)) lost++;
    expect(lost).toBeGreaterThan(50);
    expect(lost).toBeLessThan(200);
  });
});

describe('readability (ingest delay and buffering)', () => {
  it('a minute becomes readable one minute plus the lag after it starts', () => {
    const m = DAY0 + 17;
    const from = isLostReport(steady, m) ? Infinity : (m + 1) * MINUTE_MS + lag;
    expect(readableFromMs(steady, m)).toBe(from);
  });

  it('nothing before the first minute', () => {
    expect(readableFromMs({ ...steady, firstMinute: DAY0 }, DAY0 - 1)).toBe(Infinity);
  });

  it('an outage is filled in when the agent returns, but only its newest 2 hours', () => {
    const o = outages(quiet, DAY0, DAY0 + 20 * 1440).find((x) => x.end - x.start > BUFFER_MINUTES + 10);
    if (!o) throw new Error('expected a long outage in 20 days');
    const returned = o.end * MINUTE_MS + lag;
    const buffered = o.end - 5;
    const tooOld = o.end - BUFFER_MINUTES - 1;
    if (!isLostReport(quiet, buffered)) expect(readableFromMs(quiet, buffered)).toBe(returned);
    expect(readableFromMs(quiet, tooOld)).toBe(Infinity);
    const short = outages(flappy, DAY0, DAY0 + 5 * 1440)[0];
    if (!short) throw new Error('expected a flap');
    for (let m = short.start; m < short.end; m++) {
      if (!isLostReport(flappy, m)) expect(readableFromMs(flappy, m)).toBe(short.end * MINUTE_MS + lag);
    }
  });
});

describe('last seen and online', () => {
  it('a steady agent was seen within the last 3 minutes', () => {
    for (let k = 0; k < 50; k++) {
      const now = (DAY0 + k * 13) * MINUTE_MS + k * 1_111;
      const seen = lastSeenMs(steady, 0, now);
      expect(seen).toBeLessThanOrEqual(now);
      expect(now - seen).toBeLessThanOrEqual(ONLINE_WINDOW_MS);
    }
  });

  it('last_seen stops advancing during an outage and the host goes offline after 3 minutes', () => {
    const o = outages(quiet, DAY0, DAY0 + 10 * 1440)[0];
    if (!o) throw new Error('expected an outage');
    const frozen = o.start * MINUTE_MS + lag;
    const inside = (o.start + 60) * MINUTE_MS;
    expect(lastSeenMs(quiet, 0, inside)).toBe(frozen);
    expect(lastSeenMs(quiet, 0, inside + 30 * MINUTE_MS)).toBe(frozen);
    expect(inside - frozen).toBeGreaterThan(ONLINE_WINDOW_MS);
    const back = o.end * MINUTE_MS + lag;
    expect(lastSeenMs(quiet, 0, back)).toBe(back);
  });

  it('a host that has not reported yet was last seen at its creation', () => {
    const created = DAY0 * MINUTE_MS + 10_000;
    const fresh: AgentSchedule = { ...steady, firstMinute: DAY0 + 1 };
    expect(lastSeenMs(fresh, created, created + 20_000)).toBe(created);
  });
});
