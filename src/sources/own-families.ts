import type { FamilySpec } from '../exposition/model.js';
import { ACCOUNT_FAMILIES } from './account/map.js';
import { ALERT_RULE_FAMILIES } from './alert-rules/map.js';
import { ALERT_FAMILIES } from './alerts/map.js';
import { CHECK_FAMILIES } from './checks/map.js';
import { COMPONENT_INFO } from './components/map.js';
import { HOST_FAMILIES } from './hosts/map.js';
import { RELEASE_FAMILIES } from './releases/map.js';
import { WEBSITE_FAMILIES } from './websites/map.js';

/**
 * Every family the sources emit under a fixed name. Agent metric names are mapped
 * mechanically, so an unknown agent metric could land on one of these (`hosts` would become
 * `monapi_hosts`); the series naming reserves them so that can never happen.
 */
export const OWN_FAMILY_NAMES: readonly string[] = [
  ACCOUNT_FAMILIES,
  ALERT_RULE_FAMILIES,
  ALERT_FAMILIES,
  CHECK_FAMILIES,
  HOST_FAMILIES,
  RELEASE_FAMILIES,
  WEBSITE_FAMILIES,
  { componentInfo: COMPONENT_INFO },
].flatMap((group) => Object.values(group as Record<string, FamilySpec>).map((spec) => spec.name));

/**
 * Prefixes of the exporter's self-metrics (made with prom-client, rendered apart from the
 * sources' families) and `monapi_up` itself.
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
