import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeClock } from '../../src/lib/clock.js';
import type { DeltaTruth, RunningSimulator } from '../../simulator/index.js';
import { LATE_DATA_DEFAULTS, lateDataSettings } from '../../simulator/monitoring/late-data.js';
import { SimHostList, SimSeriesResponse } from '../../simulator/monitoring/schemas.js';
import { call, parseWith, startTestSimulator } from './monitoring-helpers.js';

/**
 * The late-data mode: a delta point becomes visible exactly when its minute's report
 * arrives, some never do, the arrivals are a pure function of (seed, settings, host,
 * minute), and the ground truth is the sum of what eventually becomes visible.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const METRIC = 'system.net.bytes_rcvd';
const SETTINGS = { lateShare: 0.3, maxLatenessMinutes: 60, neverShare: 0.05 };

let sim: RunningSimulator;
let clock: FakeClock;
let hostUuids: string[];

beforeAll(async () => {
  ({ sim, clock } = await startTestSimulator({ lateData: SETTINGS, seed: 'late' }));
  hostUuids = parseWith(SimHostList, (await call(`${sim.monitoringBaseUrl}/hosts`, { key: sim.keys.pro })).json)
    .hosts.filter((h) => h.allowed)
    .map((h) => h.uuid);
});

afterAll(async () => {
  await sim.close();
});

const truthOf = (hostUuid: string, fromMs: number, toMs: number, s: RunningSimulator = sim): DeltaTruth =>
  s.truth({ key: s.keys.pro, hostUuid, metric: METRIC, fromMs, toMs, detail: true });

/** The one-minute points of the range as the API shows them now. */
async function visible(hostUuid: string, fromMs: number, toMs: number): Promise<Map<number, number | null>> {
  const answer = await call(`${sim.monitoringBaseUrl}/hosts/${hostUuid}/metrics/series?names=${METRIC}&since=4h`, { key: sim.keys.pro });
  const body = parseWith(SimSeriesResponse, answer.json);
  expect(body.interval).toBe(60);
  const points = new Map<number, number | null>();
  for (const point of body.series[METRIC]!) {
    const t = Date.parse(point.timestamp);
    if (t >= fromMs && t < toMs) points.set(t, point.value);
  }
  return points;
}

describe('settings', () => {
  it('defaults, and every setting out of range is refused by name', () => {
    expect(lateDataSettings()).toEqual(LATE_DATA_DEFAULTS);
    expect(lateDataSettings({ lateShare: 0.5 })).toEqual({ ...LATE_DATA_DEFAULTS, lateShare: 0.5 });
    expect(() => lateDataSettings({ lateShare: 1.5 })).toThrow(/lateShare/);
    expect(() => lateDataSettings({ neverShare: -0.1 })).toThrow(/neverShare/);
    expect(() => lateDataSettings({ lateShare: 0.7, neverShare: 0.4 })).toThrow(/at most 1/);
    expect(() => lateDataSettings({ maxLatenessMinutes: 121 })).toThrow(/maxLatenessMinutes/);
    expect(() => lateDataSettings({ maxLatenessMinutes: 1.5 })).toThrow(/maxLatenessMinutes/);
  });

  it('GET /_sim/late-data shows them; off by default', async () => {
    expect((await call(`${sim.adminUrl}/late-data`)).json).toEqual({ enabled: true, late_share: 0.3, max_lateness_minutes: 60, never_share: 0.05 });
    const { sim: plain } = await startTestSimulator();
    try {
      expect(plain.lateData).toBeUndefined();
      expect((await call(`${plain.adminUrl}/late-data`)).json).toEqual({ enabled: false });
    } finally {
      await plain.close();
    }
  });
});

describe('arrivals', () => {
  it('a share of minutes arrives late, by up to the maximum, and a share never arrives', () => {
    const now = clock.now();
    let late = 0;
    let never = 0;
    let total = 0;
    let longest = 0;
    for (const uuid of hostUuids) {
      const truth = truthOf(uuid, now - 3 * 24 * HOUR, now);
      for (const minute of truth.minutes!) {
        total++;
        if (minute.arrivesAtMs === null) {
          never++;
          continue;
        }
        const delay = minute.arrivesAtMs - (minute.minuteMs + MINUTE);
        // The ordinary ingest lag is 30-100 s; an outage's buffer flush is later still, but rare.
        if (delay > 100_000 && delay <= 100_000 + SETTINGS.maxLatenessMinutes * MINUTE) late++;
        if (delay <= 100_000 + SETTINGS.maxLatenessMinutes * MINUTE) longest = Math.max(longest, delay);
      }
    }
    expect(late / total).toBeGreaterThan(SETTINGS.lateShare - 0.03);
    expect(late / total).toBeLessThan(SETTINGS.lateShare + 0.05);
    expect(never / total).toBeGreaterThan(SETTINGS.neverShare - 0.01);
    expect(never / total).toBeLessThan(SETTINGS.neverShare + 0.03);
    expect(longest).toBeGreaterThan(55 * MINUTE);
  });

  it('is deterministic: the same seed and settings give the same arrivals and values; another seed does not', async () => {
    const { sim: twin } = await startTestSimulator({ lateData: SETTINGS, seed: 'late' });
    const { sim: other } = await startTestSimulator({ lateData: SETTINGS, seed: 'other' });
    try {
      const now = clock.now();
      const uuid = hostUuids[0]!;
      expect(truthOf(uuid, now - 6 * HOUR, now, twin)).toEqual(truthOf(uuid, now - 6 * HOUR, now));
      const otherUuid = other.world.accountByKey(other.keys.pro)!.hosts(now).find((h) => h.allowed)!.uuid;
      expect(truthOf(otherUuid, now - 6 * HOUR, now, other).minutes!.map((m) => m.arrivesAtMs)).not.toEqual(
        truthOf(uuid, now - 6 * HOUR, now).minutes!.map((m) => m.arrivesAtMs),
      );
    } finally {
      await twin.close();
      await other.close();
    }
  });

  it('the mode changes nothing but arrivals: with it off, every value is the same', async () => {
    const { sim: plain } = await startTestSimulator({ seed: 'late' });
    try {
      const now = clock.now();
      const lateMinutes = truthOf(hostUuids[0]!, now - 6 * HOUR, now).minutes!;
      const plainMinutes = truthOf(hostUuids[0]!, now - 6 * HOUR, now, plain).minutes!;
      expect(lateMinutes.map((m) => m.value)).toEqual(plainMinutes.map((m) => m.value));
      expect(lateMinutes.map((m) => m.arrivesAtMs)).not.toEqual(plainMinutes.map((m) => m.arrivesAtMs));
    } finally {
      await plain.close();
    }
  });
});

describe('visibility over time and the ground truth', () => {
  it('over 2 hours, a point is visible exactly from its arrival; once complete, the visible points add up to the truth', async () => {
    const fromMs = Math.ceil(clock.now() / MINUTE) * MINUTE + 10 * MINUTE;
    const toMs = fromMs + 2 * HOUR;
    const truths = new Map(hostUuids.map((uuid) => [uuid, truthOf(uuid, fromMs, toMs)]));
    const completeAt = Math.max(...[...truths.values()].map((t) => t.completeAtMs ?? 0));
    expect(completeAt).toBeGreaterThan(toMs);
    expect(completeAt).toBeLessThan(fromMs + 4 * HOUR);

    let checked = 0;
    let becameVisibleLate = 0;
    const seenNull = new Set<string>();
    clock.advance(fromMs + 20 * MINUTE - clock.now());
    while (clock.now() <= completeAt) {
      for (const [uuid, truth] of truths) {
        const points = await visible(uuid, fromMs, toMs);
        const shownSum = [...points.values()].reduce<number>((total, v) => total + (v ?? 0), 0);
        const asOfNow = sim.truth({ key: sim.keys.pro, hostUuid: uuid, metric: METRIC, fromMs, toMs, asOfMs: clock.now() });
        expect(shownSum, 'what the API shows now is the truth as of now').toBe(asOfNow.sum);
        expect(asOfNow.points + asOfNow.pending).toBe(truth.points);
        for (const minute of truth.minutes!) {
          if (minute.minuteMs > clock.now() - MINUTE) continue;
          const shown = points.get(minute.minuteMs);
          const arrived = minute.arrivesAtMs !== null && minute.arrivesAtMs <= clock.now();
          expect(shown, `${uuid} minute ${new Date(minute.minuteMs).toISOString()} at ${new Date(clock.now()).toISOString()}`).toBe(arrived ? minute.value : null);
          checked++;
          const key = `${uuid} ${minute.minuteMs}`;
          if (!arrived) seenNull.add(key);
          else if (seenNull.delete(key) && minute.arrivesAtMs - minute.minuteMs > 15 * MINUTE) becameVisibleLate++;
        }
      }
      clock.advance(7 * MINUTE + 13_000);
    }
    expect(checked).toBeGreaterThan(1000);
    expect(becameVisibleLate, 'points that were null when read and filled in more than 15 minutes later').toBeGreaterThan(10);

    for (const [uuid, truth] of truths) {
      const points = [...(await visible(uuid, fromMs, toMs)).values()];
      expect(points).toHaveLength(120);
      const sum = points.reduce<number>((total, v) => total + (v ?? 0), 0);
      expect(sum, uuid).toBe(truth.sum);
      expect(points.filter((v) => v !== null)).toHaveLength(truth.points);
      expect(points.filter((v) => v === null)).toHaveLength(truth.missing);
    }
    expect([...truths.values()].some((t) => t.missing > 0)).toBe(true);
  });

  it('GET /_sim/truth gives the same truth as the library, by account name or key, with minutes on request', async () => {
    const now = clock.now();
    const uuid = hostUuids[1]!;
    const from = new Date(now - 3 * HOUR).toISOString();
    const expected = sim.truth({ key: sim.keys.pro, hostUuid: uuid, metric: METRIC, fromMs: now - 3 * HOUR, toMs: now });
    const byName = await call(`${sim.adminUrl}/truth?account=pro&host=${uuid}&metric=${METRIC}&from=${from}&to=${now}`);
    expect(byName.status).toBe(200);
    expect(byName.json).toEqual({
      account: 'pro',
      host_uuid: uuid,
      metric: METRIC,
      from,
      to: new Date(now).toISOString(),
      sum: expected.sum,
      points: expected.points,
      missing: expected.missing,
      pending: 0,
      complete_at: new Date(expected.completeAtMs!).toISOString(),
      complete_at_ms: expected.completeAtMs,
    });
    const byKey = await call(`${sim.adminUrl}/truth?key=${sim.keys.pro}&host=${uuid}&metric=${METRIC}&from=${from}&to=${now}&detail=minutes`);
    expect((byKey.json as { minutes: unknown[] }).minutes).toHaveLength(180);
    const asOf = now - HOUR;
    const earlier = sim.truth({ key: sim.keys.pro, hostUuid: uuid, metric: METRIC, fromMs: now - 3 * HOUR, toMs: now, asOfMs: asOf });
    const asOfAnswer = await call(`${sim.adminUrl}/truth?account=pro&host=${uuid}&metric=${METRIC}&from=${from}&to=${now}&as_of=${asOf}`);
    expect(asOfAnswer.json).toMatchObject({ as_of: new Date(asOf).toISOString(), sum: earlier.sum, pending: earlier.pending });
    expect(earlier.pending).toBeGreaterThan(0);
    expect(earlier.sum).toBeLessThan(expected.sum);
  });

  it.each([
    ['no account', 'host=x&metric=m&from=0&to=1', /account=/],
    ['no host', 'account=pro&metric=m&from=0&to=1', /'host'/],
    ['a bad instant', `account=pro&host=HOST&metric=${METRIC}&from=yesterday&to=1`, /'from'/],
    ['an empty range', `account=pro&host=HOST&metric=${METRIC}&from=1000&to=1000`, /from < to/],
    ['an unknown host', `account=pro&host=${'0'.repeat(32)}&metric=${METRIC}&from=0&to=60000`, /no host/],
    ['a gauge', 'account=pro&host=HOST&metric=system.cpu.user&from=0&to=60000', /gauge/],
    ['a metric the host does not report', 'account=pro&host=HOST&metric=varnish.cache.hit.nope&from=0&to=60000', /reports no metric/],
  ])('GET /_sim/truth with %s is 400 naming the problem', async (_what, query, message) => {
    const answer = await call(`${sim.adminUrl}/truth?${query.replace('HOST', hostUuids[0]!)}`);
    expect(answer.status).toBe(400);
    expect((answer.json as { message: string }).message).toMatch(message);
  });
});
