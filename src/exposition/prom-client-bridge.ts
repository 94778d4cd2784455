import type { Registry } from 'prom-client';
import type { FamilySamples, HistogramSample, Labels, ScalarSample } from './model.js';
import { yieldToEventLoop } from '../lib/turns.js';

/** One value as `getMetricsAsJSON` returns it; label values may be numbers. */
interface JsonValue {
  readonly value: number;
  readonly labels: Readonly<Record<string, string | number | undefined>>;
  readonly metricName?: string;
}

interface JsonMetric {
  readonly name: string;
  readonly help: string;
  // prom-client declares an enum but returns the strings 'counter', 'gauge', ...
  readonly type: unknown;
  readonly values: readonly JsonValue[];
}

function stringLabels(labels: JsonValue['labels'], without?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(labels)) {
    if (value === undefined || name === without) continue;
    out[name] = String(value);
  }
  return out;
}

function histogramSamples(metric: JsonMetric): HistogramSample[] {
  interface Building {
    labels: Labels;
    buckets: [number, number][];
    sum: number;
    count: number;
  }
  const byLabels = new Map<string, Building>();
  for (const value of metric.values) {
    // prom-client gives one series' buckets, sum and count the same labels in the same order
    // (plus `le` on buckets), so the values in order make the key: this runs for every bucket
    // of every self-metric on a scrape, and sorting entries there cost more than the rest.
    let key = '';
    for (const name in value.labels) {
      const label = value.labels[name];
      if (name !== 'le' && label !== undefined) key += `${name}\u0000${String(label)}\u0001`;
    }
    let building = byLabels.get(key);
    if (!building) {
      building = { labels: stringLabels(value.labels, 'le'), buckets: [], sum: 0, count: 0 };
      byLabels.set(key, building);
    }
    const metricName = value.metricName ?? '';
    if (metricName.endsWith('_bucket')) {
      const le = value.labels.le;
      if (le !== '+Inf' && le !== undefined) building.buckets.push([Number(le), value.value]);
    } else if (metricName.endsWith('_sum')) {
      building.sum = value.value;
    } else if (metricName.endsWith('_count')) {
      building.count = value.value;
    }
  }
  return [...byLabels.values()].map((b) => ({ ...b, buckets: b.buckets.sort((x, y) => x[0] - y[0]) }));
}

/**
 * Converts a prom-client registry's content into FamilySamples, so self-metrics go through
 * the same renderers as the data (prom-client's own OpenMetrics output strips `_total` from
 * counters for good, which would break a later text render). Counters without `_total` get
 * it appended. Summaries are not supported by the model and are skipped; create
 * self-metrics as counters, gauges or histograms.
 */
export async function familiesFromRegistry(registry: Registry, options: { yieldBetweenMetrics?: boolean } = {}): Promise<FamilySamples[]> {
  const metrics = options.yieldBetweenMetrics ? await metricsOneByOne(registry) : ((await registry.getMetricsAsJSON()) as unknown as readonly JsonMetric[]);
  const families: FamilySamples[] = [];
  for (const metric of metrics) {
    const type = String(metric.type);
    if (type === 'counter') {
      const name = metric.name.endsWith('_total') ? metric.name : `${metric.name}_total`;
      families.push({ spec: { name, type: 'counter', help: metric.help }, samples: scalarSamples(metric) });
    } else if (type === 'gauge') {
      families.push({ spec: { name: metric.name, type: 'gauge', help: metric.help }, samples: scalarSamples(metric) });
    } else if (type === 'histogram') {
      families.push({ spec: { name: metric.name, type: 'histogram', help: metric.help }, samples: histogramSamples(metric) });
    }
  }
  return families.sort((a, b) => (a.spec.name < b.spec.name ? -1 : a.spec.name > b.spec.name ? 1 : 0));
}

/**
 * What `getMetricsAsJSON` returns, one metric at a time with the event loop free in between:
 * with hundreds of accounts the self-metrics are over a hundred thousand series, and
 * collecting them all at once held the event loop for seconds (a health probe on the same
 * port waited as long).
 */
async function metricsOneByOne(registry: Registry): Promise<JsonMetric[]> {
  // prom-client keeps the default labels in a field it does not expose; getMetricsAsJSON applies them like this.
  const defaults = (registry as unknown as { _defaultLabels?: Record<string, string> })._defaultLabels ?? {};
  const defaultNames = Object.keys(defaults);
  const out: JsonMetric[] = [];
  for (const metric of registry.getMetricsAsArray()) {
    // Typed as plain objects; every entry is a metric with get(), as forgetAccountSeries in exporter.ts relies on too.
    const item = await (metric as unknown as { get(): Promise<JsonMetric> }).get();
    if (defaultNames.length > 0) {
      for (const value of item.values) {
        const labels: Record<string, string | number | undefined> = { ...value.labels };
        for (const name of defaultNames) labels[name] = labels[name] || defaults[name];
        (value as { labels: JsonValue['labels'] }).labels = labels;
      }
    }
    out.push(item);
    await yieldToEventLoop();
  }
  return out;
}

function scalarSamples(metric: JsonMetric): ScalarSample[] {
  return metric.values.map((v) => ({ labels: stringLabels(v.labels), value: v.value }));
}
