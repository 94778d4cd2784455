import { createAccountSource } from './account/index.js';
import { createAlertRulesSource } from './alert-rules/index.js';
import { createAlertsSource } from './alerts/index.js';
import { createChecksSource } from './checks/index.js';
import { createComponentsSource } from './components/index.js';
import { createHostDetailsSource } from './host-details/index.js';
import { createHostsSource } from './hosts/index.js';
import { createMetricCatalogueSource } from './metric-catalogue/index.js';
import { createSeriesSource } from './series/index.js';
import { createWebsiteSummarySource } from './website-summary/index.js';
import { createWebsitesSource } from './websites/index.js';
import type { MonitoringSourceFactory } from './types.js';

/**
 * Every polled source of the Monitoring API. Adding an endpoint is one module beside these
 * and one line here.
 */
export const MONITORING_SOURCES: readonly MonitoringSourceFactory[] = [
  createHostsSource,
  createHostDetailsSource,
  createAccountSource,
  createMetricCatalogueSource,
  createSeriesSource,
  createComponentsSource,
  createWebsitesSource,
  createChecksSource,
  createWebsiteSummarySource,
  createAlertsSource,
  createAlertRulesSource,
];
