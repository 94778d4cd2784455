import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { FakeClock } from '../../src/lib/clock.js';
import type { RunningSimulator, ShapeEndpoint, ShapeSet } from '../../simulator/index.js';
import { buildMonitoringOpenApi } from '../../simulator/openapi.js';
import {
  SimAccountBody,
  SimAlertRuleList,
  SimComponentList,
  SimHostList,
  SimLatestValue,
  SimMetricCatalogue,
  SimWebsiteCheckList,
  SimWebsiteList,
  SimWebsiteSummary,
  type SimAlertRule,
  type SimWebsite,
  type SimWebsiteCheck,
} from '../../simulator/monitoring/schemas.js';
import {
  NestedAccountBody,
  NestedAlertRuleList,
  NestedComponentList,
  NestedLatestValue,
  NestedMetricCatalogue,
  NestedWebsiteCheckList,
  NestedWebsiteList,
  NestedWebsiteSummary,
} from '../../simulator/shapes/nested-schemas.js';
import { call, parseWith, startTestSimulator, type Answer } from './monitoring-helpers.js';

/**
 * The nested shape set over HTTP. For every body the seed leaves "not shown", the nested
 * body must (1) differ from the standard one, (2) match its own (strict) schema, (3) stay
 * legal against the seed (snake_case keys, RFC 3339 UTC timestamps, the seed's check field
 * names), and (4) carry the same data: the functions below, written here from the layouts
 * in docs/simulator.md and not taken from the simulator, turn it back into the standard
 * body, which must come out equal for the same world at the same moment.
 */

let sim: RunningSimulator;
let clock: FakeClock;
let host: { uuid: string };

const get = (path: string): Promise<Answer> => call(`${sim.monitoringBaseUrl}${path}`, { key: sim.keys.pro });
const admin = (path: string, method = 'GET', body?: unknown): Promise<Answer> =>
  call(`${sim.adminUrl}${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });

/** The same request in the standard and the nested set, at the same simulated moment. */
async function both(path: string, endpoint: ShapeEndpoint, on: RunningSimulator = sim): Promise<{ standard: unknown; nested: unknown }> {
  const url = `${on.monitoringBaseUrl}${path}`;
  on.shapes.reset();
  const standard = await call(url, { key: on.keys.pro });
  on.shapes.set({ endpoints: { [endpoint]: 'nested' } });
  const nested = await call(url, { key: on.keys.pro });
  on.shapes.reset();
  expect(standard.status, path).toBe(200);
  expect(nested.status, path).toBe(200);
  expect(nested.json, path).not.toEqual(standard.json);
  return { standard: standard.json, nested: nested.json };
}

/** Keys under these hold data (component names such as `php-fpm`), not field names. */
const DATA_KEYED = new Set(['metrics']);

function keysOf(value: unknown, parentKey = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => keysOf(v, parentKey));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [...(DATA_KEYED.has(parentKey) ? [] : [key]), ...keysOf(inner, key)]);
}

function timestamps(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(timestamps);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [...(/(^|_)at$|^timestamp$/.test(key) && inner !== null ? [inner as string] : []), ...timestamps(inner)]);
}

/** snake_case keys (a period key such as `7d` or `24h` is lowercase words too) and RFC 3339 UTC strings for every time. */
function checked<S extends z.ZodType>(schema: S, body: unknown, what: string): z.infer<S> {
  for (const key of keysOf(body)) expect(key, what).toMatch(/^[a-z0-9]+(_[a-z0-9]+)*$/);
  const stamps = timestamps(body);
  for (const stamp of stamps) expect(stamp, what).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/);
  return parseWith(schema, body);
}

/** `"12.5"` → 12.5; null stays null. */
const num = (text: string | null | undefined): number | null => (text === null || text === undefined ? null : Number(text));
/** The standard set writes whole-second times without fractional digits. */
const seconds = (timestamp: string): string => new Date(Date.parse(timestamp)).toISOString().replace(/\.000Z$/, 'Z');
const iso = (timestamp: string): string => new Date(Date.parse(timestamp)).toISOString();

// ---- nested → standard, one function per body -----------------------------------------

function accountBack(n: z.infer<typeof NestedAccountBody>): SimAccountBody {
  const rate = n.rate_limit!;
  const perMinute = 'per' in rate ? rate.requests * 60 : rate.requests;
  return {
    id: n.account.id,
    name: n.account.name,
    plan: n.account.plan.name,
    limits: { hosts: n.quotas!.hosts.max!, websites: num(n.quotas!.websites.max)!, retention_days: num(n.account.plan.retention!.days)! },
    usage: { hosts: n.quotas!.hosts.used!, websites: n.quotas!.websites.used! },
    rate_limit: { requests_per_minute: perMinute, burst: rate.burst, remaining: num(rate.remaining)! },
  };
}

function catalogueBack(n: z.infer<typeof NestedMetricCatalogue>): SimMetricCatalogue {
  for (const group of Object.values(n.metrics)) expect(num(group.count)).toBe(group.names.length);
  return { host_uuid: n.host.uuid, metrics: Object.fromEntries(Object.entries(n.metrics).map(([component, group]) => [component, group.names])) };
}

function latestBack(n: z.infer<typeof NestedLatestValue>): SimLatestValue {
  return { host_uuid: n.host.uuid, name: n.metric.name, timestamp: n.latest.at === null ? null : seconds(n.latest.at), value: num(n.latest.value) };
}

const KIND_OF_SOFTWARE: Readonly<Record<string, SimComponentList['components'][number]['kind']>> = {
  nginx: 'web-server',
  'php-fpm': 'application-server',
  mysql: 'database',
  mariadb: 'database',
  varnish: 'cache',
};

function componentsBack(n: z.infer<typeof NestedComponentList>): SimComponentList['components'] {
  return Object.entries(n.components).flatMap(([group, items]) => {
    const software = group.replace(/_/g, '-');
    return (items ?? []).map((c) => ({
      id: c.id,
      kind: KIND_OF_SOFTWARE[software]!,
      software,
      name: c.name,
      version: c.version,
      ...(c.process ? { pid: num(c.process.pid)! } : {}),
      host_uuid: n.host.uuid,
    }));
  });
}

const OPERATORS: Readonly<Record<string, SimAlertRule['operator']>> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

function rulesBack(n: z.infer<typeof NestedAlertRuleList>): SimAlertRule[] {
  return n.alert_rules.map((r) => {
    const hosts = r.scope?.hosts ?? [];
    return {
      id: Number(r.id),
      name: r.name,
      metric: r.condition.metric,
      operator: OPERATORS[r.condition.op]!,
      threshold: num(r.condition.value)!,
      ...(r.condition.duration ? { duration_seconds: r.condition.duration.seconds } : {}),
      enabled: r.state === 'enabled',
      host_uuid: hosts.length === 1 ? hosts[0]! : null,
      ...(hosts.length > 1 ? { host_uuids: hosts } : {}),
      created_at: iso(r.created.at),
    };
  });
}

function websiteBack(n: z.infer<typeof NestedWebsiteList>['data']['websites'][number]): SimWebsite {
  const day = n.stats.last_24h;
  return {
    id: n.id,
    name: n.name,
    url: n.url,
    enabled: n.status === 'active',
    ...(n.schedule ? { check_interval_seconds: num(n.schedule.interval_seconds)! } : {}),
    up: n.last_check ? n.last_check.state === 'up' : true,
    last_checked_at: n.last_check?.at ?? null,
    last_status_code: num(n.last_check?.status_code),
    checks_24h: day.checks!,
    failures_24h: num(day.failures)!,
    uptime_pct_24h: day.uptime,
    avg_ttfb_ms_24h: day.ttfb.avg_ms,
    p95_ttfb_ms_24h: num(day.ttfb.p95_ms),
  };
}

function checkBack(n: Record<string, unknown>): SimWebsiteCheck {
  const { tls, cf, ...rest } = n as { tls: { version: string; handshake: number; cert_days_remaining: number }; cf: { cache_status: string | null; datacenter: string | null } | null };
  return {
    ...(rest as Omit<SimWebsiteCheck, 'tls_version' | 'tls_handshake' | 'cert_days_remaining'>),
    tls_version: tls.version,
    tls_handshake: tls.handshake,
    cert_days_remaining: tls.cert_days_remaining,
    cf_cache_status: cf?.cache_status ?? null,
    cf_datacenter: cf?.datacenter ?? null,
  };
}

const ratioToPct = (ratio: number | null): number | null => (ratio === null ? null : Math.round(ratio * 100_000) / 1000);

function summaryBack(n: z.infer<typeof NestedWebsiteSummary>, recent: (c: Record<string, unknown>) => SimWebsiteCheck): SimWebsiteSummary {
  const cert = n.tls?.certificate;
  return {
    id: n.website.id,
    name: n.website.name,
    url: n.website.url,
    uptime_pct_24h: ratioToPct(n.windows['24h'].uptime_ratio),
    uptime_pct_7d: ratioToPct(n.windows['7d'].uptime_ratio),
    uptime_pct_30d: ratioToPct(n.windows['30d'].uptime_ratio),
    avg_ttfb_ms_24h: num(n.windows['24h'].ttfb.avg_ms),
    ...(n.tls && cert
      ? { tls: { version: n.tls.version, cert_days_remaining: num(cert.days_remaining)!, ...(cert.expires_at ? { cert_expires_at: cert.expires_at } : {}), ...(cert.issuer ? { issuer: cert.issuer } : {}) } }
      : {}),
    ...(n.checks ? { recent_checks: n.checks.recent.map((c) => recent(c as Record<string, unknown>)) } : {}),
  };
}

// ----------------------------------------------------------------------------------------

beforeAll(async () => {
  ({ sim, clock } = await startTestSimulator());
  clock.advance(2 * 3_600_000);
  const hosts = parseWith(SimHostList, (await get('/hosts')).json).hosts;
  host = hosts.find((h) => h.allowed && h.server_kinds.includes('application-server') && h.server_kinds.length > 1) ?? hosts.find((h) => h.allowed)!;
});

afterAll(async () => {
  await sim.close();
});

describe('Monitoring API: every "not shown" body in the nested set carries the standard data', () => {
  it('/account: account and plan, quotas {max, used}, the rate limit as a count per minute; numbers as strings', async () => {
    const { standard, nested } = await both('/account', 'account');
    const s = checked(SimAccountBody, standard, 'standard /account');
    const n = checked(NestedAccountBody, nested, 'nested /account');
    // The nested request came second and took one more token.
    expect(accountBack(n)).toEqual({ ...s, rate_limit: { ...s.rate_limit, remaining: s.rate_limit!.remaining! - 1 } });
    expect(n.rate_limit).toMatchObject({ period: '1m', requests: 1_000_000 });
    expect(typeof n.quotas?.websites.max).toBe('string');
  });

  it('/account at 120 a minute: the same limit as 2 requests per second', async () => {
    const { sim: limited } = await startTestSimulator({ rateLimitPerMinute: 120, burst: 30 });
    try {
      const { standard, nested } = await both('/account', 'account', limited);
      const s = checked(SimAccountBody, standard, 'standard /account');
      const n = checked(NestedAccountBody, nested, 'nested /account');
      expect(n.rate_limit).toMatchObject({ requests: 2, per: 'second', burst: 30 });
      expect(accountBack(n).rate_limit?.requests_per_minute).toBe(s.rate_limit?.requests_per_minute);
      expect(s.rate_limit?.requests_per_minute).toBe(120);
    } finally {
      await limited.close();
    }
  });

  it('/hosts/{uuid}/metrics: each component a {count, names} object under metrics, the host under host', async () => {
    const { standard, nested } = await both(`/hosts/${host.uuid}/metrics`, 'metrics');
    const s = checked(SimMetricCatalogue, standard, 'standard catalogue');
    expect(catalogueBack(checked(NestedMetricCatalogue, nested, 'nested catalogue'))).toEqual(s);
  });

  it('/hosts/{uuid}/metrics/{name}/latest: {host, metric, latest: {at, value}} with the value a numeric string', async () => {
    let compared = 0;
    for (const name of ['system.cpu.user', 'nginx.http.request.count', 'system.disk.in_use|/', 'amplify.agent.status']) {
      const path = `/hosts/${host.uuid}/metrics/${encodeURIComponent(name)}/latest`;
      if ((await get(path)).status !== 200) continue;
      const { standard, nested } = await both(path, 'latest');
      const s = checked(SimLatestValue, standard, 'standard latest');
      const n = checked(NestedLatestValue, nested, 'nested latest');
      expect(s.value).not.toBeNull();
      expect(typeof n.latest.value).toBe('string');
      expect(latestBack(n)).toEqual(s);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(3);
  });

  it('/hosts/{uuid}/components: lists grouped by software, items without type, kind or software', async () => {
    const { standard, nested } = await both(`/hosts/${host.uuid}/components`, 'components');
    const s = checked(SimComponentList, standard, 'standard components').components;
    const n = checked(NestedComponentList, nested, 'nested components');
    expect(s.length).toBeGreaterThan(1);
    const byId = (list: readonly { id: string }[]) => [...list].sort((a, b) => a.id.localeCompare(b.id));
    expect(byId(componentsBack(n))).toEqual(byId(s));
    // Within a group the order is the standard list's.
    for (const [group, items] of Object.entries(n.components)) {
      expect(items?.map((c) => c.id)).toEqual(s.filter((c) => c.software === group.replace(/_/g, '-')).map((c) => c.id));
    }
    expect(Object.keys(n.components).length).toBeGreaterThan(1);
    expect(JSON.stringify(n.components)).not.toMatch(/"(type|kind|software)"/);
  });

  it('/alerts: conditions as objects with word operators and string values, states as words, scopes of host lists', async () => {
    const { standard, nested } = await both('/alerts', 'alert-rules');
    const s = checked(SimAlertRuleList, standard, 'standard rules').rules;
    const n = checked(NestedAlertRuleList, nested, 'nested rules');
    expect(rulesBack(n)).toEqual(s);
    expect(n.alert_rules.some((r) => (r.scope?.hosts.length ?? 0) > 1)).toBe(true);
    expect(n.alert_rules.some((r) => r.scope === undefined)).toBe(true);
  });

  it('/websites: status as a word, stats under last_24h with ttfb {avg_ms, p95_ms}, the uptime a percentage its name does not state', async () => {
    const { standard, nested } = await both('/websites', 'websites');
    const s = checked(SimWebsiteList, standard, 'standard websites');
    const n = checked(NestedWebsiteList, nested, 'nested websites');
    expect(n.meta.total).toBe(s.total);
    expect(n.data.websites.map(websiteBack)).toEqual(s.websites);
    const uptimes = n.data.websites.map((w) => w.stats.last_24h.uptime).filter((u) => u !== null);
    expect(uptimes.length).toBeGreaterThan(0);
    for (const uptime of uptimes) expect(uptime).toBeGreaterThan(1);
    expect(n.data.websites.map((w) => w.status)).toContain('paused');
  });

  it('/websites/{id}: windows keyed by period with uptime ratios, TLS under certificate, recent checks under checks', async () => {
    const websites = parseWith(SimWebsiteList, (await get('/websites')).json).websites;
    expect(websites.length).toBeGreaterThan(1);
    for (const site of websites) {
      const { standard, nested } = await both(`/websites/${site.id}`, 'website');
      const s = checked(SimWebsiteSummary, standard, 'standard summary');
      const n = checked(NestedWebsiteSummary, nested, 'nested summary');
      expect(summaryBack(n, (c) => c as unknown as SimWebsiteCheck)).toEqual(s);
      for (const window of Object.values(n.windows)) if (window.uptime_ratio !== null) expect(window.uptime_ratio).toBeLessThanOrEqual(1);
      if (!site.enabled) expect(n.checks?.recent).toEqual([]);
    }
  });

  it('checks: the seed\'s envelope and field names, TLS details under tls, CDN fields under cf (null behind no CDN)', async () => {
    // A window with a check that got no response, on a site behind a CDN and one behind none.
    const account = sim.world.accountByKey(sim.keys.pro)!;
    const now = clock.now();
    const withTimeout = account
      .websites(now)
      .map((site) => ({ site, timeout: account.checks(site.id, now - 20 * 86_400_000, now).find((c) => c.status_code === 0) }))
      .find((x) => x.timeout);
    expect(withTimeout, 'a timed-out check in the last 20 days').toBeDefined();
    const minutes = Math.ceil((now - Date.parse(withTimeout!.timeout!.checked_at)) / 60_000);
    let cdn = 0;
    let noCdn = 0;
    for (const path of [`/websites/${withTimeout!.site.id}/checks?since=${minutes}m&limit=30`, ...account.websites(now).map((w) => `/websites/${w.id}/checks?limit=5`)]) {
      const { standard, nested } = await both(path, 'checks');
      const s = checked(SimWebsiteCheckList, standard, 'standard checks');
      const n = checked(NestedWebsiteCheckList, nested, 'nested checks');
      expect({ ...n, checks: n.checks.map((c) => checkBack(c)) }).toEqual(s);
      for (const c of n.checks) {
        for (const field of ['id', 'success', 'status_code', 'ttfb_ms', 'http_version', 'checked_at', 'dns_lookup', 'security_score', 'has_hsts', 'has_csp']) expect(c).toHaveProperty(field);
        if (c.cf === null) noCdn++;
        else cdn++;
      }
    }
    expect(cdn).toBeGreaterThan(0);
    expect(noCdn).toBeGreaterThan(0);

    // The summary's recent checks follow the checks shape too, in the standard summary.
    const site = account.websites(now)[0]!;
    const summary = await both(`/websites/${site.id}`, 'checks');
    const standardSummary = parseWith(SimWebsiteSummary, summary.standard);
    expect(((summary.nested as { recent_checks: Record<string, unknown>[] }).recent_checks).map(checkBack)).toEqual(standardSummary.recent_checks);
  });

  it('the nested summary with nested checks: both read back to the standard summary', async () => {
    const site = parseWith(SimWebsiteList, (await get('/websites')).json).websites[0]!;
    sim.shapes.reset();
    const standard = parseWith(SimWebsiteSummary, (await get(`/websites/${site.id}`)).json);
    sim.shapes.set({ endpoints: { website: 'nested', checks: 'nested' } });
    const nested = checked(NestedWebsiteSummary, (await get(`/websites/${site.id}`)).json, 'nested summary, nested checks');
    sim.shapes.reset();
    expect(nested.checks?.recent.length).toBeGreaterThan(0);
    expect(summaryBack(nested, checkBack)).toEqual(standard);
  });

  it('what the seed shows stays as the seed writes it in the nested set: hosts, series, events; the Release Lookup bodies stay standard', async () => {
    const paths = [
      `${sim.monitoringBaseUrl}/hosts`,
      `${sim.monitoringBaseUrl}/hosts/${host.uuid}`,
      `${sim.monitoringBaseUrl}/hosts/${host.uuid}/metrics/series?names=system.cpu.user`,
      `${sim.monitoringBaseUrl}/alerts/recent`,
      `${sim.releasesBaseUrl}/torvalds/linux?version`,
      `${sim.releasesBaseUrl}/php/php-src`,
    ];
    for (const url of paths) {
      sim.shapes.set({ default: 'nested' });
      const nested = await call(url, { key: sim.keys.pro });
      sim.shapes.reset();
      const standard = await call(url, { key: sim.keys.pro });
      expect(nested.json, url).toEqual(standard.json);
    }
    for (const path of ['/version?project=nginx', '/release?project=curl', '/assets?project=curl']) {
      const url = `${sim.marketplaceBaseUrl}${path}`;
      sim.shapes.set({ default: 'nested' });
      const nested = await call(url, { headers: { 'x-rapidapi-key': sim.keys.marketplace } });
      sim.shapes.reset();
      const standard = await call(url, { headers: { 'x-rapidapi-key': sim.keys.marketplace } });
      expect(nested.status, path).toBe(200);
      expect(nested.json, path).toEqual(standard.json);
    }
  });
});

describe('the paused website and the rule bound to several hosts, in every shape set', () => {
  /** Per set, written from docs/simulator.md: the paused websites' ids, and the host lists of rules bound to several hosts. */
  const readers: Record<ShapeSet, { paused: (body: unknown) => number[]; scopes: (body: unknown) => string[][] }> = {
    standard: {
      paused: (body) => parseWith(SimWebsiteList, body).websites.filter((w) => !w.enabled).map((w) => w.id),
      scopes: (body) => parseWith(SimAlertRuleList, body).rules.flatMap((r) => (r.host_uuids ? [r.host_uuids] : [])),
    },
    alt: {
      paused: (body) => (body as { results: { id: string; enabled: boolean }[] }).results.filter((w) => !w.enabled).map((w) => Number(w.id)),
      scopes: (body) => (body as { alerts: { host_uuids?: string[] }[] }).alerts.flatMap((r) => (r.host_uuids ? [r.host_uuids] : [])),
    },
    nested: {
      paused: (body) => parseWith(NestedWebsiteList, body).data.websites.filter((w) => w.status === 'paused').map((w) => w.id),
      scopes: (body) => parseWith(NestedAlertRuleList, body).alert_rules.flatMap((r) => ((r.scope?.hosts.length ?? 0) > 1 ? [r.scope!.hosts] : [])),
    },
  };

  it.each(['standard', 'alt', 'nested'] as const)('%s: one paused website whose checks answer the seed\'s envelope, one rule scoped to 2-3 hosts', async (set) => {
    const expected = sim.world.accountByKey(sim.keys.pro)!;
    const truthPaused = expected.websites(clock.now()).filter((w) => !w.enabled).map((w) => w.id);
    const truthScopes = expected.alertRules().flatMap((r) => (r.host_uuids ? [r.host_uuids] : []));
    expect(truthPaused).toHaveLength(1);
    expect(truthScopes).toHaveLength(1);
    sim.shapes.set({ default: set });
    try {
      expect(readers[set].paused((await get('/websites')).json)).toEqual(truthPaused);
      expect(readers[set].scopes((await get('/alerts')).json)).toEqual(truthScopes);
      const checks = await get(`/websites/${truthPaused[0]}/checks?since=1d`);
      expect(checks.status).toBe(200);
      expect(checks.json).toEqual({ website_id: truthPaused[0], total: 0, checks: [] });
    } finally {
      sim.shapes.reset();
    }
    for (const hosts of truthScopes) expect(hosts.length === 2 || hosts.length === 3).toBe(true);
  });
});

describe('selecting the nested set', () => {
  it('startSimulator({shapes: "nested"}) and per-endpoint overrides', async () => {
    const { sim: other } = await startTestSimulator({ shapes: 'nested', shapeOverrides: { websites: 'standard', checks: 'alt' } });
    try {
      expect(parseWith(SimWebsiteList, (await call(`${other.monitoringBaseUrl}/websites`, { key: other.keys.pro })).json).total).toBeGreaterThan(0);
      expect(parseWith(NestedAlertRuleList, (await call(`${other.monitoringBaseUrl}/alerts`, { key: other.keys.pro })).json).alert_rules.length).toBeGreaterThan(0);
      expect(other.shapes.view().effective).toMatchObject({ websites: 'standard', checks: 'alt', account: 'nested', 'marketplace-version': 'nested' });
    } finally {
      await other.close();
    }
  });

  it('/_sim/shapes accepts nested as the default and per endpoint; the OpenAPI document follows and stays valid', async () => {
    expect((await admin('/shapes?default=nested&components=standard', 'POST')).json).toMatchObject({ default: 'nested', endpoints: { components: 'standard' } });
    expect((await admin('/shapes', 'POST', { endpoints: { website: 'alt' } })).json).toMatchObject({ effective: { website: 'alt', websites: 'nested', components: 'standard' } });
    const served = (await call(`${sim.monitoringBaseUrl}/openapi.json`)).json as { paths: Record<string, { get: { responses: { '200': { content: { 'application/json': { schema: { $ref: string } } } } } } }> };
    await admin('/shapes', 'DELETE');
    const schemaOf = (path: string): string => served.paths[path]!.get.responses['200'].content['application/json'].schema.$ref;
    expect(schemaOf('/websites')).toBe('#/components/schemas/NestedWebsiteList');
    expect(schemaOf('/websites/{id}')).toBe('#/components/schemas/AltWebsiteSummary');
    expect(schemaOf('/hosts/{uuid}/components')).toBe('#/components/schemas/ComponentList');
    expect(schemaOf('/hosts')).toBe('#/components/schemas/HostList');

    const doc = buildMonitoringOpenApi({ shapes: { of: () => 'nested' } });
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    const withNestedChecks = buildMonitoringOpenApi({ shapes: { of: (e) => (e === 'checks' ? 'nested' : 'standard') } }) as typeof served;
    expect(withNestedChecks.paths['/websites/{id}']!.get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/WebsiteSummaryWithNestedChecks');
  });

  it('/_sim/shapes refuses a set it does not know, listing nested among the known ones', async () => {
    const answer = await admin('/shapes?default=deep', 'POST');
    expect(answer.status).toBe(400);
    expect((answer.json as { message: string }).message).toContain('standard, alt, nested');
  });
});
