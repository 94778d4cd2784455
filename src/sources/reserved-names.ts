import { OUTDATED_FAMILIES } from './outdated/map.js';
import { RELEASE_FAMILIES } from './releases/map.js';
import { familyNames } from './types.js';

/**
 * Names an unknown agent metric must never take. Agent names map mechanically, so an agent
 * metric `hosts` or `up` would land on `monapi_hosts` or `monapi_up` and break the scrape
 * with a duplicate family. The monitoring sources declare their own families (`families`
 * on each source); these are the rest: the release lookups and the outdated check, which
 * are not monitoring sources, and the prefixes of the self-metrics, rendered apart from the
 * sources' data.
 */
export const RELEASE_FAMILY_NAMES: readonly string[] = [...familyNames(RELEASE_FAMILIES), ...familyNames(OUTDATED_FAMILIES)];

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
