import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/exporter/config.js';
import { startExporter, type RunningExporter } from '../../src/exporter/index.js';
import { FakeClock } from '../../src/lib/clock.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { requireBinary } from '../support/prometheus.js';

/**
 * The whole exporter against fixed simulator data on a fake clock: its /metrics output is
 * compared with checked-in golden files and linted by promtool. Regenerate on purpose with
 *   UPDATE_GOLDEN=1 npx vitest run test/golden
 */

const GOLDEN_TEXT = fileURLToPath(new URL('./exposition.prom', import.meta.url));
const GOLDEN_OPENMETRICS = fileURLToPath(new URL('./exposition.openmetrics.txt', import.meta.url));
const START = Date.UTC(2026, 10, 22, 12, 0, 0);
const SIMULATED_MINUTES = 8;

/**
 * Families whose values are wall-clock measurements of this machine, not of the data (and
 * the compressed size of a body that holds them).
 */
const MACHINE_DEPENDENT = [
  'monapi_exporter_render_duration_seconds',
  'monapi_exporter_render_longest_slice_seconds',
  'monapi_exporter_scrape_duration_seconds',
  'monapi_exporter_scrape_sent_bytes',
];

let clock: FakeClock;
let simulator: RunningSimulator;
let exporter: RunningExporter;
let text = '';
let openMetrics = '';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Waits (in real time) until no request is in flight, checked over several turns of the event loop. */
async function settle(): Promise<void> {
  let quietTurns = 0;
  for (let i = 0; i < 2000 && quietTurns < 5; i++) {
    await tick();
    quietTurns = exporter.quiet() ? quietTurns + 1 : 0;
  }
}

async function scrape(accept: string): Promise<string> {
  const response = await fetch(`${exporter.url}/metrics`, { headers: { accept } });
  expect(response.status).toBe(200);
  return normalise(await response.text());
}

function normalise(body: string): string {
  return body
    .split('\n')
    .filter((line) => !MACHINE_DEPENDENT.some((family) => line.includes(`${family}`) || line.includes(`${family.replace(/_seconds$/, '')} `)))
    .map((line) =>
      line.startsWith('monapi_exporter_build_info')
        ? line.replace(/version="[^"]*"/, 'version="(version)"').replace(/nodejs_version="[^"]*"/, 'nodejs_version="(node)"')
        : line,
    )
    .join('\n');
}

beforeAll(async () => {
  clock = new FakeClock(START);
  simulator = await startSimulator({ clock, monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 5, websites: 2, seed: 'golden', random: () => 0.5 });
  const config = parseConfig(
    `accounts:
  - name: golden
    base_url: ${simulator.monitoringBaseUrl}
    api_key_env: GOLDEN_KEY
    tag_labels: [env, role]
releases:
  mode: marketplace
  marketplace_base_url: ${simulator.marketplaceBaseUrl}
  marketplace_key_env: GOLDEN_MARKETPLACE_KEY
  schedule: "0 0 1 1 *"
  projects:
    - id: nginx
    - id: torvalds/linux
      major: 4
`,
    { env: { GOLDEN_KEY: simulator.keys.pro, GOLDEN_MARKETPLACE_KEY: simulator.keys.marketplace } },
  );
  exporter = await startExporter({
    config,
    clock,
    listenAddress: '127.0.0.1:0',
    telemetryPath: '/metrics',
    log: pino({ level: 'silent' }),
    processMetrics: false,
  });
  for (let second = 0; second < SIMULATED_MINUTES * 60; second++) {
    await settle();
    clock.advance(1000);
  }
  await settle();
  await exporter.store.flush();
  text = await scrape('text/plain;version=0.0.4');
  openMetrics = await scrape('application/openmetrics-text;version=1.0.0');
  if (process.env.UPDATE_GOLDEN === '1') {
    writeFileSync(GOLDEN_TEXT, text);
    writeFileSync(GOLDEN_OPENMETRICS, openMetrics);
  }
}, 120_000);

afterAll(async () => {
  await exporter?.stop();
  await simulator?.close();
});

describe('golden exposition from fixed simulator data', () => {
  it('matches the checked-in text exposition', () => {
    expect(existsSync(GOLDEN_TEXT), 'golden file missing: run UPDATE_GOLDEN=1 npx vitest run test/golden').toBe(true);
    expect(text).toBe(readFileSync(GOLDEN_TEXT, 'utf8'));
  });

  it('matches the checked-in OpenMetrics exposition', () => {
    expect(openMetrics).toBe(readFileSync(GOLDEN_OPENMETRICS, 'utf8'));
    expect(openMetrics.endsWith('# EOF\n')).toBe(true);
  });

  it('passes promtool check metrics with no problems', () => {
    const promtool = requireBinary('promtool');
    const result = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('holds every family the exporter promises', () => {
    for (const family of [
      'monapi_host_info',
      'monapi_host_online',
      'monapi_system_cpu_time_ratio',
      'monapi_nginx_http_requests_total',
      'monapi_nginx_http_request_duration_seconds',
      'monapi_account_info',
      'monapi_component_info',
      'monapi_release_info',
      'monapi_up',
      'monapi_up_reason',
      'monapi_source_up',
      'monapi_source_up_reason',
      'monapi_budget_tokens',
      'monapi_upstream_requests_total',
      'monapi_job_last_success_timestamp_seconds',
      'monapi_plan_requests_per_cycle',
      'monapi_exporter_build_info',
    ]) {
      expect(text, family).toMatch(new RegExp(`^# TYPE ${family} `, 'm'));
    }
  });
});
