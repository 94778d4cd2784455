import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { FakeClock } from '../../src/lib/clock.js';
import type { RunningSimulator, ShapeEndpoint } from '../../simulator/index.js';
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
  type SimWebsiteCheck,
} from '../../simulator/monitoring/schemas.js';
import { SimReleaseRecord, SimVersionAnswer, SimSourceAnswer, SimAssetsAnswer } from '../../simulator/releases/schemas.js';
import {
  AltAccountBody,
  AltAlertRuleList,
  AltComponentList,
  AltLatestValue,
  AltMetricCatalogue,
  AltWebsiteCheckList,
  AltWebsiteList,
  AltWebsiteSummary,
} from '../../simulator/shapes/alt-schemas.js';
import { buildMonitoringOpenApi } from '../../simulator/openapi.js';
import { call, parseWith, startTestSimulator, type Answer } from './monitoring-helpers.js';

/**
 * Both shape sets over HTTP. For every body the seeds leave "not shown", the alternative
 * body must (1) differ from the standard one, (2) match its own schema, (3) stay legal
 * against the seed (snake_case keys, RFC 3339 UTC timestamps, the seed's field names where
 * it lists them), and (4) carry the same data: the normalisers below, written here and not
 * taken from the simulator, turn it back into the standard body.
 */

let sim: RunningSimulator;
let clock: FakeClock;
let host: { uuid: string };
let websiteId: number;

const get = (path: string): Promise<Answer> => call(`${sim.monitoringBaseUrl}${path}`, { key: sim.keys.pro });
const admin = (path: string, method = 'GET', body?: unknown): Promise<Answer> =>
  call(`${sim.adminUrl}${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });

/** The same request in both shape sets, at the same simulated moment. */
async function both(url: string, endpoint: ShapeEndpoint, headers: Record<string, string> = { 'x-api-key': sim.keys.pro }): Promise<{ standard: unknown; alt: unknown }> {
  await admin('/shapes', 'DELETE');
  const standard = await call(url, { headers });
  await admin('/shapes', 'POST', { endpoints: { [endpoint]: 'alt' } });
  const alt = await call(url, { headers });
  await admin('/shapes', 'DELETE');
  expect(standard.status, url).toBe(200);
  expect(alt.status, url).toBe(200);
  return { standard: standard.json, alt: alt.json };
}
const monitoring = (path: string, endpoint: ShapeEndpoint) => both(`${sim.monitoringBaseUrl}${path}`, endpoint);

function keysOf(value: unknown, parentKey = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => keysOf(v, parentKey));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [...(parentKey === 'metrics' || parentKey === 'series' ? [] : [key]), ...keysOf(inner, key)]);
}

function timestamps(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(timestamps);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [...(/(_at|^timestamp)$/.test(key) && typeof inner === 'string' ? [inner] : []), ...timestamps(inner)]);
}

/** What the seed asks of every body: snake_case keys, RFC 3339 UTC timestamps. */
function expectSeedLegal(body: unknown, what: string): void {
  for (const key of keysOf(body)) expect(key, what).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
  for (const stamp of timestamps(body)) expect(stamp, what).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/);
}

function checked<S extends z.ZodType>(schema: S, body: unknown, what: string): z.infer<S> {
  expectSeedLegal(body, what);
  return parseWith(schema, body);
}

const instant = (t: string | null | undefined): number | null | undefined => (typeof t === 'string' ? Date.parse(t) : t);
const record = (value: unknown): Record<string, unknown> => value as Record<string, unknown>;

/** An alternative check back in the standard form, for a check that got a response. */
function standardCheck(alt: Record<string, unknown>): Record<string, unknown> {
  const { fsly_cache_status: cacheStatus, fsly_datacenter: datacenter, ...rest } = alt;
  return { ...rest, cf_cache_status: cacheStatus, cf_datacenter: datacenter };
}

/** Seed check fields; the two CDN fields carry a provider abbreviation (`<abbr>_cache_status`). */
const SEED_CHECK_FIELDS = [
  'id', 'success', 'status_code', 'ttfb_ms', 'http_version', 'tls_version', 'cert_days_remaining', 'checked_at', 'dns_lookup',
  'tls_handshake', 'security_score', 'has_hsts', 'has_x_frame_options', 'has_x_content_type_options', 'has_csp', 'has_referrer_policy',
  'has_permissions_policy',
];

function expectSeedCheck(check: Record<string, unknown>): void {
  for (const field of SEED_CHECK_FIELDS) expect(Object.keys(check), field).toContain(field);
  expect(Object.keys(check).filter((k) => /^[a-z]+_cache_status$/.test(k))).toHaveLength(1);
  expect(Object.keys(check).filter((k) => /^[a-z]+_datacenter$/.test(k))).toHaveLength(1);
}

/** Compares checks; one that got no response reports nulls in the alternative set. */
function expectSameChecks(standard: readonly SimWebsiteCheck[], alt: readonly unknown[]): { timeouts: number } {
  expect(alt).toHaveLength(standard.length);
  let timeouts = 0;
  standard.forEach((check, k) => {
    const other = record(alt[k]);
    expectSeedCheck(other);
    if (check.status_code !== 0) {
      expect(standardCheck(other)).toEqual(check);
      return;
    }
    timeouts++;
    expect(other).toMatchObject({ id: check.id, success: false, checked_at: check.checked_at, status_code: null, ttfb_ms: null, tls_version: null, cert_days_remaining: null });
  });
  return { timeouts };
}

beforeAll(async () => {
  ({ sim, clock } = await startTestSimulator());
  clock.advance(2 * 3_600_000);
  const hosts = parseWith(SimHostList, (await get('/hosts')).json).hosts;
  const chosen = hosts.find((h) => h.allowed && h.server_kinds.includes('application-server') && h.server_kinds.length > 1) ?? hosts.find((h) => h.allowed);
  host = chosen!;
  websiteId = parseWith(SimWebsiteList, (await get('/websites')).json).websites[0]!.id;
});

afterAll(async () => {
  await sim.close();
});

describe('Monitoring API: every "not shown" body in both shape sets', () => {
  it('/account: {data: ...} with rate_limit.per_minute, same plan, limits and usage', async () => {
    const { standard, alt } = await monitoring('/account', 'account');
    const s = checked(SimAccountBody, standard, 'standard /account');
    const a = checked(AltAccountBody, alt, 'alt /account').data;
    expect(alt).not.toEqual(standard);
    expect(a.rate_limit).toMatchObject({ per_minute: s.rate_limit!.requests_per_minute, burst: s.rate_limit!.burst });
    expect({ id: a.id, name: a.name, plan: a.plan, limits: a.limits, usage: a.usage }).toEqual({ id: s.id, name: s.name, plan: s.plan, limits: s.limits, usage: s.usage });
  });

  it('/hosts/{uuid}/metrics: the groups as a list under items, the same names', async () => {
    const { standard, alt } = await monitoring(`/hosts/${host.uuid}/metrics`, 'metrics');
    const s = checked(SimMetricCatalogue, standard, 'standard catalogue');
    const a = checked(AltMetricCatalogue, alt, 'alt catalogue');
    expect(alt).not.toEqual(standard);
    expect(Object.fromEntries(a.items.map((g) => [g.component, g.metrics]))).toEqual(s.metrics);
    expect(JSON.stringify(alt)).not.toContain(host.uuid);
  });

  it('/hosts/{uuid}/metrics/{name}/latest: {data: {timestamp, value}} without host and name, same point', async () => {
    for (const name of ['system.cpu.user', 'nginx.http.request.count', 'system.disk.in_use|/']) {
      const path = `/hosts/${host.uuid}/metrics/${encodeURIComponent(name)}/latest`;
      if ((await get(path)).status !== 200) continue;
      const { standard, alt } = await monitoring(path, 'latest');
      const s = checked(SimLatestValue, standard, 'standard latest');
      const a = checked(AltLatestValue, alt, 'alt latest').data;
      expect(alt).not.toEqual(standard);
      expect(s.value).not.toBeNull();
      expect({ at: instant(a.timestamp), value: a.value }).toEqual({ at: instant(s.timestamp), value: s.value });
    }
  });

  it('/hosts/{uuid}/components: a bare list of what the agent reports (type, local id, display name, details), no host uuid', async () => {
    const { standard, alt } = await monitoring(`/hosts/${host.uuid}/components`, 'components');
    const s = checked(SimComponentList, standard, 'standard components').components;
    const a = checked(AltComponentList, alt, 'alt components');
    expect(s.length).toBeGreaterThan(0);
    expect(a.map((c) => c.local_id)).toEqual(s.map((c) => c.id));
    const software: Record<string, string[]> = { nginx: ['nginx'], phpfpm: ['php-fpm'], phpfpm_pool: ['php-fpm'], mysql: ['mysql', 'mariadb'], varnish: ['varnish'] };
    a.forEach((c, k) => {
      const standardOne = s[k]!;
      expect(c.display_name).toBe(standardOne.name);
      expect(software[c.type]).toContain(standardOne.software);
      expect(c.version.startsWith(standardOne.version)).toBe(true);
      if (c.pid !== undefined) expect(c.pid).toBe(standardOne.pid);
      expect('host_uuid' in c).toBe(false);
      if (c.type === 'nginx') expect(c).toMatchObject({ plus: { enabled: expect.any(Boolean) as unknown }, configure: expect.stringContaining('--') as unknown, path: { bin: '/usr/sbin/nginx' } });
      if (c.type === 'phpfpm_pool') expect(c).toMatchObject({ name: 'www', listen: expect.any(String) as unknown, status_path: '/status' });
    });
    expect(a.some((c) => c.type === 'phpfpm_pool')).toBe(true);
  });

  it('/alerts: rules under alerts with total; conditions as expressions or with a numeric-string threshold; ids as numbers or strings', async () => {
    const { standard, alt } = await monitoring('/alerts', 'alert-rules');
    const s = checked(SimAlertRuleList, standard, 'standard rules').rules;
    const a = checked(AltAlertRuleList, alt, 'alt rules');
    expect(a.total).toBe(s.length);
    expect(s.length).toBeGreaterThanOrEqual(2);
    const back = a.alerts.map((rule) => {
      const r = record(rule);
      const condition =
        typeof r.expression === 'string'
          ? (([metric, operator, threshold]) => ({ metric, operator, threshold: Number(threshold) }))(r.expression.split(' '))
          : { metric: r.metric, operator: r.operator, threshold: Number(r.threshold) };
      return {
        id: Number(r.id),
        name: r.name,
        ...condition,
        duration_seconds: r.duration_seconds,
        enabled: r.enabled,
        host_uuid: r.host_uuid ?? null,
        ...(r.host_uuids === undefined ? {} : { host_uuids: r.host_uuids }),
        created_at: new Date(Date.parse(r.created_at as string)).toISOString(),
      };
    });
    expect(back).toEqual(s);
    expect(a.alerts.some((r) => 'expression' in r)).toBe(true);
    expect(a.alerts.some((r) => typeof record(r).threshold === 'string')).toBe(true);
    expect(a.alerts.some((r) => typeof r.id === 'string')).toBe(true);
  });

  it('/websites: results with count and paging, no total, ids as numeric strings, the same aggregates', async () => {
    const { standard, alt } = await monitoring('/websites', 'websites');
    const s = checked(SimWebsiteList, standard, 'standard websites').websites;
    const a = checked(AltWebsiteList, alt, 'alt websites');
    expect('total' in record(alt)).toBe(false);
    const back = a.results.map((site) => {
      const { monitor_type: _type, regions: _regions, ...rest } = record(site);
      return { ...rest, id: Number(site.id), last_checked_at: new Date(Date.parse(site.last_checked_at as string)).toISOString(), last_status_code: site.last_status_code ?? 0 };
    });
    expect(back).toEqual(s.map((site) => ({ ...site, last_status_code: site.last_status_code ?? 0 })));
    expect(a.results.every((site) => typeof site.id === 'string')).toBe(true);
  });

  it('/websites/{id}: the summary under data, id as a numeric string, the same figures', async () => {
    const { standard, alt } = await monitoring(`/websites/${websiteId}`, 'website');
    const s = checked(SimWebsiteSummary, standard, 'standard summary');
    const a = checked(AltWebsiteSummary, alt, 'alt summary').data;
    expect(alt).not.toEqual(standard);
    expect(a.id).toBe(String(s.id));
    expect([a.uptime_pct_24h, a.uptime_pct_7d, a.uptime_pct_30d, a.avg_ttfb_ms_24h]).toEqual([s.uptime_pct_24h, s.uptime_pct_7d, s.uptime_pct_30d, s.avg_ttfb_ms_24h]);
    expect({ ...a.tls, cert_expires_at: instant(a.tls?.cert_expires_at) }).toEqual({ ...s.tls, cert_expires_at: instant(s.tls?.cert_expires_at) });
    expect(a.recent_checks).toEqual(s.recent_checks);
  });

  it('checks: the seed\'s envelope; a check that got no response has null status, timings and TLS; CDN fields under another provider abbreviation', async () => {
    // Find, from the world, a check that timed out, and ask for a window that starts at it.
    const account = sim.world.accountByKey(sim.keys.pro)!;
    const now = clock.now();
    let timeout: { id: number; at: number } | undefined;
    for (const site of account.websites(now)) {
      const found = account.checks(site.id, now - 20 * 86_400_000, now).find((c) => c.status_code === 0);
      if (found) timeout = { id: site.id, at: Date.parse(found.checked_at) };
      if (timeout) break;
    }
    expect(timeout, 'a timed-out check in the last 20 days').toBeDefined();
    const minutes = Math.ceil((now - timeout!.at) / 60_000);
    const { standard, alt } = await monitoring(`/websites/${timeout!.id}/checks?since=${minutes}m&limit=30`, 'checks');
    const s = checked(SimWebsiteCheckList, standard, 'standard checks');
    const a = checked(AltWebsiteCheckList, alt, 'alt checks');
    expect(alt).not.toEqual(standard);
    expect({ website_id: a.website_id, total: a.total }).toEqual({ website_id: s.website_id, total: s.total });
    expect(expectSameChecks(s.checks, a.checks).timeouts).toBeGreaterThan(0);

    // The summary's recent checks follow the checks shape too.
    const summary = await monitoring(`/websites/${websiteId}`, 'checks');
    const standardSummary = parseWith(SimWebsiteSummary, summary.standard);
    expectSameChecks(standardSummary.recent_checks ?? [], record(summary.alt).recent_checks as unknown[]);
  });

  it('what the seed shows stays as the seed writes it in the alternative set: hosts, series, events', async () => {
    await admin('/shapes', 'POST', { default: 'alt' });
    try {
      for (const path of ['/hosts', `/hosts/${host.uuid}`, `/hosts/${host.uuid}/metrics/series?names=system.cpu.user`, '/alerts/recent']) {
        const altAnswer = await get(path);
        await admin('/shapes', 'DELETE');
        const standardAnswer = await get(path);
        await admin('/shapes', 'POST', { default: 'alt' });
        expect(altAnswer.json, path).toEqual(standardAnswer.json);
      }
    } finally {
      await admin('/shapes', 'DELETE');
    }
  });
});

describe('Release Lookup API: every "not shown" body in both shape sets', () => {
  const market = (path: string, endpoint: ShapeEndpoint) => both(`${sim.marketplaceBaseUrl}${path}`, endpoint, { 'x-rapidapi-key': sim.keys.marketplace });

  it('marketplace /version: {version} or a bare string', async () => {
    const { standard, alt } = await market('/version?project=nginx', 'marketplace-version');
    expect(standard).toEqual({ version: '1.27.3' });
    expect(alt).toBe('1.27.3');
    expect(SimVersionAnswer.safeParse(alt).success).toBe(true);
  });

  it('marketplace /source: {source} or the bare URL', async () => {
    const { standard, alt } = await market('/source?project=nginx', 'marketplace-source');
    expect(alt).toBe(record(standard).source);
    expect(SimSourceAnswer.safeParse(alt).success).toBe(true);
  });

  it('marketplace /assets: {assets} or the bare list', async () => {
    const { standard, alt } = await market('/assets?project=curl', 'marketplace-assets');
    expect(alt).toEqual(record(standard).assets);
    expect((alt as unknown[]).length).toBe(5);
    expect(SimAssetsAnswer.safeParse(alt).success).toBe(true);
  });

  it('free ?version: a bare string or {version}', async () => {
    const { standard, alt } = await both(`${sim.releasesBaseUrl}/torvalds/linux?version`, 'free-version', {});
    expect(standard).toBe('6.12');
    expect(alt).toEqual({ version: '6.12' });
  });

  it.each([
    ['marketplace /release of a bare tag (empty lists, v prefix)', '/release?project=php'],
    ['marketplace /release of a release with assets', '/release?project=curl'],
  ])('the record: %s keeps version and type; empty lists and a false v_prefix may be left out, unknown fields added', async (_what, path) => {
    const { standard, alt } = await market(path, 'release-record');
    const s = parseWith(SimReleaseRecord, standard);
    const a = parseWith(SimReleaseRecord, alt);
    expect({ version: a.version, type: a.type }).toEqual({ version: s.version, type: s.type });
    const { prerelease, draft, ...rest } = record(alt);
    expect({ prerelease, draft }).toEqual({ prerelease: false, draft: false });
    expect({ assets: [], assets_with_digests: [], v_prefix: false, ...rest }).toEqual({ assets: [], assets_with_digests: [], v_prefix: false, ...record(standard) });
    expect(alt).not.toEqual(standard);
  });

  it('the free endpoint\'s full record follows release-record too', async () => {
    const { standard, alt } = await both(`${sim.releasesBaseUrl}/php/php-src`, 'release-record', {});
    expect(record(standard).assets).toEqual([]);
    expect('assets' in record(alt)).toBe(false);
  });
});

describe('selecting shapes', () => {
  it('startSimulator({shapes, shapeOverrides}): a default for every endpoint, overridden per endpoint', async () => {
    const { sim: other } = await startTestSimulator({ shapes: 'alt', shapeOverrides: { websites: 'standard' } });
    try {
      const websites = await call(`${other.monitoringBaseUrl}/websites`, { key: other.keys.pro });
      const rules = await call(`${other.monitoringBaseUrl}/alerts`, { key: other.keys.pro });
      expect(parseWith(SimWebsiteList, websites.json).total).toBeGreaterThan(0);
      expect(parseWith(AltAlertRuleList, rules.json).alerts.length).toBeGreaterThan(0);
      expect(other.shapes.view().effective).toMatchObject({ websites: 'standard', 'alert-rules': 'alt', 'marketplace-version': 'alt' });
    } finally {
      await other.close();
    }
  });

  it('startSimulator refuses an unknown shape set or endpoint, naming it', async () => {
    await expect(startTestSimulator({ shapes: 'fancy' as never })).rejects.toThrow(/shapes must be one of standard, alt/);
    await expect(startTestSimulator({ shapeOverrides: { hosts: 'alt' } as never })).rejects.toThrow(/hosts=alt/);
  });

  it('/_sim/shapes: GET shows the selection, POST changes it (JSON or query), DELETE goes back to standard; nonsense is 400', async () => {
    expect((await admin('/shapes')).json).toMatchObject({ default: 'standard', endpoints: {}, effective: { account: 'standard' } });
    expect((await admin('/shapes?default=alt&checks=standard', 'POST')).json).toMatchObject({ default: 'alt', endpoints: { checks: 'standard' } });
    expect((await admin('/shapes', 'POST', { endpoints: { website: 'standard' } })).json).toMatchObject({
      default: 'alt',
      endpoints: { checks: 'standard', website: 'standard' },
      effective: { checks: 'standard', website: 'standard', websites: 'alt' },
    });
    expect(Array.isArray(parseWith(AltComponentList, (await get(`/hosts/${host.uuid}/components`)).json))).toBe(true);
    expect((await admin('/shapes', 'DELETE')).json).toMatchObject({ default: 'standard', endpoints: {} });
    for (const [query, body] of [['?default=fancy', undefined], ['?hosts=alt', undefined], ['', { default: 'alt', extra: 1 }], ['', { endpoints: { websites: 'x' } }]] as const) {
      const answer = await admin(`/shapes${query}`, 'POST', body);
      expect(answer.status, `${query} ${JSON.stringify(body)}`).toBe(400);
      expect((answer.json as { message: string }).message.length).toBeGreaterThan(10);
    }
    expect((await admin('/shapes')).json).toMatchObject({ default: 'standard' });
  });

  it('the OpenAPI document describes the shapes in use and stays a valid OpenAPI 3.1 document', async () => {
    const standardDoc = buildMonitoringOpenApi();
    const altDoc = buildMonitoringOpenApi({ shapes: { of: () => 'alt' } }) as { paths: Record<string, { get: { responses: { '200': { content: { 'application/json': { schema: { $ref: string } } } } } } }> };
    const validator = new Validator();
    const result = await validator.validate(altDoc);
    expect(result.errors ?? []).toEqual([]);
    expect(altDoc.paths['/websites']!.get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/AltWebsiteList');
    expect(altDoc.paths['/hosts']!.get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/HostList');
    expect(JSON.stringify(standardDoc)).not.toEqual(JSON.stringify(altDoc));
    await admin('/shapes', 'POST', { endpoints: { websites: 'alt' } });
    const served = (await call(`${sim.monitoringBaseUrl}/openapi.json`)).json as typeof altDoc;
    await admin('/shapes', 'DELETE');
    expect(served.paths['/websites']!.get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/AltWebsiteList');
    expect(served.paths['/alerts']!.get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/AlertRuleList');
  });
});
