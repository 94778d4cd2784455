import { accountSource } from './account/index.js';
import { alertRulesSource } from './alert-rules/index.js';
import { alertsSource } from './alerts/index.js';
import { apiDescriptionSource } from './api-description/index.js';
import { checksSource } from './checks/index.js';
import { componentsSource } from './components/index.js';
import { hostDetailsSource } from './host-details/index.js';
import { hostsSource } from './hosts/index.js';
import { metricCatalogueSource } from './metric-catalogue/index.js';
import { outdatedSource } from './outdated/index.js';
import { releasesSource } from './releases/index.js';
import { seriesSource } from './series/index.js';
import type { AnySource } from './source.js';
import { websiteSummarySource } from './website-summary/index.js';
import { websitesSource } from './websites/index.js';

/**
 * Every source, in one explicit list: adding an endpoint is one folder beside these and one
 * line here. The configuration (switches, cadences, keys), the polling plan, `/status`, the
 * state file and docs/metrics.md all follow from this list. Within a unit, jobs due at the
 * same time start in this order.
 */
export const SOURCES: readonly AnySource[] = [
  hostsSource,
  hostDetailsSource,
  metricCatalogueSource,
  seriesSource,
  componentsSource,
  websitesSource,
  websiteSummarySource,
  checksSource,
  alertsSource,
  alertRulesSource,
  accountSource,
  apiDescriptionSource,
  releasesSource,
  outdatedSource,
];
