/**
 * Names an unknown agent metric must never take. Agent names map mechanically, so an agent
 * metric `hosts` or `up` would land on `monapi_hosts` or `monapi_up` and break the scrape
 * with a duplicate family. Every source declares its own families (`families` on each
 * definition, all of them reserved through the unit's context); these are the prefixes of
 * the self-metrics, rendered apart from the sources' data.
 */
export const SELF_METRIC_PREFIXES: readonly string[] = [
  'monapi_exporter_',
  'monapi_upstream_',
  'monapi_budget_',
  'monapi_job_',
  'monapi_plan_',
  'monapi_scheduler_',
  'monapi_release_lookups_',
  'monapi_up_',
];
