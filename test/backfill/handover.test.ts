import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistorySeries } from '../../src/backfill/replay.js';
import { seriesNaming } from '../../src/sources/series/index.js';
import { HostLabels } from '../../src/sources/series/map.js';
import type { SeriesSettings } from '../../src/sources/series/settings.js';
import { toBaseUnit } from '../../src/sources/shared/units.js';
import { SOURCES } from '../../src/sources/index.js';
import { ACCOUNT, backfillOnce, MemoryHistoryWriter, startBackfillWorld, type BackfillWorld } from './in-process.js';

/**
 * A slow upstream must not cost history. A host's names go out in several requests per
 * window (URLs are kept short), one after the other; when one answer takes minutes, the next
 * batch's window (which always ends "now") starts minutes later than the first one's. Each
 * window takes over from the coarser one at one time for all its names, so every minute of
 * every counter is in the history once: checked here against the simulator's own sums,
 * bucket by bucket (minute by minute where history has minutes), for every delta counter of
 * every host, with one batch of one window answered late.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

interface Mismatch {
  readonly series: string;
  readonly fromMs: string;
  readonly toMs: string;
  readonly got: number;
  readonly want: number;
}

const SCENARIOS = [
  // The first batch of the 60 s window is asked at 11:59:30 (buckets from 08:00), the next 90 s later (from 08:01).
  { name: 'the first 240m batch answered 90 s late', startMs: Date.UTC(2026, 10, 22, 11, 59, 30), window: '240m', delayMs: 90_000 },
  // The 120 s window's later batches start 10 minutes after its first: past the 600 s grid its handover from the 300 s window is on.
  { name: 'the first 1d batch answered 10 minutes late', startMs: Date.UTC(2026, 10, 22, 12, 0, 0), window: '1d', delayMs: 10 * MINUTE_MS },
] as const;

describe.each(SCENARIOS)('backfill with $name', (scenario) => {
  let world: BackfillWorld;
  let dir: string;
  const writer = new MemoryHistoryWriter();
  let delayed: string | undefined;
  /** Requests for the delayed window of the host whose answer was delayed. */
  let windowBatches = 0;

  beforeAll(async () => {
    world = await startBackfillWorld({ startMs: scenario.startMs, simulator: { seed: 'handover', hosts: 3 } });
    dir = mkdtempSync(join(tmpdir(), 'monapi-handover-'));
    world.onAnswer = (path) => {
      if (!path.includes('/metrics/series?') || !path.includes(`since=${scenario.window}&`)) return;
      if (delayed === undefined) {
        delayed = path;
        world.clock.advance(scenario.delayMs);
      }
      if (path.split('?')[0] === delayed.split('?')[0]) windowBatches += 1;
    };
    const report = await backfillOnce(world, { writer, progressFile: join(dir, 'progress.json'), sinceMs: 2 * DAY_MS, requestsPerMinute: 600 });
    expect(report.complete, JSON.stringify(report)).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await world?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('asks the window in more than one batch, and one answer came late', () => {
    expect(delayed).toBeDefined();
    expect(windowBatches, `requests for the ${scenario.window} window`).toBeGreaterThan(1);
  });

  it('every delta counter of every host rises by the simulator\'s sum of each bucket between two samples, with no bucket left out', () => {
    const settings = world.config.accounts[0]?.sources.series?.settings as SeriesSettings;
    const naming = seriesNaming(settings, SOURCES.flatMap((source) => source.families));
    const byKey = new Map<string, HistorySeries>();
    for (const s of writer.series) {
      const key = `${s.name}${JSON.stringify(s.labels)}`;
      const known = byKey.get(key);
      if (known) known.samples.push(...s.samples);
      else byKey.set(key, { ...s, samples: [...s.samples] });
    }
    const mismatches: Mismatch[] = [];
    let counters = 0;
    let buckets = 0;
    for (const host of world.simAccount.hosts(world.clock.now()).filter((h) => h.allowed)) {
      const labels = new HostLabels(ACCOUNT, host.uuid);
      for (const name of naming.fetchable(Object.values(world.simAccount.metricCatalogue(host.uuid) ?? {}).flat())) {
        const metric = naming.metric(name);
        if (metric.role.kind !== 'delta') continue;
        const series = byKey.get(`${metric.role.spec.name}${JSON.stringify(labels.of(metric))}`);
        expect(series, `${name} of ${host.uuid}: a counter in the history`).toBeDefined();
        const samples = series?.samples ?? [];
        expect(samples.length, `${name} of ${host.uuid}: samples`).toBeGreaterThan(2 * 24 * 4);
        counters += 1;
        for (let i = 1; i < samples.length; i++) {
          const from = samples[i - 1] as { timestampMs: number; value: number };
          const to = samples[i] as { timestampMs: number; value: number };
          const want = toBaseUnit(world.sim.truth({ key: world.simAccount.key, hostUuid: host.uuid, metric: name, fromMs: from.timestampMs, toMs: to.timestampMs }).sum, metric.unit);
          buckets += 1;
          if (!close(to.value - from.value, want)) {
            mismatches.push({ series: `${metric.role.spec.name} ${host.hostname} ${name}`, fromMs: new Date(from.timestampMs).toISOString(), toMs: new Date(to.timestampMs).toISOString(), got: to.value - from.value, want });
          }
        }
      }
    }
    expect(counters, 'delta counters compared').toBeGreaterThan(10);
    expect(buckets).toBeGreaterThan(counters * 2 * 24 * 4);
    expect(mismatches.slice(0, 5), `${mismatches.length} of ${buckets} buckets differ from the simulator's sums`).toEqual([]);
  });

  it('has a sample at the end of every bucket: each step of the history follows the one before it', () => {
    const gaps = new Set<string>();
    for (const s of writer.series) {
      if (s.family.type !== 'counter') continue;
      const times = s.samples.map((sample) => sample.timestampMs);
      for (let i = 1; i < times.length; i++) {
        const step = (times[i] as number) - (times[i - 1] as number);
        if (![60, 120, 300, 900, 3600].some((seconds) => step === seconds * 1000)) gaps.add(`${new Date(times[i - 1] as number).toISOString()} to ${new Date(times[i] as number).toISOString()}`);
      }
    }
    expect([...gaps]).toEqual([]);
  });
});
