import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A third Monitoring API, written by an outside tester from the API document
 * (shared/seeds/000_*.txt) and public REST conventions only, never from the exporter's code.
 *
 * Where the document says a body is "not shown", each endpoint picks a layout a real vendor
 * could choose, and the endpoints mix conventions on purpose. Layout `a` (two more, `b` and
 * `c`, are described at startThirdUpstream):
 * - `/account`: JSON:API, the plan a relationship resolved in `included`, the rate limit as
 *   `{limit, interval: "1m", burst}`;
 * - `/hosts`: the documented `{hosts, total}`, but in pages of 3 announced by an RFC 8288
 *   `Link: <...>; rel="next"` header (after `rel="first"` and `rel="prev"`, as GitHub orders them);
 * - `/websites`: HAL, pages of 2, `_embedded.websites` and `_links.next.href`, no total; a site
 *   has `status: "paused"` instead of an enabled flag, the interval as an ISO 8601 duration,
 *   24-hour aggregates under `stats_24h`, the latest check under `last_check`;
 * - `/websites/{id}`: uptime as a list of windows `[{window: "P7D", ratio: 0.96}]`, the time
 *   to first byte under `ttfb_ms.{avg_24h,p95_24h}`, the certificate under `tls.certificate`;
 * - `/alerts` (rules): `{data, meta: {next_cursor}}` in pages of 2 followed with `?cursor=`
 *   (opaque standard base64 with `+`, `/` and `=`; `""` on the last page, as Slack does),
 *   each rule's host scope a list of host objects, its duration an ISO 8601 `period`, its
 *   state `status: "enabled" | "disabled"`, operators as words (`gt`, `gte`, `lt`);
 * - `/hosts/{uuid}/components`: a `{success, errors, messages, result}` envelope whose result
 *   groups instances by category (`web_server`, `application_server`, `database`, `cache`),
 *   the software under `product`;
 * - `/hosts/{uuid}/metrics`: the same envelope, `result` a list of `{name, component, kind}`
 *   objects, and a `links.next` URL; one host's catalogue continues on ANOTHER ORIGIN (the
 *   "spill" server), which must never see the key;
 * - `/hosts/{uuid}/metrics/{name}/latest`: `{data: {metric, value, timestamp}}`.
 * The documented bodies (`/hosts`, `/hosts/{uuid}`, series, `/alerts/recent`, checks) follow
 * the document. Errors are `{error, message}`; 120 requests a minute, burst 30, as the
 * document says (429 `rate_limited` beyond).
 *
 * Times are relative to the moment the server starts, so series and checks are fresh.
 */

export const THIRD_KEY = 'third-key-5b7e21d9';

const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const floorMinute = (ms: number) => Math.floor(ms / MIN) * MIN;

export interface TruthHost {
  uuid: string;
  hostname: string;
  type: string;
  agentVersion: string;
  online: boolean;
  allowed: boolean;
  lastSeenAgoMs: number;
  createdAt: string;
  serverKinds: string[];
  tags: string[];
  /** Catalogue pages as served: page 1 on this origin, page 2 (if any) on the spill origin. */
  catalogue: string[][];
  /** Newest non-null value of each metric, as the agent sends it (percent 0-100, bytes). */
  values: Record<string, number>;
  components: { category: string; product: string; version: string; displayName: string }[];
}

export interface TruthWebsite {
  id: number;
  name: string;
  url: string;
  status: 'active' | 'paused';
  intervalSeconds: number;
  intervalIso: string;
  lastUp: boolean;
  lastStatusCode: number;
  uptime24hPercent: number;
  ttfbAvgMs: number;
  ttfbP95Ms: number;
  checks24h: number;
  failures24h: number;
  uptime: { window: string; ratio: number }[];
  certNotAfter: string;
  /** Newest check last (ids grow with time). */
  checks: { id: number; agoMs: number; success: boolean; statusCode: number; ttfbMs: number }[];
}

export interface TruthRule {
  id: number;
  name: string;
  metric: string;
  operator: 'gt' | 'gte' | 'lt' | 'lte';
  symbol: string;
  threshold: number;
  /** Threshold in the unit the exporter's series use (percent metrics as ratios). */
  exportedThreshold: number;
  periodIso: string;
  periodSeconds: number;
  enabled: boolean;
  /** Empty: every host. */
  hosts: string[];
}

const H = {
  web1: '3c1f0a9e5b7d4c2e8f6a1b3d5c7e9f01',
  web2: '7a2e4c6b8d0f1e3a5c7b9d1f3e5a7c92',
  db1: 'b4d6f8a0c2e4a6c8e0b2d4f6a8c0e2a3',
  old1: 'e9c7a5b3d1f9e7c5a3b1d9f7e5c3a1b4',
  over1: '0f2e4d6c8b0a1f3e5d7c9b1a3f5e7d95',
} as const;

const hosts: TruthHost[] = [
  {
    uuid: H.web1,
    hostname: 'web-1',
    type: 'vm',
    agentVersion: '1.8.11-1',
    online: true,
    allowed: true,
    lastSeenAgoMs: 20_000,
    createdAt: '2025-03-04T10:00:00Z',
    serverKinds: ['web-server', 'application-server'],
    tags: ['env:prod', 'role:web', 'canary'],
    catalogue: [['system.cpu.user', 'system.load.1', 'system.mem.total', 'nginx.workers.count']],
    values: { 'system.cpu.user': 23.5, 'system.load.1': 1.25, 'system.mem.total': 8_589_934_592, 'nginx.workers.count': 4 },
    components: [
      { category: 'web_server', product: 'nginx', version: '1.26.2', displayName: 'nginx @ web-1' },
      { category: 'application_server', product: 'php-fpm', version: '8.3.14', displayName: 'phpfpm www @ web-1' },
    ],
  },
  {
    uuid: H.web2,
    hostname: 'web-2',
    type: 'container',
    agentVersion: '1.8.10-2',
    online: true,
    allowed: true,
    lastSeenAgoMs: 40_000,
    createdAt: '2025-06-11T08:30:00Z',
    serverKinds: ['web-server', 'database'],
    tags: ['env:prod', 'role:web'],
    // Page 2 of this catalogue lives on another origin: it must not be followed.
    catalogue: [['system.cpu.user', 'system.load.1', 'system.mem.total'], ['mysql.global.threads_connected']],
    values: { 'system.cpu.user': 61.25, 'system.load.1': 3.5, 'system.mem.total': 4_294_967_296, 'mysql.global.threads_connected': 17 },
    components: [
      { category: 'web_server', product: 'nginx', version: '1.27.3', displayName: 'nginx @ web-2' },
      { category: 'database', product: 'mariadb', version: '10.11.10', displayName: 'mariadb @ web-2' },
    ],
  },
  {
    uuid: H.db1,
    hostname: 'db-1',
    type: 'bare-metal',
    agentVersion: '1.8.11-1',
    online: true,
    allowed: true,
    lastSeenAgoMs: 5_000,
    createdAt: '2024-11-20T16:45:00Z',
    serverKinds: ['database', 'cache'],
    tags: ['env:staging'],
    catalogue: [['system.cpu.user', 'system.load.1', 'system.mem.total', 'mysql.global.threads_connected']],
    values: { 'system.cpu.user': 7.75, 'system.load.1': 0.5, 'system.mem.total': 34_359_738_368, 'mysql.global.threads_connected': 42 },
    components: [
      { category: 'database', product: 'mysql', version: '8.0.39', displayName: 'mysql @ db-1' },
      { category: 'cache', product: 'varnish', version: '7.6.1', displayName: 'varnish @ db-1' },
    ],
  },
  {
    uuid: H.old1,
    hostname: 'old-1',
    type: 'vm',
    agentVersion: '1.7.0-1',
    online: false,
    allowed: true,
    lastSeenAgoMs: 3 * 60 * MIN,
    createdAt: '2023-01-02T03:04:05Z',
    serverKinds: ['web-server'],
    tags: ['env:prod'],
    catalogue: [['system.cpu.user', 'system.load.1']],
    values: { 'system.cpu.user': 99, 'system.load.1': 9 },
    components: [{ category: 'web_server', product: 'nginx', version: '1.18.0', displayName: 'nginx @ old-1' }],
  },
  {
    uuid: H.over1,
    hostname: 'over-1',
    type: 'vm',
    agentVersion: '1.8.11-1',
    online: true,
    allowed: false,
    lastSeenAgoMs: 30_000,
    createdAt: '2026-01-15T12:00:00Z',
    serverKinds: [],
    tags: [],
    catalogue: [[]],
    values: {},
    components: [],
  },
];

const websites: TruthWebsite[] = [1, 2, 3, 4, 5].map((n) => {
  const paused = n === 4;
  const down = n === 3;
  const interval = [60, 300, 60, 120, 30][n - 1] ?? 60;
  const checks = Array.from({ length: 8 }, (_, i) => ({
    id: 90_000 + n * 100 + i,
    agoMs: (8 - i) * interval * 1000 + (paused ? 3 * 86_400_000 : 0),
    success: !(down && i >= 6),
    statusCode: down && i >= 6 ? 503 : 200,
    ttfbMs: 100 + n * 10 + i,
  }));
  return {
    id: 500 + n,
    name: ['shop', 'blog', 'api', 'legacy', 'status'][n - 1] ?? `site-${n}`,
    url: `https://${['shop', 'blog', 'api', 'legacy', 'status'][n - 1]}.third.example/`,
    status: paused ? 'paused' : 'active',
    intervalSeconds: interval,
    intervalIso: { 60: 'PT1M', 300: 'PT5M', 120: 'PT2M', 30: 'PT30S' }[interval] ?? 'PT1M',
    lastUp: !down,
    lastStatusCode: down ? 503 : 200,
    uptime24hPercent: [99.93, 100, 87.5, 100, 99.31][n - 1] ?? 100,
    ttfbAvgMs: 180 + n * 7,
    ttfbP95Ms: 400 + n * 11,
    checks24h: Math.round(86_400 / interval),
    failures24h: [1, 0, 180, 0, 20][n - 1] ?? 0,
    uptime: [
      { window: 'P1D', ratio: ([99.93, 100, 87.5, 100, 99.31][n - 1] ?? 100) / 100 },
      { window: 'P7D', ratio: [0.9991, 1, 0.96, 0.998, 0.9902][n - 1] ?? 1 },
      { window: 'P30D', ratio: [0.9987, 0.9999, 0.97, 0.995, 0.9899][n - 1] ?? 1 },
    ],
    certNotAfter: `2027-0${n}-1${n}T00:00:00Z`,
    checks,
  } satisfies TruthWebsite;
});

const rules: TruthRule[] = [
  { id: 701, name: 'cpu high', metric: 'system.cpu.user', operator: 'gt', symbol: '>', threshold: 90, exportedThreshold: 0.9, periodIso: 'PT5M', periodSeconds: 300, enabled: true, hosts: [H.web1, H.web2] },
  { id: 702, name: 'load high', metric: 'system.load.1', operator: 'gte', symbol: '>=', threshold: 8, exportedThreshold: 8, periodIso: 'PT10M', periodSeconds: 600, enabled: true, hosts: [] },
  { id: 703, name: 'few workers', metric: 'nginx.workers.count', operator: 'lt', symbol: '<', threshold: 2, exportedThreshold: 2, periodIso: 'PT2M', periodSeconds: 120, enabled: true, hosts: [H.web1, H.web2, H.old1] },
  { id: 704, name: 'db connections', metric: 'mysql.global.threads_connected', operator: 'gt', symbol: '>', threshold: 200, exportedThreshold: 200, periodIso: 'PT1H', periodSeconds: 3600, enabled: false, hosts: [H.db1] },
  { id: 705, name: 'cpu idle low', metric: 'system.cpu.idle', operator: 'lte', symbol: '<=', threshold: 5, exportedThreshold: 0.05, periodIso: 'PT15M', periodSeconds: 900, enabled: true, hosts: [H.db1, H.web2] },
];

/** What the server holds, for the test to compare /metrics with. */
export const THIRD_TRUTH = {
  account: {
    plan: 'business',
    planDisplayName: 'Business',
    hostLimit: 25,
    websiteLimit: 10,
    retentionDays: 90,
    ratePerMinute: 120,
    burst: 30,
    usageHosts: hosts.length,
    usageWebsites: websites.length,
  },
  hosts,
  websites,
  rules,
  api: { title: 'Third Monitoring REST API', version: '2.4.1', openapi: '3.1.0', paths: 13 },
  events: [
    { type: 'website_down', id: 31, sourceId: 503, sourceName: 'api', agoMs: 20 * MIN },
    { type: 'host_alert', id: 88, sourceId: 701, sourceName: 'cpu high', hostUuid: H.web2, agoMs: 12 * MIN },
    { type: 'host_alert', id: 89, sourceId: 703, sourceName: 'few workers', hostUuid: H.old1, agoMs: 6 * MIN },
  ],
  pageSizes: { hosts: 3, websites: 2, rules: 2 },
} as const;

export interface Served {
  /** Absolute request target (path and query) and the origin it reached. */
  readonly target: string;
  readonly origin: 'main' | 'spill';
  readonly status: number;
  /** Whether the request carried the account key in either header. */
  readonly carriedKey: boolean;
  /** For a page of a paged list: `<list> <page>`. */
  readonly page?: string;
}

export interface ThirdUpstream {
  readonly baseUrl: string;
  readonly spillBaseUrl: string;
  readonly served: Served[];
  readonly startedAt: number;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  page?: string;
}

const error = (status: number, code: string, message: string): Reply => ({ status, body: { error: code, message } });

function parseWindow(v: string | null): number | undefined {
  if (v === null) return undefined;
  const m = /^(\d+)([mhdw])$/.exec(v);
  if (!m) return Number.NaN;
  return Number(m[1]) * { m: 1, h: 60, d: 1440, w: 10_080 }[m[2] as 'm' | 'h' | 'd' | 'w'] * MIN;
}

/** Seconds in the document's relative-window format (`5m`, `1h`, `2d`, `1w`). */
function relativeWindow(seconds: number): string {
  for (const [unit, size] of [['w', 604_800], ['d', 86_400], ['h', 3600]] as const) if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds / 60}m`;
}

function intParam(url: URL, name: string): number | undefined | null {
  const v = url.searchParams.get(name);
  if (v === null) return undefined;
  return /^\d+$/.test(v) ? Number(v) : null;
}

/**
 * `a` (the default), `b` and `c` serve the same TRUTH in three different sets of layouts:
 * - `a`: as described at the top of this file;
 * - `b`: `/account` as key/value pairs (`properties: [{key, value}]`, values as strings);
 *   `/hosts` in one page; `/websites` a bare JSON array in pages of 2 announced by an RFC 8288
 *   Link header, UptimeRobot-style items (`friendly_name`, `interval`, numeric `status`: 0
 *   paused, 2 up, 9 down, `uptime_24h` as a string); `/websites/{id}` with UptimeRobot's
 *   `custom_uptime_ranges: "1-7-30"` and `custom_uptime_ratio: "99.930-99.910-99.870"`,
 *   the certificate expiry as Unix seconds, the 95th percentile under `response_time_ms`;
 *   `/alerts` JSON:API (`data[].attributes`, the host scope as `relationships.hosts.data`
 *   resolved in `included`), `period` in the document's own relative-window format (`5m`),
 *   pages announced by `meta.next_cursor`; components grouped by category without an envelope,
 *   the software an object `{name, version}`; the metric catalogue grouped by component as a
 *   list of objects, one host's page 2 announced by a Link header to another origin;
 * - `c`: `/account` with the plan an object and the limits a list of quotas
 *   (`[{resource: "hosts", limit: 25, used: 5}, ...]`); `/hosts` in pages of 3 announced by a
 *   page number (`next_page: 2`, followed with `?page=`); `/websites` JSON:API in pages of 2
 *   announced by Better Stack's `pagination.next`, `status` one of `up`, `down`, `paused`,
 *   the uptime a ratio, the mean time to first byte in seconds (`..._seconds_24h`),
 *   `checks_last_24h` beside `failed_checks_last_24h`; `/websites/{id}` an SLA object in
 *   percent (`last_7_days`); rules as Datadog-style queries
 *   (`avg(last_5m):system.cpu.user{host:web-1,host:web-2} > 90`, the scope by hostname);
 *   components as `{kind, software: "nginx/1.26.2"}`; the catalogue a list of names whose
 *   page 2 is on the same origin (a relative `links.next`), so it must be read whole.
 */
export type ThirdVariant = 'a' | 'b' | 'c';

export async function startThirdUpstream(options: { variant?: ThirdVariant } = {}): Promise<ThirdUpstream> {
  const variant = options.variant ?? 'a';
  const startedAt = Date.now();
  const served: Served[] = [];
  let base = '';
  let spillBase = '';

  // Token bucket: 120 a minute, burst 30.
  let tokens = 30;
  let refilled = Date.now();
  const take = (): boolean => {
    const now = Date.now();
    tokens = Math.min(30, tokens + ((now - refilled) / 60_000) * 120);
    refilled = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };

  const hostJson = (h: TruthHost) => ({
    uuid: h.uuid,
    hostname: h.hostname,
    type: h.type,
    agent_version: h.agentVersion,
    last_seen: iso(startedAt - h.lastSeenAgoMs),
    online: h.online,
    allowed: h.allowed,
    server_kinds: h.serverKinds,
    tags: h.tags,
    created_at: h.createdAt,
  });

  const account = (): Reply => {
    const a = THIRD_TRUTH.account;
    if (variant === 'b') {
      const kv: [string, unknown][] = [
        ['account_id', 'acct_3f9c'],
        ['plan', a.plan],
        ['max_hosts', String(a.hostLimit)],
        ['max_websites', String(a.websiteLimit)],
        ['data_retention_days', String(a.retentionDays)],
        ['hosts_used', String(a.usageHosts)],
        ['websites_used', String(a.usageWebsites)],
        ['api_requests_per_minute', String(a.ratePerMinute)],
        ['api_burst', String(a.burst)],
      ];
      return { status: 200, body: { properties: kv.map(([key, value]) => ({ key, value })) } };
    }
    if (variant === 'c') {
      return {
        status: 200,
        body: {
          id: 'acct_3f9c',
          plan: { code: a.plan, name: a.planDisplayName },
          quotas: [
            { resource: 'hosts', limit: a.hostLimit, used: a.usageHosts },
            { resource: 'websites', limit: a.websiteLimit, used: a.usageWebsites },
            { resource: 'retention_days', limit: a.retentionDays },
            { resource: 'api_requests_per_minute', limit: a.ratePerMinute },
            { resource: 'api_burst', limit: a.burst },
          ],
        },
      };
    }
    return {
      status: 200,
      body: {
        data: {
          type: 'account',
          id: 'acct_3f9c',
          attributes: {
            name: 'Third Co',
            created_at: '2024-10-01T00:00:00Z',
            usage: { hosts: a.usageHosts, websites: a.usageWebsites },
            rate_limit: { limit: a.ratePerMinute, interval: '1m', burst: a.burst },
          },
          relationships: { plan: { data: { type: 'plan', id: 'plan_biz_2024' } } },
        },
        included: [
          {
            type: 'plan',
            id: 'plan_biz_2024',
            attributes: {
              tier: a.plan,
              display_name: a.planDisplayName,
              limits: { hosts: a.hostLimit, websites: a.websiteLimit, retention_days: a.retentionDays },
            },
          },
        ],
      },
    };
  };

  const hostList = (url: URL): Reply => {
    const size = variant === 'b' ? hosts.length : THIRD_TRUTH.pageSizes.hosts;
    const page = intParam(url, 'page') ?? 1;
    if (page === null || page < 1) return error(400, 'bad_request', 'page must be a positive integer');
    const pages = Math.ceil(hosts.length / size);
    // `first` and `prev` come before `next`, as GitHub orders them: the link to follow is the
    // one whose rel is next, not the first one.
    const at = (p: number) => `<${base}/hosts?page=${p}&per_page=${size}>`;
    const links = [`${at(1)}; rel="first"`];
    if (page > 1) links.push(`${at(page - 1)}; rel="prev"`);
    if (page < pages) links.push(`${at(page + 1)}; rel="next"`);
    links.push(`${at(pages)}; rel="last"`);
    if (variant === 'c') {
      return {
        status: 200,
        body: { hosts: hosts.slice((page - 1) * size, page * size).map(hostJson), total: hosts.length, page, per_page: size, next_page: page < pages ? page + 1 : null },
        page: `hosts ${page}`,
      };
    }
    return {
      status: 200,
      body: { hosts: hosts.slice((page - 1) * size, page * size).map(hostJson), total: hosts.length },
      headers: { link: links.join(', ') },
      page: `hosts ${page}`,
    };
  };

  const catalogue = (h: TruthHost, url: URL, spill: boolean): Reply => {
    const page = intParam(url, 'page') ?? 1;
    if (page === null || page < 1 || page > h.catalogue.length) return error(404, 'not_found', 'no such page');
    if (page === 2 && !spill && variant !== 'c') return error(404, 'not_found', 'page 2 is served elsewhere');
    const names = h.catalogue[page - 1] ?? [];
    const next = page < h.catalogue.length ? `${spillBase}/hosts/${h.uuid}/metrics?page=${page + 1}` : null;
    if (variant === 'c') {
      return {
        status: 200,
        body: { data: names, links: { self: `/api/v2/hosts/${h.uuid}/metrics?page=${page}`, next: page < h.catalogue.length ? `/api/v2/hosts/${h.uuid}/metrics?page=${page + 1}` : null } },
        page: `catalogue ${h.hostname} ${page}`,
      };
    }
    if (variant === 'b') {
      const groups = [...new Set(names.map((n) => n.split('.')[0] ?? ''))];
      return {
        status: 200,
        body: { host_uuid: h.uuid, components: groups.map((component) => ({ component, metrics: names.filter((n) => n.startsWith(`${component}.`)).map((name) => ({ name, description: `agent metric ${name}` })) })) },
        ...(next === null ? {} : { headers: { link: `<${next}>; rel="next"` } }),
        page: `catalogue ${h.hostname} ${page}`,
      };
    }
    return {
      status: 200,
      body: {
        success: true,
        errors: [],
        messages: [],
        result: names.map((name) => ({ name, component: name.split('.')[0], kind: name.endsWith('.count') && !name.startsWith('nginx.workers') ? 'counter' : 'gauge' })),
        result_info: { page, per_page: 3, count: names.length, total_count: h.catalogue.flat().length },
        links: { next },
      },
      page: `catalogue ${h.hostname} ${page}`,
    };
  };

  /** The newest non-null point: two minutes back for a reporting agent (the newest minutes are still empty), its last report for a silent one. */
  const newestPoint = (h: TruthHost) => (h.online ? floorMinute(startedAt - h.lastSeenAgoMs) - 2 * MIN : floorMinute(startedAt - h.lastSeenAgoMs));

  const points = (h: TruthHost, name: string, sinceMs: number, interval: number) => {
    const newest = newestPoint(h);
    const end = floorMinute(Date.now());
    const out: { timestamp: string; value: number | null }[] = [];
    const truth = h.values[name];
    const step = interval * 1000;
    for (let t = Math.ceil((Date.now() - sinceMs) / step) * step; t <= end; t += step) {
      let value: number | null;
      if (truth === undefined || t > newest) value = null;
      else if (t === newest) value = truth;
      else value = truth * 0.5 + ((t / MIN) % 7) + 1; // older points: other values
      out.push({ timestamp: iso(t), value });
    }
    return out;
  };

  const series = (h: TruthHost, url: URL): Reply => {
    const namesParam = url.searchParams.get('names');
    if (namesParam === null || namesParam === '') return error(400, 'bad_request', 'names is required');
    const window = parseWindow(url.searchParams.get('since')) ?? 60 * MIN;
    if (Number.isNaN(window)) return error(400, 'bad_request', 'since must look like 10m, 2h, 1d or 1w');
    const clamped = Math.min(window, THIRD_TRUTH.account.retentionDays * 1440 * MIN);
    const interval = clamped <= 240 * MIN ? 60 : clamped <= 1440 * MIN ? 120 : clamped <= 2880 * MIN ? 300 : clamped <= 10_080 * MIN ? 900 : 3600;
    const names = namesParam.split(',');
    const all = h.catalogue.flat();
    return {
      status: 200,
      body: {
        host_uuid: h.uuid,
        since: iso(Date.now() - clamped),
        interval,
        series: Object.fromEntries(names.map((n) => [n, all.includes(n) ? points(h, n, clamped, interval) : []])),
      },
    };
  };

  const latest = (h: TruthHost, name: string): Reply => {
    const v = h.values[name];
    if (v === undefined || !h.catalogue.flat().includes(name)) return error(404, 'not_found', 'no such metric on this host');
    if (variant === 'b') return { status: 200, body: { metric: name, latest: { t: Math.floor(newestPoint(h) / 1000), v } } };
    return { status: 200, body: { data: { metric: name, value: v, timestamp: iso(newestPoint(h)) } } };
  };

  const components = (h: TruthHost): Reply => {
    const result: Record<string, unknown[]> = { web_server: [], application_server: [], database: [], cache: [] };
    if (variant === 'b') {
      for (const c of h.components) result[c.category]?.push({ software: { name: c.product, version: c.version }, label: c.displayName });
      return { status: 200, body: result };
    }
    if (variant === 'c') {
      return { status: 200, body: { data: h.components.map((c) => ({ kind: c.category.replace('_', '-'), software: `${c.product}/${c.version}`, name: c.displayName })) } };
    }
    for (const c of h.components) {
      result[c.category]?.push({
        product: c.product,
        version: c.version,
        display_name: c.displayName,
        pid: 1000 + c.version.length,
        local_id: `${c.product}-${h.hostname}`.padEnd(64, '0'),
      });
    }
    return { status: 200, body: { success: true, errors: [], messages: [], result } };
  };

  const websiteJson = (w: TruthWebsite) => ({
    id: w.id,
    name: w.name,
    url: w.url,
    status: w.status,
    check_interval: w.intervalIso,
    last_check: { checked_at: iso(startedAt - (w.checks.at(-1)?.agoMs ?? 0)), status_code: w.lastStatusCode, success: w.lastUp },
    stats_24h: { uptime_pct: w.uptime24hPercent, ttfb_avg_ms: w.ttfbAvgMs, checks: w.checks24h, failures: w.failures24h },
    _links: { self: { href: `/api/v2/websites/${w.id}` }, checks: { href: `/api/v2/websites/${w.id}/checks` } },
  });

  const websiteB = (w: TruthWebsite) => ({
    id: String(w.id),
    friendly_name: w.name,
    url: w.url,
    type: 1,
    interval: w.intervalSeconds,
    status: w.status === 'paused' ? 0 : w.lastUp ? 2 : 9,
    uptime_24h: w.uptime24hPercent.toFixed(3),
    response_time_ms: { avg_24h: w.ttfbAvgMs },
    counts_24h: { checks: w.checks24h, failed: w.failures24h },
    last_checked: Math.floor((startedAt - (w.checks.at(-1)?.agoMs ?? 0)) / 1000),
    last_http_code: w.lastStatusCode,
  });

  const websiteList = (url: URL): Reply => {
    const size = THIRD_TRUTH.pageSizes.websites;
    const page = intParam(url, 'page') ?? 1;
    if (page === null || page < 1) return error(400, 'bad_request', 'page must be a positive integer');
    const pages = Math.ceil(websites.length / size);
    if (variant === 'c') {
      const at = (p: number) => `${base}/websites?page=${p}`;
      return {
        status: 200,
        body: {
          data: websites.slice((page - 1) * size, page * size).map((w) => ({
            id: String(w.id),
            type: 'monitor',
            attributes: {
              name: w.name,
              url: w.url,
              status: w.status === 'paused' ? 'paused' : w.lastUp ? 'up' : 'down',
              check_frequency: w.intervalSeconds,
              last_checked_at: iso(startedAt - (w.checks.at(-1)?.agoMs ?? 0)),
              last_response: { status: w.lastStatusCode },
              availability_24h: w.uptime24hPercent / 100,
              avg_response_time_seconds_24h: w.ttfbAvgMs / 1000,
              checks_last_24h: w.checks24h,
              failed_checks_last_24h: w.failures24h,
            },
          })),
          pagination: { first: at(1), last: at(pages), prev: page > 1 ? at(page - 1) : null, next: page < pages ? at(page + 1) : null },
        },
        page: `websites ${page}`,
      };
    }
    if (variant === 'b') {
      const links = [`<${base}/websites?page=1>; rel="first"`];
      if (page > 1) links.push(`<${base}/websites?page=${page - 1}>; rel="prev"`);
      if (page < pages) links.push(`<${base}/websites?page=${page + 1}>; rel="next"`);
      return { status: 200, body: websites.slice((page - 1) * size, page * size).map(websiteB), headers: { link: links.join(', ') }, page: `websites ${page}` };
    }
    const links: Record<string, { href: string }> = { self: { href: `/api/v2/websites?page=${page}` } };
    if (page < pages) links['next'] = { href: `/api/v2/websites?page=${page + 1}` };
    if (page > 1) links['prev'] = { href: `/api/v2/websites?page=${page - 1}` };
    return {
      status: 200,
      body: { _embedded: { websites: websites.slice((page - 1) * size, page * size).map(websiteJson) }, _links: links, page: { size, number: page } },
      page: `websites ${page}`,
    };
  };

  const summary = (w: TruthWebsite): Reply => variant === 'c' ? {
    status: 200,
    body: {
      data: {
        id: String(w.id),
        type: 'monitor_sla',
        attributes: {
          sla: Object.fromEntries(w.uptime.map((u) => [{ P1D: 'last_24_hours', P7D: 'last_7_days', P30D: 'last_30_days' }[u.window] ?? u.window, Number((u.ratio * 100).toFixed(4))])),
          response_times: { avg_ms: w.ttfbAvgMs, p95_ms: w.ttfbP95Ms },
          ssl_certificate: { issuer: 'R11', expires_at: w.certNotAfter },
        },
      },
    },
  } : variant === 'b' ? {
    status: 200,
    body: {
      id: String(w.id),
      friendly_name: w.name,
      custom_uptime_ranges: '1-7-30',
      custom_uptime_ratio: w.uptime.map((u) => (u.ratio * 100).toFixed(3)).join('-'),
      response_time_ms: { avg_24h: w.ttfbAvgMs, p95_24h: w.ttfbP95Ms },
      ssl: { brand: 'R11', expires: Math.floor(Date.parse(w.certNotAfter) / 1000) },
    },
  } : ({
    status: 200,
    body: {
      website: { id: w.id, name: w.name, url: w.url, status: w.status },
      uptime: w.uptime,
      ttfb_ms: { avg_24h: w.ttfbAvgMs, p95_24h: w.ttfbP95Ms },
      tls: { version: 'TLSv1.3', certificate: { issuer: 'R11', not_after: w.certNotAfter } },
      recent_checks: w.checks.slice(-3).reverse().map((c) => ({ id: c.id, success: c.success, status_code: c.statusCode, checked_at: iso(startedAt - c.agoMs) })),
    },
  });

  const checkJson = (w: TruthWebsite, c: TruthWebsite['checks'][number]) => ({
    id: c.id,
    success: c.success,
    status_code: c.statusCode,
    ttfb_ms: c.ttfbMs,
    http_version: 'HTTP/2',
    tls_version: 'TLSv1.3',
    cert_days_remaining: Math.floor((Date.parse(w.certNotAfter) - startedAt) / 86_400_000),
    checked_at: iso(startedAt - c.agoMs),
    dns_lookup: 4,
    tls_handshake: 22,
    security_score: 85,
    has_hsts: true,
    has_x_frame_options: true,
    has_x_content_type_options: true,
    has_csp: false,
    has_referrer_policy: true,
    has_permissions_policy: false,
    cf_cache_status: 'HIT',
    cf_datacenter: 'AMS',
  });

  const checks = (w: TruthWebsite, url: URL): Reply => {
    const limit = intParam(url, 'limit');
    if (limit === null || (limit !== undefined && (limit < 1 || limit > 500))) return error(400, 'bad_request', 'limit must be 1-500');
    const since = parseWindow(url.searchParams.get('since'));
    if (since !== undefined && Number.isNaN(since)) return error(400, 'bad_request', 'invalid since');
    let list = w.checks.map((c) => checkJson(w, c));
    if (since === undefined) list = list.reverse().slice(0, limit ?? 100);
    else list = list.filter((c) => Date.parse(c.checked_at) >= Date.now() - since).slice(0, limit ?? 100);
    return { status: 200, body: { website_id: w.id, total: w.checks.length, checks: list } };
  };

  const ruleJson = (r: TruthRule) => ({
    id: r.id,
    name: r.name,
    metric: r.metric,
    operator: r.operator,
    threshold: r.threshold,
    period: r.periodIso,
    status: r.enabled ? 'enabled' : 'disabled',
    scope: r.hosts.length === 0 ? 'all_hosts' : 'selected_hosts',
    hosts: r.hosts.map((uuid) => ({ uuid, hostname: hosts.find((h) => h.uuid === uuid)?.hostname })),
    created_at: '2025-05-05T05:05:05Z',
  });

  // Opaque cursors. Variant a's are standard base64 with `+`, `/` and `=` in them (a client must
  // percent-encode them: a raw `+` in a query reads as a space) and, as Slack does, the last page
  // says `next_cursor: ""`; variant b's are plain tokens and the last page says null.
  const cursors = new Map<string, number>();
  const cursorFor = (offset: number) => {
    const token =
      variant === 'a'
        ? Buffer.concat([Buffer.from([0xfb, 0xef, 0xbe, 0xfe, 0xff, offset]), Buffer.from(`after:${offset}`)]).toString('base64')
        : `rc_${offset.toString(16).padStart(6, '0')}`;
    cursors.set(token, offset);
    return token;
  };
  const ruleList = (url: URL): Reply => {
    const size = THIRD_TRUTH.pageSizes.rules;
    const cursor = url.searchParams.get('cursor');
    let offset = 0;
    if (cursor !== null) {
      const known = cursors.get(cursor);
      if (known === undefined) return error(400, 'bad_request', 'invalid cursor');
      offset = known;
    }
    const next = offset + size < rules.length ? cursorFor(offset + size) : variant === 'a' ? '' : null;
    const slice = rules.slice(offset, offset + size);
    if (variant === 'c') {
      const scope = (r: TruthRule) => (r.hosts.length === 0 ? '*' : r.hosts.map((uuid) => `host:${hosts.find((h) => h.uuid === uuid)?.hostname}`).join(','));
      return {
        status: 200,
        body: {
          data: slice.map((r) => ({
            id: r.id,
            name: r.name,
            query: `avg(last_${relativeWindow(r.periodSeconds)}):${r.metric}{${scope(r)}} ${r.symbol} ${r.threshold}`,
            enabled: r.enabled,
          })),
          meta: { next_cursor: next },
        },
        page: `rules ${offset / size + 1}`,
      };
    }
    if (variant === 'b') {
      const scoped = [...new Set(slice.flatMap((r) => r.hosts))];
      return {
        status: 200,
        body: {
          data: slice.map((r) => ({
            type: 'alert_rule',
            id: String(r.id),
            attributes: { name: r.name, metric: r.metric, operator: r.symbol, threshold: r.threshold, period: relativeWindow(r.periodSeconds), enabled: r.enabled, all_hosts: r.hosts.length === 0 },
            relationships: { hosts: { data: r.hosts.map((id) => ({ type: 'host', id })) } },
          })),
          included: scoped.map((id) => ({ type: 'host', id, attributes: { hostname: hosts.find((h) => h.uuid === id)?.hostname } })),
          meta: { next_cursor: next },
        },
        page: `rules ${offset / size + 1}`,
      };
    }
    return { status: 200, body: { data: slice.map(ruleJson), meta: { next_cursor: next, page_size: size } }, page: `rules ${offset / size + 1}` };
  };

  const recent = (url: URL): Reply => {
    const limit = intParam(url, 'limit');
    if (limit === null || (limit !== undefined && limit < 1)) return error(400, 'bad_request', 'limit must be a positive integer');
    const events = [...THIRD_TRUTH.events]
      .sort((a, b) => a.agoMs - b.agoMs)
      .slice(0, limit ?? 50)
      .map((e) => ({
        type: e.type,
        id: e.id,
        source_id: e.sourceId,
        source_name: e.sourceName,
        ...('hostUuid' in e ? { host_uuid: e.hostUuid } : {}),
        message: e.type === 'website_down' ? 'HTTP 503' : `${e.sourceName} fired`,
        occurred_at: iso(startedAt - e.agoMs),
      }));
    return { status: 200, body: { alerts: events } };
  };

  const openapi = (): Reply => {
    const paths = [
      '/account', '/hosts', '/hosts/{uuid}', '/hosts/{uuid}/metrics', '/hosts/{uuid}/metrics/series', '/hosts/{uuid}/metrics/{name}/latest',
      '/hosts/{uuid}/components', '/alerts', '/alerts/recent', '/websites', '/websites/{id}', '/websites/{id}/checks', '/openapi.json',
    ];
    return { status: 200, body: { openapi: THIRD_TRUTH.api.openapi, info: { title: THIRD_TRUTH.api.title, version: THIRD_TRUTH.api.version }, paths: Object.fromEntries(paths.map((p) => [p, { get: {} }])) } };
  };

  const route = (url: URL): Reply => {
    const path = url.pathname.replace(/^\/api\/v2(?=\/)/, '');
    if (!url.pathname.startsWith('/api/v2/')) return error(404, 'not_found', 'no such route');
    const parts = path.split('/').filter((p) => p !== '').map(decodeURIComponent);
    const host = () => hosts.find((h) => h.uuid === parts[1]);
    const site = () => websites.find((w) => String(w.id) === parts[1]);
    if (path === '/account') return account();
    if (path === '/openapi.json') return openapi();
    if (path === '/hosts') return hostList(url);
    if (parts[0] === 'hosts') {
      const h = host();
      if (h === undefined) return error(404, 'not_found', 'host not found');
      if (parts.length === 2) return { status: 200, body: hostJson(h) };
      if (parts[2] === 'metrics' && parts.length === 3) return catalogue(h, url, false);
      if (parts[2] === 'metrics' && parts[3] === 'series' && parts.length === 4) return series(h, url);
      if (parts[2] === 'metrics' && parts[4] === 'latest' && parts.length === 5) return latest(h, parts[3] ?? '');
      if (parts[2] === 'components' && parts.length === 3) return components(h);
    }
    if (path === '/alerts') return ruleList(url);
    if (path === '/alerts/recent') return recent(url);
    if (path === '/websites') return websiteList(url);
    if (parts[0] === 'websites') {
      const w = site();
      if (w === undefined) return error(404, 'not_found', 'website not found');
      if (parts.length === 2) return summary(w);
      if (parts[2] === 'checks' && parts.length === 3) return checks(w, url);
    }
    return error(404, 'not_found', 'no such route');
  };

  const carriesKey = (req: IncomingMessage) => req.headers.authorization === `Bearer ${THIRD_KEY}` || req.headers['x-api-key'] === THIRD_KEY;
  const mentionsKey = (req: IncomingMessage) => JSON.stringify(req.headers).includes(THIRD_KEY) || (req.url ?? '').includes(THIRD_KEY);

  const send = (res: ServerResponse, reply: Reply) => {
    res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...reply.headers });
    res.end(JSON.stringify(reply.body));
  };

  const main: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://third.invalid');
    const target = `${url.pathname}${url.search}`;
    let reply: Reply;
    if (req.method !== 'GET') reply = error(405, 'method_not_allowed', 'read-only API');
    else if (!carriesKey(req)) reply = error(401, 'unauthorized', 'missing or invalid API key');
    else if (!take()) reply = { ...error(429, 'rate_limited', 'Rate limit exceeded: 120 requests per minute per API key'), headers: { 'retry-after': '1' } };
    else reply = route(url);
    served.push({ target, origin: 'main', status: reply.status, carriedKey: carriesKey(req), ...(reply.page !== undefined && reply.status === 200 ? { page: reply.page } : {}) });
    send(res, reply);
  });

  // The other origin where one catalogue's page 2 lives. It answers without any key (a public
  // CDN would), so the only thing that keeps the key home is the client.
  const spill: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://spill.invalid');
    const parts = url.pathname.replace(/^\/api\/v2/, '').split('/').filter((p) => p !== '');
    const h = hosts.find((x) => x.uuid === parts[1]);
    const reply = h !== undefined && parts[2] === 'metrics' && parts.length === 3 ? catalogue(h, url, true) : error(404, 'not_found', 'no such route');
    served.push({ target: `${url.pathname}${url.search}`, origin: 'spill', status: reply.status, carriedKey: mentionsKey(req), ...(reply.page !== undefined ? { page: reply.page } : {}) });
    send(res, reply);
  });

  const listen = async (s: Server) => {
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return (s.address() as AddressInfo).port;
  };
  base = `http://127.0.0.1:${await listen(main)}/api/v2`;
  // Another origin: the same loopback address on another port.
  spillBase = `http://127.0.0.1:${await listen(spill)}/api/v2`;
  const close = (s: Server) => new Promise<void>((resolve) => {
    s.closeAllConnections();
    s.close(() => resolve());
  });
  return {
    baseUrl: base,
    spillBaseUrl: spillBase,
    served,
    startedAt,
    close: async () => {
      await Promise.all([close(main), close(spill)]);
    },
  };
}
