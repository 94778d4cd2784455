import { ACCOUNT_ENDPOINT } from '../../src/sources/account/index.js';
import { ALERT_RULES_ENDPOINT } from '../../src/sources/alert-rules/index.js';
import { RECENT_ALERTS_ENDPOINT } from '../../src/sources/alerts/index.js';
import { CHECKS_ENDPOINT } from '../../src/sources/checks/index.js';
import { COMPONENTS_ENDPOINT } from '../../src/sources/components/index.js';
import { HOST_ENDPOINT } from '../../src/sources/host-details/index.js';
import { HOSTS_ENDPOINT } from '../../src/sources/hosts/index.js';
import { METRIC_CATALOGUE_ENDPOINT } from '../../src/sources/metric-catalogue/index.js';
import type { RequestContext } from '../../src/upstream/http/errors.js';
import { LATEST_ENDPOINT, SERIES_ENDPOINT } from '../../src/sources/series/fetch.js';
import { pointsByName } from '../../src/sources/series/points.js';
import { WEBSITE_SUMMARY_ENDPOINT } from '../../src/sources/website-summary/index.js';
import { WEBSITES_ENDPOINT } from '../../src/sources/websites/index.js';

/**
 * The series decoder, its points written back as the document writes them (`{timestamp, value}`
 * objects, not the columns it gives the mapper): what the shape tests state their answers in.
 */
function seriesInDocumentForm(raw: unknown, context: RequestContext, options?: Parameters<typeof SERIES_ENDPOINT.decode>[2]) {
  const decoded = SERIES_ENDPOINT.decode(raw, context, options);
  return { ...decoded, value: { ...decoded.value, series: pointsByName(decoded.value.series) } };
}

/** The decoder of every Monitoring API response, by a short name, as the sources declare them (series in the document's form). */
export const monitoringDecoders = {
  account: ACCOUNT_ENDPOINT.decode,
  hosts: HOSTS_ENDPOINT.decode,
  host: HOST_ENDPOINT.decode,
  metricCatalogue: METRIC_CATALOGUE_ENDPOINT.decode,
  series: seriesInDocumentForm,
  latest: LATEST_ENDPOINT.decode,
  components: COMPONENTS_ENDPOINT.decode,
  alertRules: ALERT_RULES_ENDPOINT.decode,
  recentAlerts: RECENT_ALERTS_ENDPOINT.decode,
  websites: WEBSITES_ENDPOINT.decode,
  websiteSummary: WEBSITE_SUMMARY_ENDPOINT.decode,
  checks: CHECKS_ENDPOINT.decode,
};
