import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { board, graph, queryVariable, SCOPE, upDownMapping, type PanelSpec, type RowSpec } from './common.js';

/**
 * Monapi / Websites: the upstream website checks. Availability and 24-hour figures come
 * from /websites (upstream's own aggregates); percentiles over any range come from the
 * check histograms the exporter builds from /websites/{id}/checks. Website families are
 * all in this file: adjust here when the websites sources add or rename one.
 */

const W = `${SCOPE}, account=~"$account", website=~"$website"`;
const RATE = '[$__rate_interval]';
const SITE_LEGEND = '{{account}} / {{website}}';
const DAY = 86_400;

type BarGaugeSpec = Extract<PanelSpec, { kind: 'bargauge' }>;

/** One bar per website. */
const perSite = (title: string, description: string, unit: string, expr: string, extra: Partial<Omit<BarGaugeSpec, 'kind'>> = {}): PanelSpec => ({
  kind: 'bargauge',
  title,
  description,
  unit,
  queries: [{ expr, legend: SITE_LEGEND }],
  w: 8,
  h: 8,
  ...extra,
});

/** A quantile of a check histogram, over the selected websites together or `by` a label. */
function quantile(q: number, histogram: string, by = ''): string {
  return `histogram_quantile(${q}, sum by (le${by ? `, ${by}` : ''}) (rate(${histogram}_bucket{${W}}${RATE})))`;
}

const availability: RowSpec = {
  title: 'Availability',
  panels: [
    {
      kind: 'stat',
      title: 'Websites up',
      description: 'Websites whose latest upstream check succeeded.',
      unit: 'none',
      decimals: 0,
      w: 4,
      h: 4,
      queries: [{ expr: `sum(monapi_website_up{${W}})`, legend: 'up' }],
    },
    {
      kind: 'stat',
      title: 'Websites down',
      description: 'Websites whose latest upstream check failed.',
      unit: 'none',
      decimals: 0,
      w: 4,
      h: 4,
      steps: [
        [null, 'green'],
        [1, 'red'],
      ],
      queries: [{ expr: `sum(1 - monapi_website_up{${W}})`, legend: 'down' }],
    },
    {
      kind: 'statetimeline',
      title: 'Up',
      description: 'Whether the latest upstream check of each website succeeded.',
      unit: 'none',
      w: 16,
      h: 8,
      mappings: [upDownMapping()],
      steps: [
        [null, 'red'],
        [1, 'green'],
      ],
      queries: [{ expr: `monapi_website_up{${W}}`, legend: SITE_LEGEND }],
    },
    perSite(
      'Uptime, last 24 hours',
      'Share of successful checks over 24 hours, as upstream computes it.',
      'percentunit',
      `monapi_website_uptime_ratio{${W}, window="24h"}`,
      {
        min: 0.9,
        max: 1,
        decimals: 2,
        steps: [
          [null, 'red'],
          [0.99, 'orange'],
          [0.999, 'green'],
        ],
      },
    ),
    perSite(
      'Uptime over the dashboard range',
      'Share of successful checks in the dashboard\'s time range, from the checks the exporter counted.',
      'percentunit',
      `sum by (account, website) (increase(monapi_website_checks_total{${W}, result="success"}[$__range]))
/ sum by (account, website) (increase(monapi_website_checks_total{${W}}[$__range]))`,
      {
        min: 0.9,
        max: 1,
        decimals: 2,
        steps: [
          [null, 'red'],
          [0.99, 'orange'],
          [0.999, 'green'],
        ],
      },
    ),
    graph('Checks by result', 'Upstream checks per second, successful and failed.', 'ops', [
      { expr: `sum by (result) (rate(monapi_website_checks_total{${W}}${RATE}))`, legend: '{{result}}' },
    ], { stack: true, w: 8, min: 0 }),
  ],
};

const speed: RowSpec = {
  title: 'Speed',
  panels: [
    graph('Time to first byte', 'Percentiles of the time to first byte of successful checks over the selected websites, from the check histograms.', 's', [
      { expr: quantile(0.5, 'monapi_website_check_ttfb_seconds'), legend: 'p50' },
      { expr: quantile(0.95, 'monapi_website_check_ttfb_seconds'), legend: 'p95' },
      { expr: quantile(0.99, 'monapi_website_check_ttfb_seconds'), legend: 'p99' },
    ], { w: 12, min: 0 }),
    graph('Time to first byte by website, p95', '95th percentile of the time to first byte of each website, from the check histograms.', 's', [
      { expr: quantile(0.95, 'monapi_website_check_ttfb_seconds', 'account, website'), legend: SITE_LEGEND },
    ], { w: 12, min: 0 }),
    graph('DNS lookup and TLS handshake, p95', '95th percentiles of the DNS lookup and TLS handshake times of successful checks.', 's', [
      { expr: quantile(0.95, 'monapi_website_check_dns_lookup_seconds'), legend: 'DNS lookup' },
      { expr: quantile(0.95, 'monapi_website_check_tls_handshake_seconds'), legend: 'TLS handshake' },
    ], { w: 12, min: 0 }),
    perSite('Time to first byte, last 24 hours, p95', 'As upstream computes it over 24 hours.', 's', `monapi_website_ttfb_24h_p95_seconds{${W}}`, {
      w: 12,
      steps: [
        [null, 'green'],
        [0.8, 'orange'],
        [2, 'red'],
      ],
    }),
  ],
};

const responses: RowSpec = {
  title: 'Responses',
  panels: [
    {
      kind: 'table',
      title: 'Status code of the latest check',
      description: 'HTTP status of each website\'s latest upstream check; 0 when it got no answer.',
      unit: 'none',
      w: 8,
      h: 8,
      steps: [
        [null, 'red'],
        [200, 'green'],
        [400, 'red'],
      ],
      queries: [{ expr: `monapi_website_last_status_code{${W}}` }],
      transformations: [
        { id: 'organize', options: { excludeByName: { Time: true, __name__: true, job: true, instance: true, website_id: true }, renameByName: { account: 'Account', website: 'Website', Value: 'Status' } } },
      ],
      overrides: [{ name: 'Status', properties: [{ id: 'custom.cellOptions', value: { type: 'color-text' } }] }],
    },
    graph('Status code over time', 'HTTP status of the newest check of each website; 0 when it got no answer.', 'none', [
      { expr: `monapi_website_check_status_code{${W}}`, legend: SITE_LEGEND },
    ], { w: 8, decimals: 0 }),
    graph('CDN cache status', 'Checks per second by the CDN cache status they reported.', 'ops', [
      { expr: `sum by (cache_status) (rate(monapi_website_cdn_cache_checks_total{${W}}${RATE}))`, legend: '{{cache_status}}' },
    ], { stack: true, w: 8, min: 0 }),
  ],
};

const security: RowSpec = {
  title: 'TLS and security',
  panels: [
    perSite('Certificate expires in', 'Time until the TLS certificate found by the newest check expires.', 's', `monapi_website_cert_expiry_timestamp_seconds{${W}} - time()`, {
      steps: [
        [null, 'red'],
        [3 * DAY, 'orange'],
        [14 * DAY, 'green'],
      ],
    }),
    {
      kind: 'table',
      title: 'Security headers',
      description: 'Security headers the newest check found, per website.',
      unit: 'none',
      w: 10,
      h: 8,
      queries: [{ expr: `monapi_website_security_header{${W}}` }],
      mappings: [upDownMapping('present', 'missing')],
      steps: [
        [null, 'red'],
        [1, 'green'],
      ],
      transformations: [{ id: 'groupingToMatrix', options: { columnField: 'header', rowField: 'website', valueField: 'Value' } }],
      colorText: true,
    },
    perSite('Security score', 'Upstream security score of the newest check.', 'percentunit', `monapi_website_security_score_ratio{${W}}`, {
      w: 6,
      min: 0,
      max: 1,
      steps: [
        [null, 'red'],
        [0.5, 'orange'],
        [0.8, 'green'],
      ],
    }),
    {
      kind: 'table',
      title: 'TLS and HTTP versions',
      description: 'TLS and HTTP version of each website\'s newest check.',
      unit: 'none',
      w: 12,
      h: 6,
      queries: [{ expr: `monapi_website_tls_info{${W}}` }],
      transformations: [
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true, __name__: true, job: true, instance: true, website_id: true, Value: true },
            renameByName: { account: 'Account', website: 'Website', tls_version: 'TLS', http_version: 'HTTP' },
          },
        },
      ],
    },
    {
      kind: 'table',
      title: 'Websites',
      description: 'The monitored URLs and how often upstream checks them.',
      unit: 's',
      w: 12,
      h: 6,
      queries: [{ expr: `monapi_website_check_interval_seconds{${W}} * on(account, website_id) group_left(url) monapi_website_info{${W}}` }],
      transformations: [
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true, __name__: true, job: true, instance: true, website_id: true },
            renameByName: { account: 'Account', website: 'Website', url: 'URL', Value: 'Check interval' },
          },
        },
      ],
    },
  ],
};

export function websitesDashboard(): Dashboard {
  return board({
    uid: 'monapi-websites',
    title: 'Monapi / Websites',
    description: 'Uptime, time to first byte, status codes, certificates and security headers of the websites the Monitoring API checks.',
    variables: [queryVariable('website', 'Website', `label_values(monapi_website_info{${SCOPE}, account=~"$account"}, website)`)],
    // Checks run once a minute at most, and /websites is polled once a minute.
    minInterval: '1m',
    rows: [availability, speed, responses, security],
  });
}
