import type { Priority } from '../../src/budget/types.js';
import { ACCOUNT_ENDPOINT } from '../../src/sources/account/index.js';
import { ALERT_RULES_ENDPOINT } from '../../src/sources/alert-rules/index.js';
import { RECENT_ALERTS_ENDPOINT } from '../../src/sources/alerts/index.js';
import { CHECKS_ENDPOINT } from '../../src/sources/checks/index.js';
import type { ChecksQuery } from '../../src/sources/checks/map.js';
import { COMPONENTS_ENDPOINT } from '../../src/sources/components/index.js';
import { HOST_ENDPOINT } from '../../src/sources/host-details/index.js';
import { HOSTS_ENDPOINT } from '../../src/sources/hosts/index.js';
import { METRIC_CATALOGUE_ENDPOINT } from '../../src/sources/metric-catalogue/index.js';
import { DEFAULT_MAX_URL_LENGTH, fetchLatest, fetchSeries } from '../../src/sources/series/fetch.js';
import { WEBSITE_SUMMARY_ENDPOINT } from '../../src/sources/website-summary/index.js';
import { WEBSITES_ENDPOINT } from '../../src/sources/websites/index.js';
import type { MonitoringClient } from '../../src/upstream/monitoring/client.js';

/**
 * Every endpoint of the Monitoring API as one call each, through the endpoints the sources
 * declare: tests of the client and of the budget call the API the way the sources do,
 * without a source around them.
 */
export function monitoringCalls(client: MonitoringClient, options: { maxUrlLength?: number } = {}) {
  return {
    account: (priority: Priority = 'high') => client.get(ACCOUNT_ENDPOINT, {}, {}, priority),
    hosts: (priority: Priority = 'high') => client.get(HOSTS_ENDPOINT, {}, {}, priority),
    host: (uuid: string, priority: Priority = 'normal') => client.get(HOST_ENDPOINT, { uuid }, {}, priority),
    metricCatalogue: (uuid: string, priority: Priority = 'normal') => client.get(METRIC_CATALOGUE_ENDPOINT, { uuid }, {}, priority),
    series: (uuid: string, names: readonly string[], since = '1h', priority: Priority = 'bulk') =>
      fetchSeries(client, uuid, names, since, priority, options.maxUrlLength ?? DEFAULT_MAX_URL_LENGTH),
    latest: (uuid: string, name: string, priority: Priority = 'normal') => fetchLatest(client, uuid, name, priority),
    components: (uuid: string, priority: Priority = 'normal') => client.get(COMPONENTS_ENDPOINT, { uuid }, {}, priority),
    alertRules: (priority: Priority = 'high') => client.get(ALERT_RULES_ENDPOINT, {}, {}, priority),
    recentAlerts: (limit?: number, priority: Priority = 'high') => client.get(RECENT_ALERTS_ENDPOINT, {}, { limit }, priority),
    websites: (priority: Priority = 'high') => client.get(WEBSITES_ENDPOINT, {}, {}, priority),
    websiteSummary: (id: number, priority: Priority = 'normal') => client.get(WEBSITE_SUMMARY_ENDPOINT, { id }, {}, priority),
    checks: (id: number, query: ChecksQuery = {}, priority: Priority = 'bulk') => client.get(CHECKS_ENDPOINT, { id }, { ...query }, priority),
  };
}

export type MonitoringCalls = ReturnType<typeof monitoringCalls>;
