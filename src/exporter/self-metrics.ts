import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { createBudgetMetrics } from '../budget/index.js';
import type { Clock } from '../lib/clock.js';
import { createLimitMetrics } from '../limits/account-sink.js';
import { createSchedulerMetrics } from '../scheduler/metrics.js';
import { createUpstreamMetrics } from '../upstream/metrics.js';
import { EXPORTER_VERSION } from '../version.js';

export function registerBuildInfo(registry: Registry): void {
  new Gauge({
    name: 'monapi_exporter_build_info',
    help: 'Build of the exporter: version and Node.js version. Always 1.',
    labelNames: ['version', 'nodejs_version'],
    registers: [registry],
  }).set({ version: EXPORTER_VERSION, nodejs_version: process.version }, 1);
}

/** `monapi_exporter_config_last_reload_*`, as Prometheus names its own. */
export function createReloadMetrics(registry: Registry): { successful: Gauge; timestamp: Gauge } {
  return {
    successful: new Gauge({
      name: 'monapi_exporter_config_last_reload_successful',
      help: 'Whether the last configuration reload (SIGHUP or POST /-/reload) succeeded: 1, or 0 while the previous configuration stays in force.',
      registers: [registry],
    }),
    timestamp: new Gauge({
      name: 'monapi_exporter_config_last_reload_success_timestamp_seconds',
      help: 'Unix time of the last successful configuration load (the start counts as one).',
      registers: [registry],
    }),
  };
}

export function createReleaseLookupCounter(registry: Registry): Counter<'outcome'> {
  return new Counter({
    name: 'monapi_release_lookups_total',
    help: 'Release lookups by outcome (success or error).',
    labelNames: ['outcome'],
    registers: [registry],
  });
}

/** Every self-metric of the exporter, on one registry. */
export function createSelfMetrics(clock: Clock, processMetrics: boolean) {
  const registry = new Registry();
  if (processMetrics) {
    collectDefaultMetrics({ register: registry, prefix: 'monapi_exporter_' });
    // prom-client names these gauges ..._total, which promtool rejects (only counters may end in _total).
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      registry.removeSingleMetric(`monapi_exporter_${name}`);
    }
  }
  registerBuildInfo(registry);
  return {
    registry,
    upstream: createUpstreamMetrics(registry, { accountLabel: true }),
    budget: createBudgetMetrics(registry),
    scheduler: createSchedulerMetrics(registry, clock),
    limitDropped: createLimitMetrics(registry),
    reload: createReloadMetrics(registry),
    releaseLookups: createReleaseLookupCounter(registry),
  };
}

export type SelfMetrics = ReturnType<typeof createSelfMetrics>;

/**
 * Removes every self-metric series of an account a reload removed, so it leaves /metrics
 * whole (its data series are retracted from the store separately).
 */
export async function forgetAccountSeries(registry: Registry, account: string): Promise<void> {
  for (const metric of registry.getMetricsAsArray()) {
    // prom-client types the array as plain objects; every entry is a metric with get() and, when labelled, remove().
    const withLabels = metric as unknown as {
      labelNames?: readonly string[];
      remove?: (labels: Record<string, string>) => void;
      get(): Promise<{ values: { labels: Record<string, string | number> }[] }>;
    };
    if (!withLabels.labelNames?.includes('account') || typeof withLabels.remove !== 'function') continue;
    const seen = new Set<string>();
    for (const value of (await withLabels.get()).values) {
      const labels = value.labels;
      if (labels.account !== account) continue;
      // Histogram buckets, sums and counts share one label set apart from le.
      const own = Object.fromEntries(Object.entries(labels).filter(([name]) => withLabels.labelNames?.includes(name)).map(([k, v]) => [k, String(v)]));
      const key = JSON.stringify(own);
      if (seen.has(key)) continue;
      seen.add(key);
      withLabels.remove(own);
    }
  }
}
