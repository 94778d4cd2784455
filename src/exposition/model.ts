/**
 * What sources hand to the exposition layer: metric families with plain samples. Sources
 * build these with pure functions; the store renders them to exposition bytes.
 */

export type Labels = Readonly<Record<string, string>>;

export type MetricType = 'gauge' | 'counter' | 'histogram' | 'summary' | 'info';

export interface FamilySpec {
  /**
   * The name as it appears in the Prometheus text format: counters end in `_total`, info
   * metrics in `_info`. The OpenMetrics renderer derives the family name by removing
   * those suffixes.
   */
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  /** OpenMetrics unit (`seconds`, `bytes`, `ratio`...); the name must end with it. */
  readonly unit?: string;
}

export interface ScalarSample {
  readonly labels: Labels;
  readonly value: number;
  /**
   * Only with the opt-in `sample_timestamps`: the upstream time of the value. Off by
   * default because timestamps on samples defeat Prometheus' staleness handling.
   */
  readonly timestampMs?: number;
}

export interface HistogramSample {
  readonly labels: Labels;
  /** Upper bounds in ascending order with cumulative counts; `+Inf` is added by the renderer. */
  readonly buckets: readonly (readonly [upperBound: number, cumulativeCount: number])[];
  readonly sum: number;
  readonly count: number;
}

export interface SummarySample {
  readonly labels: Labels;
  /** `[quantile, value]` pairs in ascending quantile order (0-1); a value may be NaN when unknown. */
  readonly quantiles: readonly (readonly [quantile: number, value: number])[];
  readonly sum: number;
  readonly count: number;
}

export type FamilySamples =
  | { readonly spec: FamilySpec & { readonly type: 'gauge' | 'counter' | 'info' }; readonly samples: readonly ScalarSample[] }
  | { readonly spec: FamilySpec & { readonly type: 'histogram' }; readonly samples: readonly HistogramSample[] }
  | { readonly spec: FamilySpec & { readonly type: 'summary' }; readonly samples: readonly SummarySample[] };

/**
 * Where sources publish what they map. A group is the unit of replacement: publishing a
 * group replaces everything it held before, and retracting it removes its series from
 * /metrics (a host that disappears upstream disappears here).
 */
export interface MetricSink {
  publish(group: string, families: readonly FamilySamples[]): void;
  retract(group: string): void;
  /** Groups currently held whose name starts with `prefix`. */
  groups(prefix: string): string[];
}
