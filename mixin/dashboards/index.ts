import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { exporterDashboard } from './exporter.js';
import { hostsDashboard } from './hosts.js';
import { overviewDashboard } from './overview.js';
import { websitesDashboard } from './websites.js';

/** Every dashboard of the mixin, by the file name it is written to (grafana-dashboards/<name>.json). */
export function dashboards(): Record<string, Dashboard> {
  return {
    'monapi-overview': overviewDashboard(),
    'monapi-hosts': hostsDashboard(),
    'monapi-websites': websitesDashboard(),
    'monapi-exporter': exporterDashboard(),
  };
}
