import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { parseConfig } from '../../src/exporter/config.js';
import { startExporter, type RunningExporter } from '../../src/exporter/index.js';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { startWriteFaultProxy, type WriteFaultProxy } from '../support/write-fault-proxy.js';

/**
 * Live remote write (agent mode): the exporter polls the simulator and pushes what /metrics
 * shows every second into Debian's Prometheus with the receiver flag, through a proxy that
 * plays a 503, a 429, a lost answer and then the receiver gone for 3 s. Prometheus ends up with
 * the series /metrics has (with the external labels), one sample per push with no hole where
 * the receiver was away, and the exporter's remote write self-metrics tell what happened.
 */

const PUSH_S = 1;
let sim: RunningSimulator;
let prometheus: RunningPrometheus;
let proxy: WriteFaultProxy;
let exporter: RunningExporter;
let startedS = 0;

beforeAll(async () => {
  sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 2, websites: 1, seed: 'live-push', rateLimitPerMinute: 600, burst: 100 });
  prometheus = await startPrometheus({ targets: [], scrapeIntervalSeconds: 15, remoteWriteReceiver: true });
  proxy = await startWriteFaultProxy(`${prometheus.url}/api/v1/write`);
  proxy.script([{ kind: 'status', status: 503 }, { kind: 'status', status: 429, retryAfter: '1' }, { kind: 'lost_answer' }]);
  const config = parseConfig(
    `accounts:
  - name: pro
    base_url: ${sim.monitoringBaseUrl}
    api_key_env: LIVE_PUSH_KEY
    rate_limit: { requests_per_minute: 600, burst: 100 }
remote_write:
  url: ${proxy.url}
  push_interval: ${PUSH_S}s
  headers: { X-Scope-OrgID: tenant-a }
  external_labels: { job: monapi-agent, instance: exporter-1 }
  queue_config: { min_backoff: 50ms, max_backoff: 500ms }
`,
    { env: { LIVE_PUSH_KEY: sim.keys.pro } },
  );
  startedS = Date.now() / 1000;
  exporter = await startExporter({ config, listenAddress: '127.0.0.1:0', telemetryPath: '/metrics', log: pino({ level: 'silent' }), processMetrics: false });
}, 60_000);

afterAll(async () => {
  await exporter?.stop();
  await proxy?.close();
  await prometheus?.stop();
  await sim?.close();
});

describe('live remote write', () => {
  it('pushes every series of /metrics, with the external labels, through faults and a receiver away for 3 s', async () => {
    await prometheus.waitFor('count(monapi_system_load1{job="monapi-agent",instance="exporter-1"})', (r) => (r[0]?.value ?? 0) >= 1, 30_000);
    await new Promise((r) => setTimeout(r, 2_000));
    proxy.down();
    await new Promise((r) => setTimeout(r, 3_000));
    proxy.up();
    await new Promise((r) => setTimeout(r, 4_000));
    const endS = Date.now() / 1000;

    // One sample per push, none missing around the outage: the queue kept them and sent them in order.
    const [buildInfo] = await prometheus.rangeSamples(`monapi_exporter_build_info{job="monapi-agent"}[${Math.ceil(endS - startedS) + 5}s]`);
    const times = (buildInfo?.values ?? []).map(([t]) => t);
    expect(times.length).toBeGreaterThanOrEqual(Math.floor((endS - startedS) / PUSH_S) - 3);
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    expect(Math.max(...gaps), 'the longest gap between two pushed samples, in seconds').toBeLessThan(PUSH_S * 2.5);
    expect(proxy.log.some((r) => r.fault === 'down')).toBe(true);

    // The same series as /metrics: every family with its label sets.
    const body = await (await fetch(`${exporter.url}/metrics`)).text();
    const hostInfo = body.split('\n').filter((line) => line.startsWith('monapi_host_info{'));
    expect(hostInfo.length).toBeGreaterThan(0);
    const pushedHostInfo = await prometheus.query('monapi_host_info{job="monapi-agent"}');
    expect(pushedHostInfo.length).toBe(hostInfo.length);
    for (const series of pushedHostInfo) expect(body).toContain(`host_uuid="${series.metric.host_uuid}"`);

    // Its own account of it.
    const self = async (name: string) => (await prometheus.query(`${name}{job="monapi-agent"}`))[0]?.value ?? NaN;
    await prometheus.waitFor('monapi_exporter_remote_write_samples_retried_total{job="monapi-agent"}', (r) => (r[0]?.value ?? 0) > 0, 10_000);
    expect(await self('monapi_exporter_remote_write_samples_sent_total')).toBeGreaterThan(0);
    expect(await self('monapi_exporter_remote_write_samples_dropped_total')).toBe(0);
    // The lost answer: the resend of a request Prometheus had taken is refused as out of order
    // (it has no out-of-order window), harmless since the data are already there: one request at most.
    expect(await self('monapi_exporter_remote_write_samples_failed_total')).toBeLessThanOrEqual(2_000);
    expect(await self('monapi_exporter_remote_write_last_success_timestamp_seconds')).toBeGreaterThan(startedS);
    expect(body).toMatch(/^monapi_exporter_remote_write_queue_samples \d+$/m);
  }, 60_000);
});
