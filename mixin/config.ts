/**
 * The knobs of the dashboards and alert rules, in the manner of a monitoring mixin's
 * `_config`: thresholds, `for:` durations and range windows in one place. `npm run mixin`
 * renders the checked-in files with DEFAULT_CONFIG; the end-to-end test renders the same
 * rules with every duration divided by its clock's speed-up (`scaleDurations`).
 */

export interface MixinConfig {
  /** Where docs/runbooks.md is published; each alert links to its section. */
  readonly runbookBaseUrl: string;
  /**
   * Labels that tell one exporter deployment (a set of shards) from another, for the sharding
   * alerts. A ServiceMonitor of the Prometheus Operator gives every target `namespace`,
   * `service` and `job`, so two releases of the chart differ even though both have
   * `job="monapi-exporter"`; a static scrape config has `job` (and `instance`) only, so there
   * each deployment needs a job of its own. A label absent from a series groups as empty.
   */
  readonly shardGroupLabels: readonly string[];
  /** Selects the exporter's scrape targets in `up`, for MonapiExporterDown (the chart's ServiceMonitor gives this job). */
  readonly exporterSelector: string;
  /**
   * Dashboards: show the `cluster` variable (kubernetes-mixin's `showMultiCluster`). Off, it
   * stays hidden at "All", which matches series with and without a `cluster` label; turn it
   * on where one Grafana data source holds several clusters (Thanos, Mimir, external labels).
   */
  readonly showMultiCluster: boolean;
  /** Seconds an alert's condition must hold before it fires. */
  readonly for: {
    readonly hostOffline: number;
    readonly websiteDown: number;
    readonly certificateExpiring: number;
    readonly upstreamUnreachable: number;
    readonly upstreamAuth: number;
    readonly rateLimited: number;
    readonly dataStale: number;
    readonly sourceFailing: number;
    readonly budgetTooSmall: number;
    readonly hostsBeyondPlanLimit: number;
    readonly releaseLookupFailing: number;
    readonly sharding: number;
    readonly exporterDown: number;
  };
  /** Range windows of rule expressions, seconds. */
  readonly windows: {
    /** 429s counted over this window; any in every window for `for.rateLimited` fires. */
    readonly rateLimited: number;
  };
  readonly thresholds: {
    /** Certificates expiring sooner than this many days: warning. */
    readonly certificateWarningDays: number;
    /** ... and sooner than this: critical. */
    readonly certificateCriticalDays: number;
    /** Data older than this many effective cadences of its source is stale ... */
    readonly staleCadences: number;
    /** ... and older than this many seconds (hosts offline and slow website checks are polled less often than their source's cadence). */
    readonly staleFloorSeconds: number;
  };
}

export const DEFAULT_CONFIG: MixinConfig = {
  runbookBaseUrl: 'https://github.com/monapi/monapi-exporter/blob/main/docs/runbooks.md',
  shardGroupLabels: ['cluster', 'namespace', 'service', 'job'],
  exporterSelector: 'job="monapi-exporter"',
  showMultiCluster: false,
  for: {
    hostOffline: 5 * 60,
    websiteDown: 3 * 60,
    certificateExpiring: 15 * 60,
    upstreamUnreachable: 10 * 60,
    upstreamAuth: 5 * 60,
    rateLimited: 15 * 60,
    dataStale: 15 * 60,
    sourceFailing: 15 * 60,
    budgetTooSmall: 30 * 60,
    hostsBeyondPlanLimit: 60 * 60,
    releaseLookupFailing: 60 * 60,
    sharding: 15 * 60,
    exporterDown: 5 * 60,
  },
  windows: {
    rateLimited: 10 * 60,
  },
  thresholds: {
    certificateWarningDays: 14,
    certificateCriticalDays: 3,
    staleCadences: 3,
    staleFloorSeconds: 30 * 60,
  },
};

/**
 * The same configuration for a clock running `speed` times faster than real time (the
 * demo's `--speed`): `for:` durations, range windows and the staleness floor are simulated
 * time, so they shrink; thresholds on dates (certificates) do not.
 */
export function scaleDurations(config: MixinConfig, speed: number): MixinConfig {
  const scale = (seconds: number): number => Math.max(1, Math.round(seconds / speed));
  const scaleAll = <T extends Record<string, number>>(values: T): T =>
    Object.fromEntries(Object.entries(values).map(([key, seconds]) => [key, scale(seconds)])) as T;
  return {
    ...config,
    for: scaleAll(config.for),
    windows: scaleAll(config.windows),
    // The floor compares with monapi_job_staleness_seconds, which the exporter measures in its own (simulated) time.
    thresholds: { ...config.thresholds },
  };
}

/** Seconds as a Prometheus duration: 90 -> "1m30s", 3600 -> "1h". */
export function promDuration(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 1) throw new RangeError(`a Prometheus duration needs whole seconds >= 1, got ${seconds}`);
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  let rest = seconds;
  let text = '';
  for (const [unit, size] of units) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * size;
  }
  return text;
}
