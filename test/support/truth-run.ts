import { FakeClock } from '../../src/lib/clock.js';
import type { SimAccount } from '../../simulator/monitoring/world-types.js';
import { drive, type Driven } from './drive.js';
import { lineValue, samplesOf } from './exposition-text.js';
import { MINUTE_MS } from './truth.js';
import { recordUpstreamRequests, type UpstreamLog } from './upstream-log.js';

/**
 * The 3-hour late-data run of issue 9, shared by test/exporter/truth.test.ts and
 * scripts/truth-report.ts: the whole exporter on a fake clock against the simulator in
 * late-data mode, scraped every 10 simulated minutes, with every request it sent recorded.
 *
 * Account `exact` (the Pro key) keeps late points open for `horizon`; account `impatient`
 * (the Business key, fewer metrics) gives them up as soon as they are due. The seed is
 * chosen so that the 3 hours hold website failures and both kinds of alert event.
 */

export const TRUTH_RUN = {
  startMs: Date.UTC(2026, 10, 22, 12, 0, 0),
  runMs: 3 * 60 * MINUTE_MS,
  snapshotMs: 10 * MINUTE_MS,
  ingestDelayMs: 3 * MINUTE_MS,
  lateData: { lateShare: 0.3, maxLatenessMinutes: 120, neverShare: 0.02 },
  /** Longer than the latest a point is read after its minute ends: 120 min + 100 s of lateness, plus 10 min between reads of an offline host. */
  horizon: '2h30m',
} as const;

export interface Snapshot {
  readonly atMs: number;
  readonly body: string;
}

export interface TruthRun {
  readonly driven: Driven;
  readonly log: UpstreamLog;
  readonly snapshots: readonly Snapshot[];
  readonly exact: SimAccount;
  readonly impatient: SimAccount;
  stop(): Promise<void>;
}

export async function runTruthScenario(options: { horizon?: string } = {}): Promise<TruthRun> {
  const clock = new FakeClock(TRUTH_RUN.startMs);
  const log = recordUpstreamRequests(clock);
  const driven = await drive({
    clock,
    simulator: { hosts: 4, websites: 5, seed: 'truth-9', lateData: TRUTH_RUN.lateData, rateLimitPerMinute: 600, burst: 100 },
    config: `accounts:
  - name: exact
    base_url: \${monitoring}
    api_key_env: PRO_KEY
    rate_limit: {requests_per_minute: 300, burst: 50}
    ingest_delay: 3m
    late_data_horizon: ${options.horizon ?? TRUTH_RUN.horizon}
  - name: impatient
    base_url: \${monitoring}
    api_key_env: BUSINESS_KEY
    rate_limit: {requests_per_minute: 300, burst: 50}
    ingest_delay: 3m
    late_data_horizon: 0s
    metrics:
      include: [nginx.http.request.*, mysql.global.questions, "system.net.bytes_sent|*", "system.io.iops_r|*"]
`,
    env: (sim) => ({ PRO_KEY: sim.keys.pro, BUSINESS_KEY: sim.keys.business }),
  });
  const accountOf = (key: string): SimAccount => {
    const account = driven.simulator.world.accountByKey(key);
    if (!account) throw new Error('the simulator has no account for a key it handed out');
    return account;
  };
  const snapshots: Snapshot[] = [];
  for (let t = TRUTH_RUN.snapshotMs; t <= TRUTH_RUN.runMs; t += TRUTH_RUN.snapshotMs) {
    await driven.advance(TRUTH_RUN.snapshotMs);
    snapshots.push({ atMs: driven.clock.now(), body: await driven.scrape() });
  }
  return {
    driven,
    log,
    snapshots,
    exact: accountOf(driven.simulator.keys.pro),
    impatient: accountOf(driven.simulator.keys.business),
    async stop() {
      log.stop();
      await driven.stop();
    },
  };
}

/** A delta metric of one host and the series it is exported as. */
export interface DeltaCounter {
  readonly key: string;
  readonly hostUuid: string;
  readonly metric: string;
  readonly series: string;
}

/** Delta metrics of every kind the agent reports, on every allowed host: plain, a timer's `.count`, per device. */
export function deltaCountersOf(accountName: string, account: SimAccount, nowMs: number): DeltaCounter[] {
  const counters: DeltaCounter[] = [];
  for (const host of account.hosts(nowMs).filter((h) => h.allowed)) {
    const names = Object.values(account.metricCatalogue(host.uuid) ?? {}).flat();
    const labels = `account="${accountName}",host_uuid="${host.uuid}"`;
    const add = (metric: string | undefined, family: string, extra = '') => {
      if (metric !== undefined && names.includes(metric)) counters.push({ key: account.key, hostUuid: host.uuid, metric, series: `${family}{${labels}${extra}}` });
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

/** The exporter's non-zero alert-event counters of one account, by `<type> <source id>`. */
export function exportedAlertEvents(body: string, accountName: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of samplesOf(body, 'monapi_alert_events_total').filter((l) => l.includes(`account="${accountName}"`))) {
    const [, type, source] = /event_type="([^"]+)",source_id="([^"]+)"/.exec(line) ?? [];
    if (lineValue(line) > 0) counts.set(`${type} ${source}`, lineValue(line));
  }
  return counts;
}
