import { constants, inflateRawSync } from 'node:zlib';
import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../lib/clock.js';
import { SelfMetricsCache } from './scrape.js';
import { MetricStore } from './store.js';

/**
 * The self-metrics at the end of every body: one reading of the registry serves both formats
 * for a second (at a million series its collect callbacks were a fifth of the main thread's
 * CPU, read once per format), and no tail is older than that second.
 */
/** A registry with a gauge that counts how often the registry was read, and the count. */
function countingRegistry(): { registry: Registry; reads: () => number } {
  const registry = new Registry();
  let reads = 0;
  new Gauge({
    name: 'monapi_test_reads',
    help: 'How often the registry was read.',
    registers: [registry],
    collect(this: Gauge) {
      this.set(++reads);
    },
  });
  return { registry, reads: () => reads };
}

describe('SelfMetricsCache', () => {
  it('reads the registry once for both formats within its age, and again after it', async () => {
    const { registry, reads } = countingRegistry();
    const clock = new FakeClock();
    const cache = new SelfMetricsCache(new MetricStore(), registry, 1_000, clock);
    const text = (await cache.tail('text')).raw.toString('utf8');
    clock.advance(400);
    const openMetrics = (await cache.tail('openmetrics')).raw.toString('utf8');
    expect(reads()).toBe(1);
    expect(text).toContain('monapi_test_reads 1\n');
    expect(openMetrics).toContain('monapi_test_reads 1\n');
    expect(openMetrics.endsWith('# EOF\n')).toBe(true);
    // 1 s after the reading, not after the OpenMetrics rendering: both formats are read afresh.
    clock.advance(600);
    const later = await cache.tail('openmetrics');
    expect(reads()).toBe(2);
    expect(later.raw.toString('utf8')).toContain('monapi_test_reads 2\n');
    expect((await cache.tail('text')).raw.toString('utf8')).toContain('monapi_test_reads 2\n');
    expect(reads()).toBe(2);
    // The compressed tail is the raw one.
    expect(inflateRawSync(later.deflated, { finishFlush: constants.Z_SYNC_FLUSH }).equals(later.raw)).toBe(true);
  });

  it('renders a tail of its own on each render, sharing the reading but never the bytes', async () => {
    const { registry, reads } = countingRegistry();
    // Enough lines for tails of many kilobytes, as at scale (small ones are pieces of Node's pool).
    const wide = new Gauge({ name: 'monapi_test_wide', help: 'Many series.', labelNames: ['n'], registers: [registry] });
    for (let n = 0; n < 3_000; n++) wide.set({ n: String(n) }, n);
    const clock = new FakeClock();
    const cache = new SelfMetricsCache(new MetricStore(), registry, 1_000, clock);
    const cached = await cache.tail('text');
    expect(cached.raw.length).toBeGreaterThan(64 * 1024);
    const [first, second] = await Promise.all([cache.render('text'), cache.render('text')]);
    expect(reads()).toBe(1);
    expect(first?.raw.equals(cached.raw)).toBe(true);
    expect(second?.raw.equals(cached.raw)).toBe(true);
    // Each its own memory: moving one to another thread empties neither the other nor the cache's.
    expect(first?.raw).not.toBe(second?.raw);
    expect(first?.raw.buffer).not.toBe(cached.raw.buffer);
    expect(first?.raw.buffer).not.toBe(second?.raw.buffer);
    expect(first?.deflated.buffer).not.toBe(cached.deflated.buffer);
    // Memory of their own, which a serving thread can be given.
    expect(first?.raw.byteLength).toBe(first?.raw.buffer.byteLength);
    expect(await cache.tail('text')).toBe(cached);
    clock.advance(1_000);
    expect((await cache.render('openmetrics')).raw.toString('utf8')).toContain('monapi_test_reads 2\n');
  });
});
