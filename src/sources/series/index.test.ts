import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../exporter/config.js';
import { renderSampleLines } from '../../exposition/format.js';
import type { FamilySamples, MetricSink } from '../../exposition/model.js';
import { FakeClock } from '../../lib/clock.js';
import type { RequestGate } from '../../budget/types.js';
import type { Transport } from '../../upstream/http/transport.js';
import { MonitoringClient } from '../../upstream/monitoring/client.js';
import { METRIC_CATALOGUE } from '../../upstream/monitoring/metric-catalogue.js';
import { targetPoller } from '../../../test/support/source-context.js';
import { TopicBoard } from '../../scheduler/topics.js';
import { POLLED_HOSTS, type InventoryHost } from '../hosts/topics.js';
import { METRIC_NAMES } from '../metric-catalogue/topics.js';
import { seriesSource } from './index.js';
import type { SeriesSettings } from './settings.js';
import { counterKeysOf } from './map.js';
import { SeriesNaming } from './naming.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const START = Date.UTC(2026, 10, 22, 12, 0, 0);
const BASE_URL = 'http://upstream.test/api/v2';
const UUID = '0123456789abcdef0123456789abcdef';

/**
 * A test-local stand-in of `/hosts/{uuid}/metrics/series`, written from the seed: `since`
 * is a relative window, points are 60 s apart up to 4 h, timestamps are multiples of the
 * interval from the first one at or after the window start up to now, and a minute the
 * agent has not delivered yet is null. Each minute of the host arrives at `arrival(minute)`
 * (Infinity: never); every metric of the minute arrives together, as the agent sends them.
 */
function fakeUpstream(clock: FakeClock, arrival: (minute: number) => number, value: (name: string, minute: number) => number) {
  const requests: { since: string; names: string[] }[] = [];
  const transport: Transport = {
    get(url) {
      const parsed = new URL(url);
      const since = parsed.searchParams.get('since') ?? '60m';
      const names = (parsed.searchParams.get('names') ?? '').split(',');
      requests.push({ since, names });
      const windowMin = Number(since.slice(0, -1));
      if (!since.endsWith('m') || windowMin > 240) throw new Error(`fake upstream only speaks minute windows up to 4 h, got ${since}`);
      const now = clock.now();
      const first = Math.ceil((now - windowMin * MIN) / MIN);
      const series: Record<string, { timestamp: string; value: number | null }[]> = {};
      for (const name of names) {
        const points = [];
        for (let minute = first; minute * MIN <= now; minute++) {
          const there = arrival(minute) <= now;
          points.push({ timestamp: new Date(minute * MIN).toISOString(), value: there ? value(name, minute) : null });
        }
        series[name] = points;
      }
      const body = { host_uuid: UUID, since: new Date(first * MIN).toISOString(), interval: 60, series };
      return Promise.resolve({ status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(body)) });
    },
  };
  return { transport, requests };
}

/** A sink that keeps the newest families of each group, rendered as text lines. */
function recordingSink() {
  const groups = new Map<string, readonly FamilySamples[]>();
  const sink: MetricSink = {
    publish: (group, families) => void groups.set(group, families),
    retract: (group) => void groups.delete(group),
    groups: (prefix) => [...groups.keys()].filter((g) => g.startsWith(prefix)),
  };
  const lines = () => [...groups.values()].flat().flatMap((f) => renderSampleLines(f).split('\n').filter((l) => l !== ''));
  const value = (prefix: string) => {
    const line = lines().find((l) => l.startsWith(prefix));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  return { sink, lines, value, groups };
}

const passGate: RequestGate = { run: (_priority, _endpoint, attempt) => attempt(new AbortController().signal) };

function setup(arrival: (minute: number) => number, value: (name: string, minute: number) => number, names: readonly string[]) {
  const clock = new FakeClock(START);
  const upstream = fakeUpstream(clock, arrival, value);
  const config = parseConfig(
    `accounts:
  - name: late
    base_url: ${BASE_URL}
    api_key_env: KEY
    ingest_delay: 3m
    late_data_horizon: 2h
    counter_grace: 1h
`,
    { env: { KEY: 'k' } },
  );
  const account = config.accounts[0];
  if (!account) throw new Error('no account');
  const client = new MonitoringClient({ baseUrl: BASE_URL, apiKey: 'k', transport: upstream.transport, gate: passGate, clock });
  const recorded = recordingSink();
  const host: InventoryHost = {
    uuid: UUID,
    hostname: 'web-1',
    type: 'linux',
    agent_version: '1.8.11-1',
    last_seen: new Date(START).toISOString(),
    online: true,
    allowed: true,
    server_kinds: ['web-server'],
    tags: [],
    created_at: new Date(START - 24 * HOUR).toISOString(),
  };
  // What the host list and the metric catalogue would have provided.
  const board = new TopicBoard();
  board.provide(account.name, POLLED_HOSTS, new Map([[UUID, host]]));
  board.provide(account.name, METRIC_NAMES, new Map([[UUID, names]]));
  const source = targetPoller<InventoryHost, MonitoringClient>(seriesSource, { account, exporter: config.exporter, upstream: client, sink: recorded.sink, clock, board });
  return { clock, upstream, recorded, source, host, account };
}

describe('series source over 3 simulated hours with late data', () => {
  const minuteOf = (ms: number) => Math.floor(ms / MIN);
  const m0 = minuteOf(START);
  // An agent outage from 0:30 to 1:10: its minutes arrive when it reconnects (buffered).
  const outage = (m: number) => m >= m0 + 30 && m < m0 + 70;
  // Permanent gaps: reports lost for good.
  const lost = new Set([m0 + 12, m0 + 13, m0 + 95, m0 + 131]);
  // Single minutes 15 to 100 minutes late.
  const late = new Map([
    [m0 + 20, 15],
    [m0 + 80, 100],
    [m0 + 101, 47],
    [m0 + 140, 30],
  ]);
  const arrival = (m: number): number => {
    const end = (m + 1) * MIN;
    if (lost.has(m)) return Infinity;
    if (outage(m)) return (m0 + 70) * MIN + 30_000;
    return end + (late.get(m) ?? 0) * MIN + 20_000;
  };
  const value = (name: string, m: number) => (name.endsWith('.time') ? 0.05 + (m % 5) / 100 : name.startsWith('system.cpu') ? 40 : 3 + ((m * 7) % 11));
  const names = [...METRIC_CATALOGUE.map((e) => e.name), 'system.io.iops_r|sda', 'system.io.iops_r|sdb'];

  it("counts every minute that arrives exactly once: the counters' increase equals the truth", async () => {
    const { clock, upstream, recorded, source, host, account } = setup(arrival, value, names);
    const signal = new AbortController().signal;
    const perPoll: { expected: number; sent: number }[] = [];
    let forgotten = false;
    const counter = 'monapi_nginx_http_requests_total{';
    for (let t = 0; t <= 3 * HOUR; t += MIN) {
      clock.advance(t === 0 ? 0 : MIN);
      // The host leaves the list from 2:00 to 2:10 and comes back within the grace period.
      if (t === 2 * HOUR) {
        source.forget(UUID);
        forgotten = true;
        expect(recorded.lines().filter((l) => l.includes(UUID))).toEqual([]);
      }
      if (t === 2 * HOUR + 10 * MIN) forgotten = false;
      if (forgotten) continue;
      const before = upstream.requests.length;
      const expected = source.requestsPerRun(host);
      await source.poll(host, signal);
      perPoll.push({ expected, sent: upstream.requests.length - before });
    }

    // Truth: the minutes from the first poll's cursor to the last one's that have arrived.
    const seriesSettings = account.sources.series?.settings as SeriesSettings;
    const delay = seriesSettings.ingestDelayMs;
    const from = minuteOf(START - delay);
    const to = minuteOf(clock.now() - delay);
    let truth = 0;
    let truthCount = 0;
    let truthSum = 0;
    let givenUp = 0;
    for (let m = from; m < to; m++) {
      if (arrival(m) <= clock.now()) {
        truth += value('nginx.http.request.count', m);
        truthCount += value('nginx.http.request.time.count', m);
        truthSum += value('nginx.http.request.time.count', m) * value('nginx.http.request.time', m);
      } else if ((m + 1) * MIN < clock.now() - seriesSettings.lateDataHorizonMs) givenUp += 1;
    }
    expect(truth).toBeGreaterThan(0);
    expect(recorded.value(counter)).toBe(truth);
    expect(recorded.value('monapi_nginx_http_request_duration_seconds_count{')).toBe(truthCount);
    expect(recorded.value('monapi_nginx_http_request_duration_seconds_sum{')).toBeCloseTo(truthSum, 6);
    const perDevice = ['sda', 'sdb'].map((d) => recorded.value(`monapi_system_disk_reads_completed_total{account="late",host_uuid="${UUID}",device="${d}"}`));
    expect(perDevice).toEqual([truth, truth]);
    expect(recorded.lines().some((l) => l.startsWith(`monapi_system_disk_reads_completed_total{account="late",host_uuid="${UUID}"} `))).toBe(false);
    // The gaps the horizon passed are given up once per counter; none was skipped or overlapped.
    const counters = counterKeysOf(new SeriesNaming().fetchable(names), new SeriesNaming()).size;
    const missing = (reason: string) => recorded.value(`monapi_series_points_missing_total{account="late",reason="${reason}"}`);
    expect(givenUp).toBe(2);
    expect([missing('null'), missing('window_gap'), missing('partial_overlap'), missing('invalid')]).toEqual([givenUp * counters, 0, 0, 0]);

    // The window grew to re-read the outage and shrank back; the planner's count held throughout.
    const windows = upstream.requests.map((r) => Number(r.since.slice(0, -1)));
    expect(Math.max(...windows)).toBeGreaterThan(100);
    expect(Math.max(...windows)).toBeLessThanOrEqual(240);
    expect(windows.at(-1)).toBeLessThan(Math.max(...windows));
    expect(perPoll.every((p) => p.sent === p.expected)).toBe(true);
    expect(perPoll[0]?.expected).toBeGreaterThan(1);
  });

  it('drops the state of a host gone longer than the grace period: it restarts at 0', async () => {
    const steady = (m: number) => (m + 1) * MIN + 20_000;
    const { clock, recorded, source, host } = setup(steady, value, ['nginx.http.request.count']);
    const signal = new AbortController().signal;
    const counter = 'monapi_nginx_http_requests_total{';
    for (let i = 0; i < 10; i++) {
      await source.poll(host, signal);
      clock.advance(MIN);
    }
    expect(recorded.value(counter)).toBeGreaterThan(0);
    source.forget(UUID);
    expect(recorded.value(counter)).toBeUndefined();
    clock.advance(HOUR + MIN);
    // Any later poll or forget sweeps what waited longer than the grace period.
    source.forget('another-host');
    await source.poll(host, signal);
    expect(recorded.value(counter)).toBe(0);
  });
});
