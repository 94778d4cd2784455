import { formatValue } from '../exposition/format.js';
import type { FamilySamples, HistogramSample, ScalarSample, SummarySample } from '../exposition/model.js';
import type { Labels, TimeSeries } from './protocol.js';

/**
 * The series a scrape of these families would give Prometheus, one sample each at `nowMs`
 * (or at the sample's own time, with `sample_timestamps`): a counter as `<name>_total`, a
 * summary as its quantiles, `_sum` and `_count`, a histogram as `_bucket` series with `le`
 * (`+Inf` included), `_sum` and `_count`. `externalLabels` are added where a series has no
 * label of that name, as Prometheus adds its `external_labels`.
 */
export function familiesToTimeSeries(families: readonly FamilySamples[], nowMs: number, externalLabels: Labels = {}): TimeSeries[] {
  const out: TimeSeries[] = [];
  const add = (name: string, labels: Labels, value: number, timestampMs = nowMs) => {
    out.push({ labels: { ...externalLabels, ...labels, __name__: name }, samples: [{ value, timestampMs }] });
  };
  for (const family of families) {
    const { name } = family.spec;
    switch (family.spec.type) {
      case 'gauge':
      case 'counter':
      case 'info':
        for (const sample of family.samples as readonly ScalarSample[]) add(name, sample.labels, sample.value, sample.timestampMs);
        break;
      case 'summary':
        for (const sample of family.samples as readonly SummarySample[]) {
          for (const [quantile, value] of sample.quantiles) add(name, { ...sample.labels, quantile: formatValue(quantile) }, value);
          add(`${name}_sum`, sample.labels, sample.sum);
          add(`${name}_count`, sample.labels, sample.count);
        }
        break;
      case 'histogram':
        for (const sample of family.samples as readonly HistogramSample[]) {
          for (const [bound, count] of sample.buckets) add(`${name}_bucket`, { ...sample.labels, le: formatValue(bound) }, count);
          add(`${name}_bucket`, { ...sample.labels, le: '+Inf' }, sample.count);
          add(`${name}_sum`, sample.labels, sample.sum);
          add(`${name}_count`, sample.labels, sample.count);
        }
        break;
    }
  }
  return out;
}

/** What prom-client's `getMetricsAsJSON` gives: the exporter's self-metrics. */
export interface PromClientMetric {
  readonly name: string;
  readonly values: readonly { readonly value: number; readonly labels: Readonly<Record<string, string | number>>; readonly metricName?: string }[];
}

/** Self-metrics as series (prom-client already names `_bucket`, `_sum` and `_count`). */
export function promClientToTimeSeries(metrics: readonly PromClientMetric[], nowMs: number, externalLabels: Labels = {}): TimeSeries[] {
  const out: TimeSeries[] = [];
  for (const metric of metrics) {
    for (const value of metric.values) {
      const labels = Object.fromEntries(Object.entries(value.labels).map(([k, v]) => [k, typeof v === 'number' ? formatValue(v) : v]));
      out.push({ labels: { ...externalLabels, ...labels, __name__: value.metricName ?? metric.name }, samples: [{ value: value.value, timestampMs: nowMs }] });
    }
  }
  return out;
}
