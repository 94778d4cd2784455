import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { board, graph, SCOPE, upDownMapping, valueMapping, type RowSpec } from './common.js';

/**
 * Monapi / Exporter health: what the exporter spends of each API key's budget, how fresh
 * its data is, what fails, and the process itself. The per-source error panels are in
 * the "Errors" row: adjust there when the sources gain families of their own.
 */

const A = `${SCOPE}, account=~"$account"`;
/** The process panels: per exporter process, which SCOPE's instance variable picks. */
const I = SCOPE;
const RATE = '[$__rate_interval]';

const budget: RowSpec = {
  title: 'Request budget',
  panels: [
    graph('Requests sent and allowed', 'Upstream requests started per second (retries included) against the rate the budget allows now.', 'reqps', [
      { expr: `sum by (account) (rate(monapi_budget_attempts_total{${A}}${RATE}))`, legend: '{{account}} sent' },
      { expr: `sum by (account) (monapi_budget_effective_requests_per_second{${A}})`, legend: '{{account}} allowed' },
    ], { min: 0 }),
    {
      kind: 'bargauge',
      title: 'Budget asked for by the cadences',
      description: 'Requests per second the configured cadences need, as a share of the budget. Above 100 %, cadences are stretched to fit.',
      unit: 'percentunit',
      w: 8,
      h: 8,
      min: 0,
      max: 1.5,
      steps: [
        [null, 'green'],
        [0.8, 'orange'],
        [1, 'red'],
      ],
      queries: [{ expr: `monapi_plan_demand_requests_per_second{${A}} / on(account) monapi_plan_budget_requests_per_second{${A}}`, legend: '{{account}}' }],
    },
    graph('429 answers', 'Rate-limited (429) answers per second. The exporter stays inside the budget on its own; steady 429s mean something else spends the same key.', 'reqps', [
      { expr: `sum by (account) (rate(monapi_upstream_rate_limited_total{${A}}${RATE}))`, legend: '{{account}}' },
    ], { min: 0 }),
    {
      kind: 'statetimeline',
      title: 'Paused after a 429',
      description: 'Whether the API key waits out a 429 (Retry-After) before sending again.',
      unit: 'none',
      w: 8,
      h: 6,
      mappings: [valueMapping({ 0: ['sending', 'green'], 1: ['paused', 'orange'] })],
      steps: [
        [null, 'green'],
        [1, 'orange'],
      ],
      queries: [{ expr: `monapi_budget_paused{${A}}`, legend: '{{account}}' }],
    },
    graph('Queued requests', 'Requests waiting for a token or a concurrency slot, by priority.', 'short', [
      { expr: `sum by (priority) (monapi_budget_queued_requests{${A}})`, legend: '{{priority}}' },
    ], { stack: true, min: 0, h: 6 }),
    graph('Tokens', 'Tokens left in each API key\'s bucket, against its burst.', 'short', [
      { expr: `monapi_budget_tokens{${A}}`, legend: '{{account}} tokens' },
      { expr: `monapi_budget_burst{${A}}`, legend: '{{account}} burst' },
    ], { min: 0, h: 6 }),
  ],
};

const polling: RowSpec = {
  title: 'Polling',
  panels: [
    graph('Full polling cycle', 'Time one run of every polling job takes at the budget rate: the best possible staleness.', 's', [
      { expr: `monapi_plan_full_cycle_seconds{${A}}`, legend: '{{account}}' },
    ], { min: 0 }),
    graph('Data age per source', 'Age of the oldest data of each source: time since its least recently refreshed target last succeeded.', 's', [
      { expr: `max by (account, source) (monapi_job_staleness_seconds{${A}})`, legend: '{{account}} / {{source}}' },
    ], { min: 0 }),
    graph('Scheduler lag', 'How far behind its cadence the most overdue polling job is.', 's', [{ expr: `monapi_scheduler_lag_seconds{${A}}`, legend: '{{account}}' }], { min: 0 }),
    {
      kind: 'table',
      title: 'Cadence per source',
      description: 'Cadence of each source: configured, and effective after stretching to fit the request budget.',
      unit: 's',
      w: 12,
      h: 8,
      queries: [{ expr: `monapi_plan_cadence_seconds{${A}}` }],
      transformations: [
        { id: 'organize', options: { excludeByName: { Time: true, __name__: true, job: true, instance: true }, renameByName: { account: 'Account', source: 'Source', cadence: 'Cadence', Value: 'Seconds' } } },
      ],
    },
    graph('Job duration, p95', '95th percentile of the time a polling job takes, waiting for the budget included, by source.', 's', [
      { expr: `histogram_quantile(0.95, sum by (le, source) (rate(monapi_job_duration_seconds_bucket{${A}}${RATE})))`, legend: '{{source}}' },
    ], { w: 12, min: 0 }),
  ],
};

const errors: RowSpec = {
  title: 'Errors',
  panels: [
    {
      kind: 'statetimeline',
      title: 'Accounts answering',
      description: 'Whether each account\'s Monitoring API answers (monapi_up); the reason is the one of monapi_up_reason at 1, and on the exporter\'s /status page.',
      unit: 'none',
      w: 8,
      h: 8,
      mappings: [upDownMapping()],
      steps: [
        [null, 'red'],
        [1, 'green'],
      ],
      queries: [{ expr: `min by (account) (monapi_up{${A}})`, legend: '{{account}}' }],
    },
    graph('Failed polling jobs', 'Polling job runs that failed, per second, by source (0 while none fail).', 'ops', [
      {
        expr: `sum by (account, source) (rate(monapi_job_runs_total{${A}, outcome="error"}${RATE}) or 0 * rate(monapi_job_runs_total{${A}}${RATE}))`,
        legend: '{{account}} / {{source}}',
      },
    ], { min: 0 }),
    graph('Upstream answers by status', 'Upstream answers per second by HTTP status (or timeout, network, aborted).', 'reqps', [
      { expr: `sum by (code) (rate(monapi_upstream_requests_total{${A}}${RATE}))`, legend: '{{code}}' },
    ], { stack: true, min: 0 }),
    graph('Items dropped by the decoder', 'Items of upstream answers the decoder could not use (the rest of the answer was kept), per second, by endpoint and reason.', 'ops', [
      { expr: `sum by (account, endpoint, reason) (rate(monapi_decode_dropped_items_total{${A}}${RATE}))`, legend: '{{account}} {{endpoint}} {{reason}}' },
    ], { min: 0 }),
    {
      kind: 'statetimeline',
      title: 'Sources working',
      description: 'Whether each source\'s last run worked for every target (monapi_source_up); the reason is the one of monapi_source_up_reason at 1, and on the exporter\'s /status page.',
      unit: 'none',
      w: 8,
      h: 8,
      mappings: [upDownMapping('working', 'failing')],
      steps: [
        [null, 'red'],
        [1, 'green'],
      ],
      queries: [{ expr: `min by (account, source) (monapi_source_up{${A}})`, legend: '{{account}} / {{source}}' }],
    },
    graph('Upstream request time, p95', '95th percentile of the time from sending an upstream request to its whole answer, by endpoint.', 's', [
      { expr: `histogram_quantile(0.95, sum by (le, endpoint) (rate(monapi_upstream_request_duration_seconds_bucket{${A}}${RATE})))`, legend: '{{endpoint}}' },
    ], { min: 0 }),
    graph('Release lookups', 'Release lookups per second, by outcome.', 'ops', [
      { expr: `sum by (outcome) (rate(monapi_release_lookups_total{${SCOPE}}${RATE}))`, legend: '{{outcome}}' },
    ], { stack: true, min: 0 }),
  ],
};

const process: RowSpec = {
  title: 'Process',
  panels: [
    graph('Resident memory', 'Resident memory of each exporter process.', 'bytes', [{ expr: `monapi_exporter_process_resident_memory_bytes{${I}}`, legend: '{{instance}}' }], { min: 0 }),
    graph('CPU', 'CPU time used per second (1 = one core).', 'percentunit', [
      { expr: `rate(monapi_exporter_process_cpu_seconds_total{${I}}${RATE})`, legend: '{{instance}}' },
    ], { min: 0 }),
    graph('Event loop lag, p99', '99th percentile of the Node.js event loop delay.', 's', [
      { expr: `monapi_exporter_nodejs_eventloop_lag_p99_seconds{${I}}`, legend: '{{instance}}' },
    ], { min: 0 }),
    graph('Scrape time, p95', '95th percentile of the time to answer a scrape of /metrics.', 's', [
      { expr: `histogram_quantile(0.95, sum by (le, instance) (rate(monapi_exporter_scrape_duration_seconds_bucket{${I}}${RATE})))`, legend: '{{instance}}' },
    ], { min: 0 }),
    graph('Series exposed', 'Exposition lines of published data, self-metrics excluded.', 'short', [{ expr: `monapi_exporter_series{${I}}`, legend: '{{instance}}' }], { min: 0 }),
    {
      kind: 'table',
      title: 'Exporters',
      description: 'Each exporter process: version, and which shard of how many it is.',
      unit: 'none',
      w: 8,
      h: 8,
      queries: [
        { expr: `max by (instance, version, nodejs_version) (monapi_exporter_build_info{${I}})` },
        { expr: `max by (instance) (monapi_exporter_shard_ordinal{${I}})` },
        { expr: `max by (instance) (monapi_exporter_total_shards{${I}})` },
      ],
      transformations: [
        { id: 'merge', options: {} },
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true, 'Value #A': true },
            renameByName: { instance: 'Instance', version: 'Version', nodejs_version: 'Node.js', 'Value #B': 'Shard', 'Value #C': 'Of shards' },
          },
        },
      ],
    },
  ],
};

export function exporterDashboard(): Dashboard {
  return board({
    uid: 'monapi-exporter',
    title: 'Monapi / Exporter health',
    description: 'The exporter itself: request budget, 429s, polling cycle, data freshness per source, errors, process.',
    variables: [],
    rows: [budget, polling, errors, process],
  });
}
