import { stringify } from 'yaml';
import { promDuration, type MixinConfig } from './config.js';

/**
 * The alert rules, as data. `renderRules` turns them into a Prometheus rules file; the
 * checked-in `alerts/monapi-exporter.rules.yaml` and the Helm chart's copy are its output
 * with DEFAULT_CONFIG (`npm run mixin`). Every alert has a section in docs/runbooks.md
 * and promtool unit tests in alerts/monapi-exporter.rules.test.yaml. Summaries are static
 * (mixtool's convention: one line that groups well in a notification); the labels and value
 * of an alert are in its description (test/mixin/conventions.test.ts).
 *
 * Alerts keep one series per thing they are about: `monapi_up` and `monapi_source_up` have
 * one series per account and source, and a reason is read from `monapi_up_reason` /
 * `monapi_source_up_reason`, whose series always exist (1 for the current reason), and
 * never becomes an alert label, so a new reason does not restart the `for:` timer or
 * resolve and re-fire. The `max by`/`min by` keep the alerts about the account (or source)
 * alone when two Prometheus jobs or instances scrape one exporter.
 */

export type Severity = 'critical' | 'warning' | 'info';

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  /** Seconds. */
  readonly for: number;
  readonly severity: Severity;
  readonly summary: string;
  readonly description: string;
}

export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly AlertRule[];
}

/** The heading of an alert's section in docs/runbooks.md, as GitHub makes its anchor. */
export function runbookAnchor(alert: string): string {
  return alert.toLowerCase();
}

const EXPORTER_DASHBOARD = 'the "Monapi / Exporter health" dashboard';

export function alertGroups(config: MixinConfig): RuleGroup[] {
  const f = config.for;
  const t = config.thresholds;
  const shardBy = config.shardGroupLabels.join(', ');
  const deployment = deploymentText(config.shardGroupLabels);

  const estate: AlertRule[] = [
    {
      alert: 'MonapiHostOffline',
      expr: `(monapi_host_online == 0)
  * on(account, host_uuid) group_left(hostname) monapi_host_info
  unless on(account, host_uuid) (monapi_host_allowed == 0)`,
      for: f.hostOffline,
      severity: 'warning',
      summary: 'A host is offline.',
      description:
        'The monitoring agent of host {{ $labels.hostname }} ({{ $labels.host_uuid }}, account {{ $labels.account }}) has not reported to the Monitoring API for more than 3 minutes. ' +
        'Either the host is down or its agent stopped sending; its metrics are missing meanwhile.',
    },
    {
      alert: 'MonapiWebsiteDown',
      expr: `monapi_website_up == 0
  unless on(account, website_id) (monapi_website_enabled == 0)`,
      for: f.websiteDown,
      severity: 'critical',
      summary: 'A website is down.',
      description:
        'The upstream checks of website {{ $labels.website }} (id {{ $labels.website_id }}, account {{ $labels.account }}) have failed for ' +
        `${promDuration(f.websiteDown)}: its latest check got an error status or no answer.`,
    },
    ...(
      [
        ['warning', t.certificateWarningDays],
        ['critical', t.certificateCriticalDays],
      ] as const
    ).map(
      ([severity, days]): AlertRule => ({
        alert: 'MonapiCertificateExpiring',
        expr: `(monapi_website_cert_expiry_timestamp_seconds - time()) / 86400 < ${days}
  unless on(account, website_id) (monapi_website_enabled == 0)`,
        for: f.certificateExpiring,
        severity,
        summary: `A website's TLS certificate expires in less than ${days} days.`,
        description:
          'The TLS certificate of website {{ $labels.website }} (id {{ $labels.website_id }}, account {{ $labels.account }}) expires in {{ printf "%.1f" $value }} days ' +
          '({{ if eq $labels.basis "estimate" }}reckoned to the day from the newest upstream check{{ else }}as upstream states it{{ end }}). Renew it before browsers refuse the site.',
      }),
    ),
  ];

  const upstream: AlertRule[] = [
    {
      alert: 'MonapiUpstreamUnreachable',
      expr: `min by (account) (monapi_up) == 0
  unless on(account) (max by (account) (monapi_up_reason{reason=~"unauthorized|plan_required"}) == 1)`,
      for: f.upstreamUnreachable,
      severity: 'warning',
      summary: 'The Monitoring API does not answer for an account.',
      description:
        `Requests of account {{ $labels.account }} have failed (timeouts, network errors, 5xx) for ${promDuration(f.upstreamUnreachable)}, ` +
        'or the account has not had a first answer yet. Its metrics are frozen at their last values; see the account\'s last errors on the exporter\'s /status page.',
    },
    {
      alert: 'MonapiUpstreamUnauthorized',
      expr: `max by (account) (monapi_up_reason{reason="unauthorized"}) == 1`,
      for: f.upstreamAuth,
      severity: 'critical',
      summary: 'The Monitoring API refuses an account\'s API key.',
      description:
        'The Monitoring API answered 401 to account {{ $labels.account }}: its API key is wrong, revoked or expired. The exporter polls nothing for this account until the key is replaced.',
    },
    {
      alert: 'MonapiUpstreamPlanRequired',
      expr: `max by (account) (monapi_up_reason{reason="plan_required"}) == 1`,
      for: f.upstreamAuth,
      severity: 'critical',
      summary: 'An account\'s plan does not include the Monitoring API.',
      description:
        'The Monitoring API answered 403 plan_required to account {{ $labels.account }}: the API needs the Pro plan or higher. The exporter polls nothing for this account until the plan is upgraded.',
    },
    {
      alert: 'MonapiRateLimited',
      expr: `sum by (account) (increase(monapi_upstream_rate_limited_total[${promDuration(config.windows.rateLimited)}])) > 0`,
      for: f.rateLimited,
      severity: 'warning',
      summary: 'The upstream keeps rate-limiting an account.',
      description:
        `Account {{ $labels.account }} got {{ $value | humanize }} 429 answers in the last ${promDuration(config.windows.rateLimited)}, and has kept getting them for ` +
        `${promDuration(f.rateLimited)}. The exporter stays inside its budget on its own, so something else is spending the same API key: another exporter or replica, or another tool.`,
    },
    {
      alert: 'MonapiBudgetTooSmall',
      expr: `max by (account) (monapi_plan_demand_requests_per_second)
  / max by (account) (monapi_plan_budget_requests_per_second)
  > 1`,
      for: f.budgetTooSmall,
      severity: 'info',
      summary: 'An account\'s configured cadences need more requests than its budget allows.',
      description:
        'The cadences configured for account {{ $labels.account }} ask for {{ $value | humanizePercentage }} of the request budget. The exporter stretches them to fit: ' +
        'data arrives less often than configured (monapi_plan_cadence_seconds{cadence="effective"}).',
    },
    {
      alert: 'MonapiHostsBeyondPlanLimit',
      expr: `sum by (account) (monapi_hosts{state="not_allowed"}) > 0`,
      for: f.hostsBeyondPlanLimit,
      severity: 'info',
      summary: 'An account has hosts beyond its plan\'s host limit.',
      description:
        '{{ $value }} host(s) of account {{ $labels.account }} are beyond the plan\'s host limit: the Monitoring API collects no metrics for them, so they have no data.',
    },
  ];

  const exporter: AlertRule[] = [
    {
      alert: 'MonapiSourceFailing',
      expr: `min by (account, source) (monapi_source_up) == 0
  unless on(account) (min by (account) (monapi_up) == 0)`,
      for: f.sourceFailing,
      severity: 'warning',
      summary: 'A source of an account keeps failing.',
      description:
        `Runs of source {{ $labels.source }} (account {{ $labels.account }}) have failed for ${promDuration(f.sourceFailing)} while the account itself answers: ` +
        'its series keep their last values. The reason is the one of monapi_source_up_reason at 1, the failing targets are on the exporter\'s /status page; docs/troubleshooting.md says what each reason means.',
    },
    {
      alert: 'MonapiListIncomplete',
      expr: 'max by (account, source) (monapi_list_incomplete) > 0',
      for: f.sourceFailing,
      severity: 'warning',
      summary: 'A list the exporter polls is read short.',
      description:
        `A list of source {{ $labels.source }} (account {{ $labels.account }}) has been read short for ${promDuration(f.sourceFailing)}: the upstream announced more pages or items than the exporter could read (the page cap, a failed page, a link to another host). What was read is exported, the rest is missing; the reason is in the source's list on the exporter's /status page.`,
    },
    {
      alert: 'MonapiDataStale',
      expr: `max by (account, source) (monapi_job_staleness_seconds)
  > on(account, source)
  clamp_min(${t.staleCadences} * max by (account, source) (monapi_plan_cadence_seconds{cadence="effective"}), ${t.staleFloorSeconds})`,
      for: f.dataStale,
      severity: 'warning',
      summary: 'The data of a source is stale.',
      description:
        'The oldest data of source {{ $labels.source }} (account {{ $labels.account }}) is {{ $value | humanizeDuration }} old, ' +
        `more than ${t.staleCadences} times the source's effective cadence and more than ${promDuration(t.staleFloorSeconds)}: its polls keep failing or do not run. ` +
        `See ${EXPORTER_DASHBOARD} and the exporter's /status page.`,
    },
    {
      alert: 'MonapiReleaseLookupFailing',
      expr: `monapi_release_lookup_success == 0`,
      for: f.releaseLookupFailing,
      severity: 'warning',
      summary: 'A release lookup keeps failing.',
      description:
        'The Release Lookup API has not answered the lookup of project {{ $labels.project }} (major line "{{ $labels.major }}") successfully for ' +
        `${promDuration(f.releaseLookupFailing)}. The last known release stays on display.`,
    },
    {
      alert: 'MonapiShardingMismatch',
      expr: `stdvar by (${shardBy}) (monapi_exporter_total_shards) != 0
or
max by (${shardBy}) (count_values by (${shardBy}) ("shard", monapi_exporter_shard_ordinal)) > 1`,
      for: f.sharding,
      severity: 'critical',
      summary: 'The exporters of a sharded deployment disagree on their shards.',
      description:
        `The exporters of ${deployment} report different total shard counts, or two of them claim the same shard. ` +
        'Some accounts are then polled twice (spending their API key\'s budget twice) or not at all.',
    },
    {
      alert: 'MonapiShardsMissing',
      expr: `max by (${shardBy}) (monapi_exporter_total_shards)
  - count by (${shardBy}) (count_values by (${shardBy}) ("shard", monapi_exporter_shard_ordinal))
  > 0`,
      for: f.sharding,
      severity: 'critical',
      summary: 'Shards of a sharded deployment are missing.',
      description:
        `{{ $value }} shard(s) of ${deployment} are missing: fewer exporters report than their total shard count says, so the accounts of the missing shards are not polled.`,
    },
    {
      // One rule, not two: promtool refuses two rules of one name with the same labels.
      alert: 'MonapiExporterDown',
      expr: `up{${config.exporterSelector}} == 0
or
absent(up{${config.exporterSelector}})`,
      for: f.exporterDown,
      severity: 'critical',
      summary: 'Prometheus cannot scrape the exporter, or has no target of it.',
      description:
        '{{ if $labels.instance }}Scrapes of {{ $labels.instance }} (job {{ $labels.job }}{{ with $labels.pod }}, pod {{ . }}{{ with $labels.namespace }} in namespace {{ . }}{{ end }}{{ end }}) ' +
        `have failed for ${promDuration(f.exporterDown)}: the exporter is down or crash-looping, or Prometheus cannot reach it (network policy, TLS or basic auth of the scrape).` +
        `{{ else }}Prometheus has had no target of job {{ $labels.job }} for ${promDuration(f.exporterDown)}: the exporter is not deployed, ` +
        'or its ServiceMonitor or scrape config is not picked up.{{ end }} Its accounts\' data is missing meanwhile, and the other alerts about them cannot fire.',
    },
  ];

  return [
    { name: 'monapi-exporter.estate', rules: estate },
    { name: 'monapi-exporter.upstream', rules: upstream },
    { name: 'monapi-exporter.exporter', rules: exporter },
  ];
}

/**
 * Names one exporter deployment in an annotation by the labels that group it, leaving out
 * those the series lack: "job monapi-exporter, namespace team-a, service monapi".
 */
function deploymentText(labels: readonly string[]): string {
  const [first, ...rest] = labels.includes('job') ? ['job', ...labels.filter((l) => l !== 'job')] : labels;
  if (first === undefined) throw new RangeError('shardGroupLabels needs at least one label');
  return `${first} {{ $labels.${first} }}${rest.map((label) => `{{ with $labels.${label} }}, ${label} {{ . }}{{ end }}`).join('')}`;
}

/** Distinct alert names, in rule order. */
export function alertNames(groups: readonly RuleGroup[]): string[] {
  return [...new Set(groups.flatMap((g) => g.rules.map((r) => r.alert)))];
}

/** A Prometheus rules file ("groups: [...]"), as `promtool check rules` and the PrometheusRule CRD take it. */
export function renderRules(config: MixinConfig): string {
  const groups = alertGroups(config).map((group) => ({
    name: group.name,
    rules: group.rules.map((rule) => ({
      alert: rule.alert,
      expr: rule.expr,
      for: promDuration(rule.for),
      labels: { severity: rule.severity },
      annotations: {
        summary: rule.summary,
        description: rule.description,
        runbook_url: `${config.runbookBaseUrl}#${runbookAnchor(rule.alert)}`,
      },
    })),
  }));
  return `# Generated by npm run mixin from mixin/alerts.ts; do not edit.\n${stringify({ groups }, { lineWidth: 0 })}`;
}
