import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimAccount } from '../../simulator/monitoring/world-types.js';
import type { Driven } from '../support/drive.js';
import { lineValue, sampleValue, samplesOf } from '../support/exposition-text.js';
import { deltaCountersOf, exportedAlertEvents, runTruthScenario, TRUTH_RUN, type Snapshot, type TruthRun } from '../support/truth-run.js';
import { expectedAlertEvents, expectedChecks, expectedDeltaCounter, MINUTE_MS } from '../support/truth.js';
import type { UpstreamLog } from '../support/upstream-log.js';

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

const { startMs: START, runMs: RUN_MS, ingestDelayMs: INGEST_DELAY_MS } = TRUTH_RUN;

let run: TruthRun;
let driven: Driven;
let log: UpstreamLog;
let snapshots: readonly Snapshot[];
let pro: SimAccount;
let business: SimAccount;

beforeAll(async () => {
  run = await runTruthScenario();
  ({ driven, log, snapshots, exact: pro, impatient: business } = run);
}, 300_000);

afterAll(async () => {
  await run?.stop();
});

describe('3 simulated hours with late data: the counters against the simulator', () => {
  it('ran with late fills and permanent gaps, and polled every counter from the start', () => {
    const counters = deltaCountersOf('exact', pro, START);
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
    const counters = deltaCountersOf('exact', pro, START);
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
    for (const c of deltaCountersOf('exact', pro, START)) {
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
    const counters = deltaCountersOf('impatient', business, START);
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

  it('counts exactly the checks the simulator made for each website, by result', () => {
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
        const expected = expectedChecks(account, log, website.id, START + RUN_MS);
        // A paused website is never asked for checks, and has none to count.
        if (!website.enabled) {
          expect(expected).toBeUndefined();
          continue;
        }
        if (expected === undefined) throw new Error(`website ${website.id} was never polled for checks`);
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
        const exported = exportedAlertEvents(body, name);
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
