import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/exporter/config.js';
import { startExporter, type RunningExporter } from '../../src/exporter/index.js';
import { THIRD_KEY, THIRD_TRUTH, startThirdUpstream, type Served, type ThirdUpstream, type ThirdVariant, type TruthWebsite } from '../support/third-upstream.js';

/**
 * The exporter against a third Monitoring API, written by an outside tester from the API
 * document alone (test/support/third-upstream.ts), in three sets of layouts (`a`, `b`, `c`)
 * where the document says "not shown": JSON:API, key/value pairs, a list of quotas, HAL,
 * RFC 8288 Link headers, Better Stack's `pagination.next`, a next page number, cursors
 * (standard base64 that must be percent-encoded, and Slack's `""` on the last page),
 * envelopes, lists grouped by category, uptime as a list of windows, as UptimeRobot's
 * dash-joined string or as an SLA object, a paused site, `status` as words or numbers,
 * ISO 8601 and relative-window durations, rules as Datadog-style queries, a catalogue page on
 * another origin (a, b) or on the same one (c).
 *
 * For every resource each exported value is compared with what the server holds (TRUTH) and
 * judged: READ (equal), VISIBLY FAILED (not equal, and the exporter says so: the source down
 * with a reason, `monapi_decode_field_missing 1`, or `monapi_list_incomplete` above 0, each
 * also in /status), or SILENTLY WRONG (not equal and nothing says so). A resource is as bad as
 * its worst value. Silently wrong is a defect of the exporter: such a part is an `it.fails`
 * naming the defect, so that it stays visible and the mark must go when it is fixed.
 */

const A = 'third';

// ---------------------------------------------------------------------------------------------
// /metrics and /status

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(body: string): Sample[] {
  const out: Sample[] = [];
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1] ?? ''] = (l[2] ?? '').replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    out.push({ name: m[1] ?? '', labels, value: Number(m[3]) });
  }
  return out;
}

type Match = Record<string, string | RegExp>;

interface StatusSource {
  source: string;
  up?: boolean;
  fields?: { missing?: string[]; found?: Record<string, { path?: string }> };
  list?: { incomplete?: number; example?: { reason?: string } };
}

class Scrape {
  readonly samples: Sample[];
  constructor(
    body: string,
    readonly status: { accounts?: { account: string; sources?: StatusSource[] }[] },
  ) {
    this.samples = parseExposition(body);
  }

  all(name: string, match: Match = {}): Sample[] {
    return this.samples.filter(
      (s) =>
        s.name === name &&
        (s.labels['account'] === undefined || s.labels['account'] === A) &&
        Object.entries(match).every(([k, v]) => (typeof v === 'string' ? s.labels[k] === v : v.test(s.labels[k] ?? ''))),
    );
  }

  /** The value of the one series that matches; undefined when none; NaN when several do (never right). */
  one(name: string, match: Match = {}): number | undefined {
    const found = this.all(name, match);
    if (found.length === 0) return undefined;
    return found.length === 1 ? found[0]?.value : Number.NaN;
  }

  statusSource(source: string): StatusSource | undefined {
    return this.status.accounts?.find((a) => a.account === A)?.sources?.find((s) => s.source === source);
  }

  /** `monapi_decode_field_missing 1`, and /status lists the field as missing. */
  fieldMissing(source: string, field: string): boolean {
    return this.one('monapi_decode_field_missing', { source, field }) === 1 && (this.statusSource(source)?.fields?.missing ?? []).includes(field);
  }

  /** `monapi_list_incomplete` above 0, and /status gives the reason. */
  listIncomplete(source: string): boolean {
    const list = this.statusSource(source)?.list;
    return (this.one('monapi_list_incomplete', { source }) ?? 0) > 0 && (list?.incomplete ?? 0) > 0 && (list?.example?.reason ?? '') !== '';
  }

  /** `monapi_source_up 0` with a reason (a label of its own, or `monapi_source_up_reason`), and /status says down. */
  sourceDown(source: string): boolean {
    const up = this.all('monapi_source_up', { source });
    if (up.length === 0 || up.every((s) => s.value !== 0)) return false;
    const reason = up.find((s) => s.value === 0)?.labels['reason'] ?? this.all('monapi_source_up_reason', { source }).find((s) => s.value === 1)?.labels['reason'] ?? '';
    return reason !== '' && this.statusSource(source)?.up === false;
  }
}

// ---------------------------------------------------------------------------------------------
// Judging

type Verdict = 'read' | 'visibly failed' | 'silently wrong';
type Signal = { field: [string, string] } | { list: string } | { source: string };

interface Finding {
  what: string;
  expected: number | undefined;
  actual: number | undefined;
  verdict: Verdict;
  signal?: string;
}

const equal = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

class Judge {
  readonly findings: Finding[] = [];
  constructor(readonly scrape: Scrape) {}

  /** `alsoRight`: other values that are as true (a paused site's `up` may be left out). */
  check(what: string, expected: number | undefined, actual: number | undefined, signals: Signal[], alsoRight: (number | undefined)[] = []): void {
    if (equal(actual, expected) || alsoRight.some((x) => equal(actual, x))) {
      this.findings.push({ what, expected, actual, verdict: 'read' });
      return;
    }
    for (const s of signals) {
      const said =
        'field' in s
          ? this.scrape.fieldMissing(...s.field) && `monapi_decode_field_missing{source="${s.field[0]}",field="${s.field[1]}"} 1`
          : 'list' in s
            ? this.scrape.listIncomplete(s.list) && `monapi_list_incomplete{source="${s.list}"} > 0`
            : this.scrape.sourceDown(s.source) && `monapi_source_up{source="${s.source}"} 0`;
      if (said) {
        this.findings.push({ what, expected, actual, verdict: 'visibly failed', signal: said });
        return;
      }
    }
    // The source down says every value of it may be missing.
    this.findings.push({ what, expected, actual, verdict: 'silently wrong' });
  }

  verdict(): Verdict {
    const v = this.findings.map((f) => f.verdict);
    return v.includes('silently wrong') ? 'silently wrong' : v.includes('visibly failed') ? 'visibly failed' : 'read';
  }

  wrong(): string[] {
    return this.findings.filter((f) => f.verdict === 'silently wrong').map((f) => `${f.what}: expected ${f.expected}, got ${f.actual}`);
  }
}

/** What each part found, per variant: printed as the per-resource table at the end. */
const table: { variant: ThirdVariant; part: string; verdict: Verdict; counts: Record<Verdict, number>; notes: string[] }[] = [];

afterAll(() => {
  const lines = ['| variant | resource | read right | visibly failed | silently wrong | verdict | what failed or was wrong |', '|---|---|---|---|---|---|---|'];
  for (const r of table) lines.push(`| ${r.variant} | ${r.part} | ${r.counts.read} | ${r.counts['visibly failed']} | ${r.counts['silently wrong']} | ${r.verdict} | ${r.notes.join('; ')} |`);
  console.log(lines.join('\n'));
});

// ---------------------------------------------------------------------------------------------
// The parts, resource by resource

interface Run {
  variant: ThirdVariant;
  upstream: ThirdUpstream;
  scrape: Scrape;
  /** What the server had served when /metrics was read: one polling pass. */
  served: Served[];
}

const sec = (ms: number) => Math.floor(ms / 1000);
const f = (source: string, field: string): Signal => ({ field: [source, field] });
const present = (v: number | undefined) => (v === undefined ? undefined : 1);
const checksOf = (w: TruthWebsite) => w.checks.at(-1) ?? { id: 0, agoMs: 0, success: false, statusCode: 0, ttfbMs: 0 };
const requested = (run: Run, re: RegExp) => run.served.filter((s) => s.origin === 'main' && re.test(s.target)).length;

/** The exported family of each agent metric the server offers, and the factor of its unit. */
const FAMILY: Record<string, { name: string; labels?: Match; factor: number }> = {
  'system.cpu.user': { name: 'monapi_system_cpu_time_ratio', labels: { mode: 'user' }, factor: 0.01 },
  'system.load.1': { name: 'monapi_system_load1', factor: 1 },
  'system.mem.total': { name: 'monapi_system_memory_total_bytes', factor: 1 },
  'nginx.workers.count': { name: 'monapi_nginx_workers', factor: 1 },
  'mysql.global.threads_connected': { name: 'monapi_mysql_global_status_threads_connected', factor: 1 },
};

type Part = (run: Run, j: Judge) => void;

const PARTS: Record<string, Part> = {
  account: ({ scrape: s }, j) => {
    const t = THIRD_TRUTH.account;
    const down: Signal = { source: 'account' };
    j.check('plan', 1, s.one('monapi_account_info', { plan: new RegExp(`^${t.plan}$`, 'i') }), [f('account', 'plan'), down]);
    j.check('host limit', t.hostLimit, s.one('monapi_account_host_limit'), [f('account', 'host_limit'), down]);
    j.check('website limit', t.websiteLimit, s.one('monapi_account_website_limit'), [f('account', 'website_limit'), down]);
    j.check('retention', t.retentionDays * 86_400, s.one('monapi_account_retention_seconds'), [f('account', 'retention'), down]);
    j.check('hosts used', t.usageHosts, s.one('monapi_account_hosts'), [f('account', 'hosts_used'), down]);
    j.check('websites used', t.usageWebsites, s.one('monapi_account_websites'), [f('account', 'websites_used'), down]);
    j.check('rate limit /s', t.ratePerMinute / 60, s.one('monapi_account_rate_limit_requests_per_second'), [f('account', 'rate_limit'), down]);
    j.check('burst', t.burst, s.one('monapi_account_rate_limit_burst'), [f('account', 'burst'), down]);
  },

  hosts: ({ scrape: s, upstream }, j) => {
    const list: Signal = { list: 'hosts' };
    const down: Signal = { source: 'hosts' };
    j.check('hosts listed', THIRD_TRUTH.hosts.length, s.all('monapi_host_info').length, [list, down]);
    for (const h of THIRD_TRUTH.hosts) {
      const id = { host_uuid: h.uuid };
      j.check(`${h.hostname} info`, 1, s.one('monapi_host_info', { ...id, hostname: h.hostname, host_type: h.type, agent_version: h.agentVersion }), [list, f('hosts', 'hostname'), f('hosts', 'type'), f('hosts', 'agent_version'), down]);
      j.check(`${h.hostname} online`, h.online ? 1 : 0, s.one('monapi_host_online', id), [list, f('hosts', 'online'), down]);
      j.check(`${h.hostname} allowed`, h.allowed ? 1 : 0, s.one('monapi_host_allowed', id), [list, f('hosts', 'allowed'), down]);
      j.check(`${h.hostname} last seen`, sec(upstream.startedAt - h.lastSeenAgoMs), s.one('monapi_host_last_seen_timestamp_seconds', id), [list, f('hosts', 'last_seen'), down]);
      j.check(`${h.hostname} created`, Date.parse(h.createdAt) / 1000, s.one('monapi_host_created_timestamp_seconds', id), [list, f('hosts', 'created_at'), down]);
      const kinds = s.all('monapi_host_server_kind_info', id).map((x) => x.labels['server_kind']).sort();
      j.check(`${h.hostname} server kinds [${h.serverKinds.join(',')}]`, 1, JSON.stringify(kinds) === JSON.stringify([...h.serverKinds].sort()) ? 1 : 0, [list, f('hosts', 'server_kinds'), down]);
      const tags: Record<string, string> = {};
      for (const tag of h.tags) {
        const [k, ...v] = tag.split(':');
        tags[`tag_${k}`] = v.length === 0 ? 'true' : v.join(':');
      }
      const tagSeries = s.all('monapi_host_tags_info', id);
      const tagLabels = Object.fromEntries(Object.entries(tagSeries[0]?.labels ?? {}).filter(([k]) => k.startsWith('tag_')));
      j.check(`${h.hostname} tags [${h.tags.join(',')}]`, 1, tagSeries.length === 1 && JSON.stringify(Object.entries(tagLabels).sort()) === JSON.stringify(Object.entries(tags).sort()) ? 1 : 0, [list, f('hosts', 'tags'), down]);
    }
    const count = (p: (h: (typeof THIRD_TRUTH.hosts)[number]) => boolean) => THIRD_TRUTH.hosts.filter(p).length;
    j.check('hosts online', count((h) => h.allowed && h.online), s.one('monapi_hosts', { state: 'online' }), [list, down]);
    j.check('hosts offline', count((h) => h.allowed && !h.online), s.one('monapi_hosts', { state: 'offline' }), [list, down]);
    j.check('hosts not allowed', count((h) => !h.allowed), s.one('monapi_hosts', { state: 'not_allowed' }), [list, down]);
  },

  /** The metric catalogue's first pages, read through the series they make the exporter fetch. */
  series: (run, j) => {
    const { scrape: s } = run;
    for (const h of THIRD_TRUTH.hosts) {
      if (!h.allowed) {
        j.check(`${h.hostname} (beyond the plan) asked for nothing`, 0, requested(run, new RegExp(`/hosts/${h.uuid}/(metrics|components)`)), []);
        continue;
      }
      for (const name of h.catalogue[0] ?? []) {
        const fam = FAMILY[name];
        if (fam === undefined) throw new Error(`no family for ${name}`);
        // A silent agent's newest point is hours old: it must not be shown as current.
        const expected = h.online ? (h.values[name] ?? Number.NaN) * fam.factor : undefined;
        j.check(`${h.hostname} ${name}`, expected, s.one(fam.name, { host_uuid: h.uuid, ...fam.labels }), [{ list: 'hosts' }, { source: 'series' }, { source: 'metric_catalogue' }, f('series', 'value')]);
      }
    }
  },

  /** The catalogue page on another origin: never followed, said to be short. */
  /** Layouts a and b: page 2 on another origin, never followed, said to be short. Layout c: on the same origin, read. */
  'metric catalogue page 2': (run, j) => {
    const { scrape: s } = run;
    for (const h of THIRD_TRUTH.hosts) {
      for (const name of h.catalogue.slice(1).flat()) {
        const fam = FAMILY[name];
        if (fam === undefined) throw new Error(`no family for ${name}`);
        const signals: Signal[] = run.variant === 'c' ? [] : [{ list: 'metric_catalogue' }];
        j.check(`${h.hostname} ${name} (catalogue page 2${run.variant === 'c' ? '' : ' on another origin'})`, (h.values[name] ?? Number.NaN) * fam.factor, s.one(fam.name, { host_uuid: h.uuid, ...fam.labels }), signals);
      }
    }
    j.check('requests to the other origin', 0, run.served.filter((x) => x.origin === 'spill').length, []);
  },

  components: (run, j) => components(run, j, false),
  'components: type (the software)': (run, j) => components(run, j, true),

  websites: (run, j) => websiteList(run, j, () => true, ['up', 'enabled']),
  'websites: enabled (paused or not)': (run, j) => websiteList(run, j, () => true, [], ['enabled']),
  'websites: up (the latest check)': (run, j) => websiteList(run, j, () => true, [], ['up']),

  'website summary': (run, j) => websiteSummary(run, j, (w) => w.status === 'active'),
  'website summary of the paused site': (run, j) => websiteSummary(run, j, (w) => w.status === 'paused'),

  checks: (run, j) => {
    const { scrape: s } = run;
    const down: Signal = { source: 'checks' };
    for (const w of THIRD_TRUTH.websites) {
      const id = { website_id: String(w.id), website: w.name };
      if (w.status === 'paused') {
        // Paused: no check can be new; asking costs budget. Allowed only when the list's
        // enabled flag could not be read (and that is said).
        j.check(`${w.name} (paused) checks requests`, 0, requested(run, new RegExp(`/websites/${w.id}/checks`)), [f('websites', 'enabled')]);
        continue;
      }
      const newest = checksOf(w);
      j.check(`${w.name} newest check status`, newest.statusCode, s.one('monapi_website_check_status_code', id), [f('checks', 'status_code'), down]);
      j.check(`${w.name} newest check success`, newest.success ? 1 : 0, s.one('monapi_website_check_success', id), [f('checks', 'success'), down]);
      j.check(`${w.name} newest check time`, sec(run.upstream.startedAt - newest.agoMs), s.one('monapi_website_check_timestamp_seconds', id), [f('checks', 'checked_at'), down]);
      j.check(`${w.name} tls/http version`, 1, s.one('monapi_website_tls_info', { ...id, tls_version: 'TLSv1.3', http_version: 'HTTP/2' }), [f('checks', 'tls_version'), f('checks', 'http_version'), down]);
      j.check(`${w.name} security score`, 0.85, s.one('monapi_website_security_score_ratio', id), [f('checks', 'security_score'), down]);
      j.check(`${w.name} cdn datacenter`, 1, s.one('monapi_website_cdn_info', { ...id, datacenter: 'AMS' }), [f('checks', 'cdn_datacenter'), down]);
      j.check(`${w.name} hsts header`, 1, s.one('monapi_website_security_header', { ...id, header: 'hsts' }), [f('checks', 'has_hsts'), down]);
      j.check(`${w.name} csp header`, 0, s.one('monapi_website_security_header', { ...id, header: 'csp' }), [f('checks', 'has_csp'), down]);
      // The first poll counts nothing (docs/metrics.md): both results at 0.
      j.check(`${w.name} checks counted on the first poll`, 0, (s.one('monapi_website_checks_total', { ...id, result: 'success' }) ?? Number.NaN) + (s.one('monapi_website_checks_total', { ...id, result: 'failure' }) ?? Number.NaN), [down]);
    }
  },

  'alert rules': (run, j) => alertRules(run, j, false),
  'alert rules: metric, operator, threshold': (run, j) => alertRules(run, j, true),

  'alert events': (run, j) => {
    const { scrape: s } = run;
    const down: Signal = { source: 'alerts' };
    for (const type of ['website_down', 'host_alert'] as const) {
      const newest = Math.min(...THIRD_TRUTH.events.filter((e) => e.type === type).map((e) => e.agoMs));
      j.check(`newest ${type}`, sec(run.upstream.startedAt - newest), s.one('monapi_alert_last_event_timestamp_seconds', { event_type: type }), [f('alerts', 'occurred_at'), down]);
    }
    for (const e of THIRD_TRUTH.events) {
      // History is not counted: each source appears at 0.
      j.check(`${e.type} ${e.sourceName} at 0`, 0, s.one('monapi_alert_events_total', { event_type: e.type, source_id: String(e.sourceId), source_name: e.sourceName }), [f('alerts', 'source_id'), f('alerts', 'source_name'), down]);
    }
  },

  'api description': ({ scrape: s }, j) => {
    const t = THIRD_TRUTH.api;
    const down: Signal = { source: 'api_description' };
    j.check('title/version', 1, s.one('monapi_upstream_api_info', { title: t.title, version: t.version, openapi: t.openapi }), [down]);
    j.check('paths', t.paths, s.one('monapi_upstream_api_paths'), [down]);
  },
};

function components({ scrape: s }: Run, j: Judge, typeOnly: boolean): void {
  const list: Signal = { list: 'components' };
  const down: Signal = { source: 'components' };
  const hostsShort: Signal = { list: 'hosts' };
  const truth = THIRD_TRUTH.hosts.filter((h) => h.allowed).flatMap((h) => h.components.map((c) => ({ h, c })));
  if (!typeOnly) j.check('components listed', truth.length, s.all('monapi_component_info').length, [list, hostsShort, down]);
  for (const { h, c } of truth) {
    const id = { host_uuid: h.uuid, component: c.displayName };
    if (typeOnly) {
      // The software: as sent, or the agent's spelling of it (php-fpm: phpfpm); never the
      // category, never with its version glued on.
      const type = new RegExp(`^${c.product.replace('-', '-?')}$`, 'i');
      j.check(`${c.displayName} type ${c.product}`, 1, s.one('monapi_component_info', { ...id, type }), [list, hostsShort, f('components', 'type'), down]);
      continue;
    }
    j.check(`${c.displayName} listed`, 1, present(s.one('monapi_component_info', id)), [list, hostsShort, f('components', 'display_name'), down]);
    j.check(`${c.displayName} version ${c.version}`, 1, s.one('monapi_component_info', { ...id, version: c.version }), [list, hostsShort, f('components', 'version'), down]);
  }
}

function alertRules({ scrape: s }: Run, j: Judge, expressionOnly: boolean): void {
  const list: Signal = { list: 'alert_rules' };
  const down: Signal = { source: 'alert_rules' };
  if (!expressionOnly) j.check('rules listed (every page)', THIRD_TRUTH.rules.length, s.all('monapi_alert_rule_info').length, [list, down]);
  for (const r of THIRD_TRUTH.rules) {
    const id = { rule_id: String(r.id) };
    if (expressionOnly) {
      j.check(`${r.id} metric ${r.metric}, operator ${r.symbol}`, 1, s.one('monapi_alert_rule_info', { ...id, metric: r.metric, operator: r.symbol }), [list, f('alert_rules', 'metric'), f('alert_rules', 'operator'), down]);
      j.check(`${r.id} threshold`, r.exportedThreshold, s.one('monapi_alert_rule_threshold', id), [list, f('alert_rules', 'threshold'), down]);
      continue;
    }
    j.check(`${r.id} name`, 1, present(s.one('monapi_alert_rule_info', { ...id, rule: r.name })), [list, f('alert_rules', 'name'), down]);
    j.check(`${r.id} enabled`, r.enabled ? 1 : 0, s.one('monapi_alert_rule_enabled', id), [list, f('alert_rules', 'enabled'), down]);
    j.check(`${r.id} duration (${r.periodIso})`, r.periodSeconds, s.one('monapi_alert_rule_duration_seconds', id), [list, f('alert_rules', 'duration'), down]);
    j.check(`${r.id} host count`, r.hosts.length, s.one('monapi_alert_rule_hosts', id), [list, f('alert_rules', 'hosts'), down]);
    const scoped = s.all('monapi_alert_rule_host_info', id).map((x) => x.labels['host_uuid']).sort();
    j.check(`${r.id} host scope`, 1, JSON.stringify(scoped) === JSON.stringify([...r.hosts].sort()) ? 1 : 0, [list, f('alert_rules', 'hosts'), down]);
  }
}

function websiteList(run: Run, j: Judge, which: (w: TruthWebsite) => boolean, skip: string[], only?: string[]): void {
  const { scrape: s } = run;
  const list: Signal = { list: 'websites' };
  const down: Signal = { source: 'websites' };
  const want = (field: string) => (only === undefined || only.includes(field)) && !skip.includes(field);
  if (only === undefined) j.check('websites listed (every page)', THIRD_TRUTH.websites.length, s.all('monapi_website_info').length, [list, down]);
  for (const w of THIRD_TRUTH.websites.filter(which)) {
    const id = { website_id: String(w.id), website: w.name };
    const newest = checksOf(w);
    const c = (field: string, what: string, expected: number | undefined, actual: number | undefined, extra: Signal[] = []) => {
      if (want(field)) j.check(`${w.name} ${what}`, expected, actual, [list, f('websites', field), ...extra, down]);
    };
    c('name', 'name/url', 1, s.one('monapi_website_info', { ...id, url: w.url }), [f('websites', 'url')]);
    c('enabled', `enabled (status ${w.status})`, w.status === 'paused' ? 0 : 1, s.one('monapi_website_enabled', id));
    c('check_interval', `interval ${w.intervalIso}`, w.intervalSeconds, s.one('monapi_website_check_interval_seconds', id));
    // A paused site's latest check is days old: leaving `up` out is as right as its result.
    if (want('up')) j.check(`${w.name} up (latest check ${w.lastUp ? 'succeeded' : 'failed'})`, w.lastUp ? 1 : 0, s.one('monapi_website_up', id), [list, f('websites', 'up'), down], w.status === 'paused' ? [undefined] : []);
    c('last_status_code', 'last status code', w.lastStatusCode, s.one('monapi_website_last_status_code', id));
    c('last_checked_at', 'last check time', sec(run.upstream.startedAt - newest.agoMs), s.one('monapi_website_last_check_timestamp_seconds', id));
    c('checks_24h', 'checks 24h', w.checks24h, s.one('monapi_website_checks_24h', id));
    c('failures_24h', 'failures 24h', w.failures24h, s.one('monapi_website_failures_24h', id));
    c('uptime_24h', 'uptime 24h', w.uptime24hPercent / 100, s.one('monapi_website_uptime_ratio', { ...id, window: '24h' }), [f('website_summary', 'uptime_24h')]);
    c('ttfb_avg_24h', 'ttfb avg 24h', w.ttfbAvgMs / 1000, s.one('monapi_website_ttfb_24h_avg_seconds', id), [f('website_summary', 'ttfb_avg_24h')]);
    c('ttfb_p95_24h', 'ttfb p95 24h (summary ttfb p95_24h)', w.ttfbP95Ms / 1000, s.one('monapi_website_ttfb_24h_p95_seconds', id));
  }
}

function websiteSummary(run: Run, j: Judge, which: (w: TruthWebsite) => boolean): void {
  const { scrape: s } = run;
  const down: Signal = { source: 'website_summary' };
  for (const w of THIRD_TRUTH.websites.filter(which)) {
    const id = { website_id: String(w.id), website: w.name };
    for (const u of w.uptime.filter((x) => x.window !== 'P1D')) {
      const window = u.window === 'P7D' ? '7d' : '30d';
      j.check(`${w.name} uptime ${window}`, u.ratio, s.one('monapi_website_uptime_ratio', { ...id, window }), [f('website_summary', `uptime_${window}`), down]);
    }
    j.check(`${w.name} certificate expiry`, Date.parse(w.certNotAfter) / 1000, s.one('monapi_website_cert_expiry_timestamp_seconds', { ...id, basis: 'upstream' }), [f('website_summary', 'cert_expires_at'), down]);
  }
}

/**
 * Silently wrong, found by this test: each an exporter defect, kept visible as `it.fails`.
 * Take the entry out when the defect is fixed (the `it.fails` then fails). D1-D5, found when
 * this test was written (numeric status codes read as a state, a status word as enabled, the
 * paused site's summary never read, `nginx/1.26.2` as a type, a monitor-style query not read),
 * are fixed.
 */
const DEFECTS: Partial<Record<ThirdVariant, Record<string, string>>> = {};

// ---------------------------------------------------------------------------------------------

describe.each(['a', 'b', 'c'] as const)('a third upstream, layouts %s', (variant) => {
  let upstream: ThirdUpstream | undefined;
  let exporter: RunningExporter | undefined;
  let run: Run | undefined;

  beforeAll(async () => {
    upstream = await startThirdUpstream({ variant });
    const scheme = variant === 'b' ? 'x-api-key' : 'bearer';
    const config = parseConfig(
      `accounts:\n  - name: ${A}\n    base_url: ${upstream.baseUrl}\n    api_key_env: THIRD_KEY\n    auth_scheme: ${scheme}\n    tag_labels: [env, role, canary]\n`,
      { env: { THIRD_KEY } },
    );
    exporter = await startExporter({ config, listenAddress: '127.0.0.1:0', telemetryPath: '/metrics', log: pino({ level: 'silent' }), processMetrics: false });
    const until = Date.now() + 45_000;
    while (!exporter.ready() || !exporter.idle()) {
      if (Date.now() > until) throw new Error('the exporter did not finish its first pass in 45 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The store renders off the scrape path: a snapshot holding every publish made so far.
    await exporter.store.flush();
    const body = await (await fetch(`${exporter.url}/metrics`, { headers: { accept: 'text/plain' } })).text();
    const status = (await (await fetch(`${exporter.url}/status`, { headers: { accept: 'application/json' } })).json()) as ConstructorParameters<typeof Scrape>[1];
    run = { variant, upstream, scrape: new Scrape(body, status), served: [...upstream.served] };
  }, 60_000);

  afterAll(async () => {
    await exporter?.stop();
    await upstream?.close();
  });

  for (const [part, judge] of Object.entries(PARTS)) {
    const defect = DEFECTS[variant]?.[part];
    const body = () => {
      if (run === undefined) throw new Error('no run');
      const j = new Judge(run.scrape);
      judge(run, j);
      const counts = { read: 0, 'visibly failed': 0, 'silently wrong': 0 } satisfies Record<Verdict, number>;
      for (const x of j.findings) counts[x.verdict] += 1;
      const notes = j.findings.filter((x) => x.verdict !== 'read').map((x) => `${x.what}: ${x.verdict === 'silently wrong' ? `SILENT, expected ${x.expected} got ${x.actual}` : `${x.actual === undefined ? 'absent' : x.actual}, ${x.signal}`}`);
      table.push({ variant, part, verdict: j.verdict(), counts, notes });
      expect(j.findings.length, 'the part judged nothing').toBeGreaterThan(0);
      expect(j.wrong(), `${part}: silently wrong`).toEqual([]);
    };
    if (defect === undefined) it(`${part}: every value read right or visibly failed`, body);
    else it.fails(`${part}: ${defect}`, body);
  }

  it('reads every page of every list once, never sends the key to another origin, stays within the rate limit', () => {
    if (run === undefined) throw new Error('no run');
    const pages = run.served.flatMap((s) => (s.page === undefined ? [] : [s.page]));
    const twice = pages.filter((p, i) => pages.indexOf(p) !== i);
    expect(twice, 'pages read twice in one pass').toEqual([]);
    const sizes = THIRD_TRUTH.pageSizes;
    const expected = [
      ...Array.from({ length: variant === 'b' ? 1 : Math.ceil(THIRD_TRUTH.hosts.length / sizes.hosts) }, (_, i) => `hosts ${i + 1}`),
      ...(variant === 'c' ? THIRD_TRUTH.hosts.filter((h) => h.allowed && h.catalogue.length > 1).map((h) => `catalogue ${h.hostname} 2`) : []),
      ...Array.from({ length: Math.ceil(THIRD_TRUTH.websites.length / sizes.websites) }, (_, i) => `websites ${i + 1}`),
      ...Array.from({ length: Math.ceil(THIRD_TRUTH.rules.length / sizes.rules) }, (_, i) => `rules ${i + 1}`),
    ];
    expect(pages.filter((p) => !/^catalogue .* 1$/.test(p)).sort()).toEqual(expected.sort());
    // The catalogue page on another origin (a, b): not fetched, with or without the key, and said.
    expect(run.served.filter((s) => s.origin === 'spill')).toEqual([]);
    if (variant === 'c') expect(run.scrape.one('monapi_list_incomplete', { source: 'metric_catalogue' })).toBe(0);
    else {
      expect(run.scrape.listIncomplete('metric_catalogue')).toBe(true);
      expect(run.scrape.statusSource('metric_catalogue')?.list?.example?.reason).toMatch(/origin/);
    }
    // Every request carried the key, none was refused, none was rate limited.
    expect(run.served.filter((s) => s.origin === 'main' && (!s.carriedKey || s.status !== 200))).toEqual([]);
  });
});
