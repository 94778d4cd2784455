import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { negotiate } from '../../src/exposition/negotiate.js';
import { buildScrapeBody } from '../../src/exposition/scrape.js';
import { MetricStore } from '../../src/exposition/store.js';
import { everyType } from './fixtures.js';

// Deliberately no skip: a missing promtool must fail here and in CI (.ci/run installs it).
const PROMTOOL = process.env.PROMTOOL ?? 'promtool';
const workDir = mkdtempSync(join(tmpdir(), 'monapi-promtool-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

function promtool(args: string[], input?: string): { status: number | null; output: string } {
  const result = spawnSync(PROMTOOL, args, { input, encoding: 'utf8', timeout: 30_000 });
  if (result.error) {
    throw new Error(`cannot run ${PROMTOOL} (install the Debian package "prometheus" or set PROMTOOL): ${result.error.message}`);
  }
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

async function scrapeBody(accept: string): Promise<string> {
  const registry = new Registry();
  const store = new MetricStore({ registry });
  new Counter({ name: 'monapi_exporter_test_events_total', help: 'Events.', labelNames: ['kind'], registers: [registry] }).inc({ kind: 'a' });
  new Gauge({ name: 'monapi_exporter_test_level', help: 'Level.', registers: [registry] }).set(0.5);
  new Histogram({ name: 'monapi_exporter_test_wait_seconds', help: 'Wait.', buckets: [0.1, 1], registers: [registry] }).observe(0.3);
  store.publish('fixtures', everyType);
  await store.flush();
  const body = await buildScrapeBody(store, registry, negotiate(accept, undefined));
  return Buffer.concat(body.chunks).toString('utf8');
}

/** The OpenMetrics block importer insists on timestamps; add one to every sample line. */
function withTimestamps(body: string): string {
  return body.replace(/^([^#\n].*)$/gm, '$1 1700000000');
}

function importOpenMetrics(body: string, name: string): { status: number | null; output: string } {
  const file = join(workDir, `${name}.om`);
  writeFileSync(file, body);
  return promtool(['tsdb', 'create-blocks-from', 'openmetrics', file, join(workDir, `${name}-blocks`)]);
}

describe('promtool', () => {
  it('finds no problem in a text body with every family type and self-metrics', async () => {
    const body = await scrapeBody('text/plain');
    expect(body).toContain('# TYPE demo_request_duration_seconds histogram');
    const { status, output } = promtool(['check', 'metrics'], body);
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('does report problems, so a clean result above means something', () => {
    const { status } = promtool(['check', 'metrics'], '# TYPE bad_counter counter\nbad_counter 1\n');
    expect(status).toBe(3);
  });

  it('parses the OpenMetrics body with every family type', async () => {
    const body = await scrapeBody('application/openmetrics-text; version=1.0.0');
    expect(body.endsWith('\n# EOF\n')).toBe(true);
    expect(body.match(/^# TYPE .*_total /gm)).toBeNull();
    expect(body).toContain('# TYPE demo_build info\ndemo_build_info{');
    const { status, output } = importOpenMetrics(withTimestamps(body), 'good');
    expect(output).not.toMatch(/error|expected/i);
    expect(status).toBe(0);
  });

  it('rejects an OpenMetrics body whose unit is not a suffix, so the import is a real check', () => {
    const { status } = importOpenMetrics('# TYPE a gauge\n# UNIT a seconds\na 1 1700000000\n# EOF\n', 'bad');
    expect(status).not.toBe(0);
  });
});
