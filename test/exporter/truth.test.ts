import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/lib/clock.js';
import type { SimAccount } from '../../src/simulator/monitoring/world-types.js';
import { drive, type Driven } from '../support/drive.js';
import { lineValue, sampleValue, samplesOf } from '../support/exposition-text.js';
import { expectedAlertEvents, expectedChecks, expectedDeltaCounter, MINUTE_MS } from '../support/truth.js';
import { recordUpstreamRequests, type UpstreamLog } from '../support/upstream-log.js';

/**
 * Issue 9: the whole exporter against the simulator in late-data mode for 3 simulated hours
 * on a fake clock, its counters compared with what the simulator itself says happened: the
 * ground truth of delta metrics, the checks it made, the alert events it raised.
 *
 * Why the counters can be exact: a minute of a delta metric reaches the API at its arrival
 * time (at most 120 minutes late in this mode, plus the host's 30-100 s lag; a returning
 * agent's buffer flush is no later, since it holds only the newest 120 minutes), and the
 * exporter reads it at its host's next poll (every minute, every 10 minutes while the host
 * is listed offline). So every point that ever arrives is read within 120 min + 100 s + 10 min
 * of the end of its minute, inside the 2h30m horizon of account `exact`; the points that
 * never arrive are never counted. At any moment its counter must then equal the truth over
 * the minutes its reads have covered, as of its last read (test/support/truth.ts).
 * Account `impatient` gives a point up as soon as it is due (horizon 0s): its counters must
 * fall short of the truth by the late minutes.
 */

const START = Date.UTC(2026, 10, 22, 12, 0, 0);
const HOUR_MS = 60 * MINUTE_MS;
const RUN_MS = 3 * HOUR_MS;
const SNAPSHOT_MS = 10 * MINUTE_MS;
const INGEST_DELAY_MS = 3 * MINUTE_MS;
const LATE_DATA = { lateShare: 0.3, maxLatenessMinutes: 120, neverShare: 0.02 };

const config = `accounts:
  - name: exact
    base_url: \${monitoring}
    api_key_env: PRO_KEY
    rate_limit: {requests_per_minute: 300, burst: 50}
    ingest_delay: 3m
    late_data_horizon: 2h30m
  - name: impatient
    base_url: \${monitoring}
    api_key_env: BUSINESS_KEY
    rate_limit: {requests_per_minute: 300, burst: 50}
    ingest_delay: 3m
    late_data_horizon: 0s
    metrics:
      include: [nginx.http.request.*, mysql.global.questions, "system.net.bytes_sent|*", "system.io.iops_r|*"]
`;

/** A delta metric of one host and the series it is exported as. */
interface Counter {
  readonly account: string;
  readonly key: string;
  readonly hostUuid: string;
  readonly metric: string;
  readonly series: string;
}

/** Delta metrics of every kind the agent reports: plain, a timer's `.count`, per device. */
function countersOf(accountName: string, account: SimAccount, nowMs: number): Counter[] {
  const counters: Counter[] = [];
  for (const host of account.hosts(nowMs).filter((h) => h.allowed)) {
    const names = Object.values(account.metricCatalogue(host.uuid) ?? {}).flat();
    const labels = `account="${accountName}",host_uuid="${host.uuid}"`;
    const add = (metric: string | undefined, family: string, extra = '') => {
      if (metric !== undefined && names.includes(metric)) counters.push({ account: accountName, key: account.key, hostUuid: host.uuid, metric, series: `${family}{${labels}${extra}}` });
    };
    add('nginx.http.request.count', 'monapi_nginx_http_requests_total');
    add('nginx.http.request.time.count', 'monapi_nginx_http_request_duration_seconds_count');
    add('mysql.global.questions', 'monapi_mysql_global_status_questions_total');
    const nic = names.find((n) => n.startsWith('system.net.bytes_sent|'));
    add(nic, 'monapi_system_network_transmit_bytes_total', `,interface="${nic?.split('|')[1]}"`);
    const disk = names.find((n) => n.startsWith('system.io.iops_r|'));
    add(disk, 'monapi_system_disk_reads_completed_total', `,device="${disk?.split('|')[1]}"`);
  }
  return counters;
}

interface Snapshot {
  readonly atMs: number;
  readonly body: string;
}

let driven: Driven;
let log: UpstreamLog;
const snapshots: Snapshot[] = [];
let pro: SimAccount;
let business: SimAccount;

beforeAll(async () => {
  const clock = new FakeClock(START);
  log = recordUpstreamRequests(clock);
  driven = await drive({
    clock,
    simulator: { hosts: 4, websites: 5, seed: 'truth-9', lateData: LATE_DATA, rateLimitPerMinute: 600, burst: 100 },
    config,
    env: (sim) => ({ PRO_KEY: sim.keys.pro, BUSINESS_KEY: sim.keys.business }),
  });
  pro = driven.simulator.world.accountByKey(driven.simulator.keys.pro)!;
  business = driven.simulator.world.accountByKey(driven.simulator.keys.business)!;
  for (let t = SNAPSHOT_MS; t <= RUN_MS; t += SNAPSHOT_MS) {
    await driven.advance(SNAPSHOT_MS);
    snapshots.push({ atMs: driven.clock.now(), body: await driven.scrape() });
  }
}, 300_000);

afterAll(async () => {
  log?.stop();
  await driven?.stop();
});

describe('3 simulated hours with late data: the counters against the simulator', () => {
  it('ran with late fills and permanent gaps, and polled every counter from the start', () => {
    const counters = countersOf('exact', pro, START);
    expect(new Set(counters.map((c) => c.hostUuid)).size).toBeGreaterThanOrEqual(3);
    expect(new Set(counters.map((c) => c.series.slice(0, c.series.indexOf('{'))))).toEqual(
      new Set([
        'monapi_nginx_http_requests_total',
        'monapi_nginx_http_request_duration_seconds_count',
        'monapi_mysql_global_status_questions_total',
        'monapi_system_network_transmit_bytes_total',
        'monapi_system_disk_reads_completed_total',
      ]),
    );
    let late = 0;
    let never = 0;
    for (const c of counters) {
      const e = expectedDeltaCounter(driven.simulator, log, { ...c, ingestDelayMs: INGEST_DELAY_MS }, START + RUN_MS);
      expect(e, c.series).toBeDefined();
      expect(e!.fromMs).toBeLessThanOrEqual(START);
      const detail = driven.simulator.truth({ key: c.key, hostUuid: c.hostUuid, metric: c.metric, fromMs: e!.fromMs, toMs: e!.toMs, detail: true });
      late += detail.minutes!.filter((m) => m.arrivesAtMs !== null && m.arrivesAtMs > m.minuteMs + MINUTE_MS + INGEST_DELAY_MS).length;
      never += detail.missing;
    }
    // Minutes that arrived after they were due (counted late) and minutes that never did.
    expect(late).toBeGreaterThan(100);
    expect(never).toBeGreaterThan(5);
  });

  it("equals the simulator's truth exactly, at every moment, for every host and delta metric", () => {
    const counters = countersOf('exact', pro, START);
    const mismatches: string[] = [];
    let lateMinutesSeenPending = 0;
    for (const { atMs, body } of snapshots) {
      for (const c of counters) {
        const e = expectedDeltaCounter(driven.simulator, log, { ...c, ingestDelayMs: INGEST_DELAY_MS }, atMs);
        const exported = sampleValue(body, c.series);
        if (exported !== e?.truth.sum) mismatches.push(`${new Date(atMs).toISOString()} ${c.metric} ${c.series}: exported ${exported}, truth ${e?.truth.sum}`);
        lateMinutesSeenPending += e?.truth.pending ?? 0;
      }
    }
    expect(mismatches).toEqual([]);
    // At the moments compared, minutes were still on their way and were counted later.
    expect(lateMinutesSeenPending).toBeGreaterThan(0);
  });

  it('has an increase between two moments equal to the truth over the minutes covered, once every point had its chance', () => {
    // Between 50 min and 3 h: the window starts where the counter started (its first read, 0),
    // so nothing older can arrive into it, and ends where its reads had got to by 50 min,
    // 2 h earlier than the last read: with at most 120 min + 100 s of lateness and a horizon of
    // 2h30m, every point of the window has arrived (or never will) and been read by 3 h.
    const [early, late] = [snapshots.find((s) => s.atMs === START + 50 * MINUTE_MS)!, snapshots.at(-1)!];
    for (const c of countersOf('exact', pro, START)) {
      const at1 = expectedDeltaCounter(driven.simulator, log, { ...c, ingestDelayMs: INGEST_DELAY_MS }, early.atMs)!;
      const at3 = expectedDeltaCounter(driven.simulator, log, { ...c, ingestDelayMs: INGEST_DELAY_MS }, late.atMs)!;
      const window = driven.simulator.truth({ key: c.key, hostUuid: c.hostUuid, metric: c.metric, fromMs: at1.fromMs, toMs: at1.toMs });
      expect(window.completeAtMs ?? 0).toBeLessThanOrEqual(at3.lastReadMs);
      const rest = driven.simulator.truth({ key: c.key, hostUuid: c.hostUuid, metric: c.metric, fromMs: at1.toMs, toMs: at3.toMs, asOfMs: at3.lastReadMs });
      // The counter at 3 h is the complete window plus the newer minutes that have arrived.
      expect(sampleValue(late.body, c.series)).toBe(window.sum + rest.sum);
      // And its increase since 50 min is what arrived in between: the window's late minutes and the newer ones.
      const increase = sampleValue(late.body, c.series)! - sampleValue(early.body, c.series)!;
      expect(increase).toBe(window.sum + rest.sum - at1.truth.sum);
      expect(window.sum).toBeGreaterThan(at1.truth.sum);
    }
  });

  it('falls short of the truth when late points are given up at once (horizon 0s)', () => {
    const counters = countersOf('impatient', business, START);
    expect(counters.length).toBeGreaterThanOrEqual(3);
    const last = snapshots.at(-1)!;
    for (const c of counters) {
      const e = expectedDeltaCounter(driven.simulator, log, { ...c, ingestDelayMs: INGEST_DELAY_MS }, last.atMs)!;
      const exported = sampleValue(last.body, c.series)!;
      expect(exported, c.series).toBeLessThan(e.truth.sum);
      expect(exported, c.series).toBeGreaterThan(0);
    }
    const givenUp = samplesOf(last.body, 'monapi_series_points_missing_total').filter((l) => l.includes('account="impatient"') && l.includes('reason="null"'));
    expect(givenUp.some((l) => lineValue(l) > 0)).toBe(true);
  });

  it("counts exactly the checks the simulator made for each website, by result", () => {
    let checks = 0;
    let failures = 0;
    for (const [name, account] of [['exact', pro], ['impatient', business]] as const) {
      const websites = account.websites(START);
      expect(websites.length).toBeGreaterThan(0);
      for (const { atMs, body } of snapshots) {
        for (const website of websites) {
          const expected = expectedChecks(account, log, website.id, atMs);
          const labels = `account="${name}",website_id="${website.id}",website="${website.name}"`;
          const success = sampleValue(body, `monapi_website_checks_total{${labels},result="success"}`);
          const failure = sampleValue(body, `monapi_website_checks_total{${labels},result="failure"}`);
          expect({ at: new Date(atMs).toISOString(), website: website.id, success, failure }).toEqual({
            at: new Date(atMs).toISOString(),
            website: website.id,
            success: expected?.success,
            failure: expected?.failure,
          });
        }
      }
      for (const website of websites) {
        const expected = expectedChecks(account, log, website.id, START + RUN_MS)!;
        checks += expected.success + expected.failure;
        failures += expected.failure;
      }
    }
    expect(checks).toBeGreaterThan(100);
    // The seed is chosen so that websites fail in the 3 hours.
    expect(failures).toBeGreaterThan(0);
  });

  it('counts exactly the alert events the simulator raised, by type and source', () => {
    const types = new Set<string>();
    for (const [name, account] of [['exact', pro], ['impatient', business]] as const) {
      for (const { atMs, body } of snapshots) {
        const expected = expectedAlertEvents(account, log, atMs)!;
        const exported = new Map<string, number>();
        for (const line of samplesOf(body, 'monapi_alert_events_total').filter((l) => l.includes(`account="${name}"`))) {
          const [, type, source] = /event_type="([^"]+)",source_id="([^"]+)"/.exec(line) ?? [];
          const count = lineValue(line);
          if (count > 0) exported.set(`${type} ${source}`, count);
        }
        expect({ at: new Date(atMs).toISOString(), events: Object.fromEntries(exported) }).toEqual({
          at: new Date(atMs).toISOString(),
          events: Object.fromEntries(expected),
        });
      }
      for (const key of expectedAlertEvents(account, log, START + RUN_MS)!.keys()) types.add(key.split(' ')[0]!);
    }
    // The seed is chosen so that both kinds of event occur in the 3 hours.
    expect([...types].sort()).toEqual(['host_alert', 'website_down']);
  });
});
