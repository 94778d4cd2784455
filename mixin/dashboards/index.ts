import { VariableHide, type Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { DEFAULT_CONFIG, type MixinConfig } from '../config.js';
import { exporterDashboard } from './exporter.js';
import { hostsDashboard } from './hosts.js';
import { overviewDashboard } from './overview.js';
import { websitesDashboard } from './websites.js';

/** Every dashboard of the mixin, by the file name it is written to (grafana-dashboards/<name>.json). */
export function dashboards(config: MixinConfig = DEFAULT_CONFIG): Record<string, Dashboard> {
  const all: Record<string, Dashboard> = {
    'monapi-overview': overviewDashboard(),
    'monapi-hosts': hostsDashboard(),
    'monapi-websites': websitesDashboard(),
    'monapi-exporter': exporterDashboard(),
  };
  return Object.fromEntries(Object.entries(all).map(([name, dashboard]) => [name, withClusterShown(dashboard, config.showMultiCluster)]));
}

function withClusterShown(dashboard: Dashboard, shown: boolean): Dashboard {
  const list = dashboard.templating?.list?.map((variable) =>
    variable.name === 'cluster' ? { ...variable, hide: shown ? VariableHide.DontHide : VariableHide.HideVariable } : variable,
  );
  return list ? { ...dashboard, templating: { ...dashboard.templating, list } } : dashboard;
}
