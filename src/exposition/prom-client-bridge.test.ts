import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { familiesFromRegistry } from './prom-client-bridge.js';
import { renderOpenMetrics } from './render-openmetrics.js';
import { renderText } from './render-text.js';

/** Sample lines with label pairs sorted, so label order (prom-client puts `le` first) does not matter. */
function sampleLines(body: string): string[] {
  return body
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([^{ ]+)(?:\{(.*)\})? (.*)$/.exec(line);
      if (!match) throw new Error(`unparsable line ${line}`);
      const pairs = (match[2] ?? '').split(/,(?=[a-zA-Z_]+=")/).sort();
      return `${match[1]}{${pairs.join(',')}} ${match[3]}`;
    })
    .sort();
}

describe('familiesFromRegistry', () => {
  it('renders the same samples as prom-client itself, in text format', async () => {
    const registry = new Registry();
    new Counter({ name: 'b_requests_total', help: 'Requests.', labelNames: ['code'], registers: [registry] }).inc({ code: '200' }, 5);
    new Gauge({ name: 'a_queue_depth', help: 'Depth.', registers: [registry] }).set(3.5);
    const histogram = new Histogram({
      name: 'c_duration_seconds',
      help: 'Duration.',
      labelNames: ['route'],
      buckets: [0.1, 1],
      registers: [registry],
    });
    histogram.observe({ route: '/x' }, 0.05);
    histogram.observe({ route: '/x' }, 0.5);
    histogram.observe({ route: '/y' }, 3);

    const families = await familiesFromRegistry(registry);
    expect(families.map((f) => [f.spec.name, f.spec.type])).toEqual([
      ['a_queue_depth', 'gauge'],
      ['b_requests_total', 'counter'],
      ['c_duration_seconds', 'histogram'],
    ]);
    expect(sampleLines(renderText(families))).toEqual(sampleLines(await registry.metrics()));
  });

  it('keeps _total on counters in OpenMetrics and again in a later text render', async () => {
    const registry = new Registry();
    new Counter({ name: 'x_total', help: 'X.', registers: [registry] }).inc();
    const openMetrics = renderOpenMetrics(await familiesFromRegistry(registry));
    expect(openMetrics).toContain('# TYPE x counter\nx_total 1\n');
    expect(renderText(await familiesFromRegistry(registry))).toContain('# TYPE x_total counter\nx_total 1\n');
  });

  it('appends _total to a counter created without it', async () => {
    const registry = new Registry();
    new Counter({ name: 'events', help: 'Events.', registers: [registry] }).inc(2);
    const [family] = await familiesFromRegistry(registry);
    expect(family?.spec.name).toBe('events_total');
  });

  it('applies default labels and stringifies numeric label values', async () => {
    const registry = new Registry();
    registry.setDefaultLabels({ instance_role: 'primary' });
    new Gauge({ name: 'g', help: 'G.', labelNames: ['shard'], registers: [registry] }).set({ shard: 3 }, 1);
    const [family] = await familiesFromRegistry(registry);
    expect(family?.samples[0]?.labels).toEqual({ shard: '3', instance_role: 'primary' });
  });

  it('skips summaries, which the model cannot carry', async () => {
    const registry = new Registry();
    new Summary({ name: 's', help: 'S.', registers: [registry] }).observe(1);
    new Gauge({ name: 'g', help: 'G.', registers: [registry] }).set(1);
    expect((await familiesFromRegistry(registry)).map((f) => f.spec.name)).toEqual(['g']);
  });
});
