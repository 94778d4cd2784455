import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { board, SCOPE, upDownMapping, type PanelSpec, type RowSpec } from './common.js';

/** Monapi / Overview: the accounts, their hosts and websites, alerts, and how far components are behind their releases. */

const A = `${SCOPE}, account=~"$account"`;

/**
 * The alerts of the picked exporters. ALERTS carries the labels an alert's expression keeps:
 * alerts on single series (a host, a website, a target) keep job and instance; alerts about a
 * deployment (its shards, or no target at all) keep its job but no instance; alerts about an
 * account aggregate both away, so those are kept when their account is one the picked
 * exporters poll.
 */
const FIRING = 'alertstate="firing", alertname=~"Monapi.+", cluster=~"$cluster"';
export const ALERTS_FIRING = `ALERTS{${FIRING}, job=~"$job", instance=~"$instance"}
or ALERTS{${FIRING}, job=~"$job", instance=""}
or (ALERTS{${FIRING}, job="", instance=""} and on(account) monapi_up{${A}})`;

/**
 * Components (and agents) behind the latest release of their line, from the outdated check
 * (monapi_component_outdated: 1 behind, 0 up to date; see docs/metrics/outdated.md).
 */
export const COMPONENTS_BEHIND = `monapi_component_outdated{${A}} == 1`;

const stat = (title: string, description: string, expr: string, steps?: PanelSpec['steps']): PanelSpec => ({
  kind: 'stat',
  title,
  description,
  unit: 'none',
  decimals: 0,
  w: 3,
  h: 4,
  queries: [{ expr, legend: title }],
  ...(steps ? { steps } : {}),
});

const redWhenAny: PanelSpec['steps'] = [
  [null, 'green'],
  [1, 'red'],
];
const orangeWhenAny: PanelSpec['steps'] = [
  [null, 'green'],
  [1, 'orange'],
];

const estate: RowSpec = {
  title: 'Estate',
  panels: [
    stat('Accounts answering', 'Accounts whose Monitoring API answers the exporter (monapi_up).', `sum(min by (account) (monapi_up{${A}}))`),
    stat(
      'Accounts failing',
      'Accounts the exporter cannot poll: unreachable, key refused, plan too small, or no first answer yet.',
      `sum(1 - min by (account) (monapi_up{${A}}))`,
      redWhenAny,
    ),
    stat('Hosts online', 'Hosts whose agent reported within the last 3 minutes.', `sum(monapi_hosts{${A}, state="online"})`),
    stat('Hosts offline', 'Hosts within the plan whose agent has not reported for 3 minutes.', `sum(monapi_hosts{${A}, state="offline"})`, redWhenAny),
    stat(
      'Hosts beyond plan',
      'Hosts beyond the plan\'s host limit: upstream collects no metrics for them.',
      `sum(monapi_hosts{${A}, state="not_allowed"})`,
      orangeWhenAny,
    ),
    stat('Websites up', 'Websites whose latest upstream check succeeded.', `sum(monapi_website_up{${A}})`),
    stat('Websites down', 'Websites whose latest upstream check failed.', `sum(1 - monapi_website_up{${A}})`, redWhenAny),
    stat(
      'Components behind',
      'Detected components (nginx, php-fpm, databases, varnish) and agents with a newer release in their version line (monapi_component_outdated).',
      `sum(monapi_component_outdated{${A}}) or vector(0)`,
      orangeWhenAny,
    ),
  ],
};

const accounts: RowSpec = {
  title: 'Accounts',
  panels: [
    {
      kind: 'table',
      title: 'Accounts',
      description: 'Plan, whether the Monitoring API answers, and hosts and websites in use against the plan\'s limits.',
      unit: 'none',
      w: 12,
      h: 7,
      queries: [
        { expr: `max by (account, plan) (monapi_account_info{${A}})` },
        { expr: `min by (account) (monapi_up{${A}})` },
        { expr: `max by (account) (monapi_account_hosts{${A}})` },
        { expr: `max by (account) (monapi_account_host_limit{${A}})` },
        { expr: `max by (account) (monapi_account_websites{${A}})` },
        { expr: `max by (account) (monapi_account_website_limit{${A}})` },
      ],
      transformations: [
        { id: 'merge', options: {} },
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true, 'Value #A': true },
            renameByName: {
              account: 'Account',
              plan: 'Plan',
              'Value #B': 'API answers',
              'Value #C': 'Hosts',
              'Value #D': 'Host limit',
              'Value #E': 'Websites',
              'Value #F': 'Website limit',
            },
          },
        },
      ],
      overrides: [{ name: 'API answers', properties: [{ id: 'mappings', value: [upDownMapping('yes', 'no')] }, { id: 'custom.cellOptions', value: { type: 'color-text' } }] }],
    },
    {
      kind: 'timeseries',
      title: 'Hosts by state',
      description: 'Hosts online, offline (within the plan, not reporting) and beyond the plan\'s host limit.',
      unit: 'none',
      decimals: 0,
      stack: true,
      w: 12,
      h: 7,
      queries: [{ expr: `sum by (state) (monapi_hosts{${A}})`, legend: '{{state}}' }],
    },
    {
      kind: 'statetimeline',
      title: 'Websites',
      description: 'Whether the latest upstream check of each website succeeded.',
      unit: 'none',
      w: 24,
      h: 7,
      mappings: [upDownMapping()],
      steps: [
        [null, 'red'],
        [1, 'green'],
      ],
      queries: [{ expr: `monapi_website_up{${A}}`, legend: '{{account}} / {{website}}' }],
    },
  ],
};

const alerts: RowSpec = {
  title: 'Alerts',
  panels: [
    {
      kind: 'table',
      title: 'Alerts firing',
      description: 'Alerts of the monapi-exporter rules (alerts/monapi-exporter.rules.yaml) firing in this Prometheus, about the picked exporters and the accounts they poll.',
      unit: 'none',
      w: 14,
      h: 8,
      queries: [{ expr: ALERTS_FIRING }],
      transformations: [{ id: 'organize', options: { excludeByName: { Time: true, __name__: true, alertstate: true, job: true, instance: true, Value: true } } }],
    },
    {
      kind: 'timeseries',
      title: 'Upstream alert events',
      description: 'Events of the Monitoring API\'s own alerting (website down, host alert rules), per type.',
      unit: 'none',
      decimals: 0,
      stack: true,
      w: 10,
      h: 8,
      queries: [{ expr: `sum by (event_type) (increase(monapi_alert_events_total{${A}}[$__rate_interval]))`, legend: '{{event_type}}' }],
    },
  ],
};

const releases: RowSpec = {
  title: 'Releases',
  panels: [
    {
      kind: 'table',
      title: 'Latest releases',
      description: 'The latest release of each configured project, from the Release Lookup API.',
      unit: 'none',
      w: 10,
      h: 8,
      queries: [{ expr: `monapi_release_info{${SCOPE}}` }],
      transformations: [
        { id: 'organize', options: { excludeByName: { Time: true, __name__: true, job: true, instance: true, Value: true }, renameByName: { project: 'Project', major: 'Major line', version: 'Version', release_type: 'Type' } } },
      ],
    },
    {
      kind: 'table',
      title: 'Components behind their latest release',
      description: 'Components and agents with a newer release in their version line, with the number of instances.',
      unit: 'none',
      w: 14,
      h: 8,
      queries: [{ expr: `count by (account, software, version, latest_version) (${COMPONENTS_BEHIND})` }],
      transformations: [
        { id: 'organize', options: { excludeByName: { Time: true }, renameByName: { account: 'Account', software: 'Software', version: 'Running', latest_version: 'Latest', Value: 'Instances' } } },
      ],
    },
  ],
};

export function overviewDashboard(): Dashboard {
  return board({
    uid: 'monapi-overview',
    title: 'Monapi / Overview',
    description: 'Accounts, hosts, websites, alerts and releases seen through monapi-exporter.',
    variables: [],
    // Host, website and account data are polled once a minute.
    minInterval: '1m',
    rows: [estate, accounts, alerts, releases],
  });
}
