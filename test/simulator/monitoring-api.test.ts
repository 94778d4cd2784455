import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeClock } from '../../src/lib/clock.js';
import type { RunningSimulator } from '../../simulator/index.js';
import {
  SimAccountBody as Account,
  SimAlertEvent as AlertEvent,
  SimAlertRuleList as AlertRuleList,
  SimComponentList as ComponentList,
  SimErrorBody as ErrorBody,
  SimHost as Host,
  SimHostList as HostList,
  SimLatestValue as LatestValue,
  SimMetricCatalogue as MetricCatalogue,
  SimRecentAlerts as RecentAlerts,
  SimSeriesResponse as SeriesResponse,
  SimWebsiteCheck as WebsiteCheck,
  SimWebsiteCheckList as WebsiteCheckList,
  SimWebsiteList as WebsiteList,
  SimWebsiteSummary as WebsiteSummary,
} from '../../simulator/monitoring/schemas.js';
import { call, everyEndpoint, parseWith, RFC3339_SECONDS, startTestSimulator, type Answer } from './monitoring-helpers.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let sim: RunningSimulator;
let clock: FakeClock;
let hosts: Host[];
let allowedHost: Host;
let disallowedHost: Host;
let websiteId: number;

const get = (path: string, key: string = sim.keys.pro): Promise<Answer> => call(`${sim.monitoringBaseUrl}${path}`, { key });

beforeAll(async () => {
  ({ sim, clock } = await startTestSimulator());
  hosts = parseWith(HostList, (await get('/hosts')).json).hosts;
  allowedHost = hosts.find((h) => h.allowed && h.online)!;
  disallowedHost = hosts.find((h) => !h.allowed)!;
  websiteId = parseWith(WebsiteList, (await get('/websites')).json).websites[0]!.id;
});

afterAll(async () => {
  await sim.close();
});

function allEndpoints(): string[] {
  return everyEndpoint(allowedHost.uuid, websiteId);
}

/** Every key of a body, except keys of the two maps whose keys are data (metric and component names). */
function objectKeys(value: unknown, parentKey = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => objectKeys(v, parentKey));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => {
    const own = parentKey === 'series' || parentKey === 'metrics' ? [] : [key];
    return [...own, ...objectKeys(inner, key)];
  });
}

function timestampFields(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(timestampFields);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => {
    const isTime = /(_at|^last_seen|^timestamp|^since)$/.test(key) && typeof inner === 'string';
    return [...(isTime ? [inner] : []), ...timestampFields(inner)];
  });
}

describe('§1 what the service does', () => {
  it('§1: every endpoint answers GET with 200 and application/json', async () => {
    for (const path of [...allEndpoints(), '/openapi.json']) {
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type'), path).toMatch(/^application\/json/);
    }
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'])(
    '§1 read-only, §7: %s is 404 not_found (the seed\'s error table has no 405), with Allow: GET',
    async (method) => {
      for (const path of ['/hosts', `/hosts/${allowedHost.uuid}`, '/websites', '/openapi.json']) {
        const answer = await call(`${sim.monitoringBaseUrl}${path}`, { key: sim.keys.pro, method });
        expect(answer.status, `${method} ${path}`).toBe(404);
        expect(answer.headers.get('allow')).toBe('GET');
        if (method !== 'HEAD') expect(parseWith(ErrorBody, answer.json)).toMatchObject({ error: 'not_found', message: expect.stringContaining('GET') as unknown });
      }
    },
  );

  it('§1: every key of every response is snake_case', async () => {
    for (const path of allEndpoints()) {
      const keys = objectKeys((await get(path)).json);
      expect(keys.length, path).toBeGreaterThan(0);
      for (const key of keys) expect(key, `${path}: ${key}`).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
    }
  });

  it('§1: every timestamp is an RFC 3339 UTC string', async () => {
    let seen = 0;
    for (const path of allEndpoints()) {
      for (const stamp of timestampFields((await get(path)).json)) {
        seen++;
        expect(stamp, path).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
        expect(Number.isNaN(Date.parse(stamp))).toBe(false);
      }
    }
    expect(seen).toBeGreaterThan(50);
  });

  it('§1: access requires Pro or higher (Business works, Starter is refused)', async () => {
    expect((await get('/hosts', sim.keys.business)).status).toBe(200);
    expect((await get('/hosts', sim.keys.starter)).status).toBe(403);
  });

  it('§1: an OpenAPI 3 description is served at /api/v2/openapi.json', async () => {
    const answer = await call(`${sim.monitoringBaseUrl}/openapi.json`);
    expect(answer.status).toBe(200);
    expect((answer.json as { openapi: string }).openapi).toMatch(/^3\./);
  });
});

describe('§2 resources and their fields', () => {
  it('§2 Host: every field is present with its type', async () => {
    const fields = ['uuid', 'hostname', 'type', 'agent_version', 'last_seen', 'online', 'allowed', 'server_kinds', 'tags', 'created_at'];
    for (const host of parseWith(HostList, (await get('/hosts')).json).hosts) {
      expect(Object.keys(host).sort()).toEqual([...fields].sort());
      expect(host.uuid).toMatch(/^[0-9a-f]{32}$/);
      expect(host.server_kinds.every((k) => typeof k === 'string')).toBe(true);
    }
    const one = parseWith(Host, (await get(`/hosts/${allowedHost.uuid}`)).json);
    expect(one.uuid).toBe(allowedHost.uuid);
  });

  it('§2 Host: online is true exactly when the agent reported within the last 3 minutes', async () => {
    // Find, from the world itself, the next moment some host of the account is offline.
    const pro = sim.world.accountByKey(sim.keys.pro)!;
    let offlineAt = clock.now();
    while (pro.hosts(offlineAt).every((h) => h.online) && offlineAt < clock.now() + 30 * DAY) offlineAt += 10 * MIN;
    clock.advance(offlineAt - clock.now());
    let online = 0;
    let offline = 0;
    for (let step = 0; step < 6; step++) {
      const now = clock.now();
      for (const host of parseWith(HostList, (await get('/hosts')).json).hosts) {
        const age = now - Date.parse(host.last_seen);
        expect(host.online, `${host.hostname} last seen ${age} ms ago`).toBe(age <= 3 * MIN);
        if (host.online) online++;
        else offline++;
      }
      clock.advance(step === 0 ? 2 * MIN : 3 * HOUR + 7 * MIN);
    }
    expect(online).toBeGreaterThan(0);
    expect(offline).toBeGreaterThan(0);
  });

  it('§2 Host: a host beyond the plan limit keeps its place in the list, allowed false, with no metrics', async () => {
    const list = parseWith(HostList, (await get('/hosts')).json).hosts;
    const index = list.findIndex((h) => h.uuid === disallowedHost.uuid);
    expect(index).toBeGreaterThanOrEqual(0);
    expect(list[index]!.allowed).toBe(false);
    const catalogue = parseWith(MetricCatalogue, (await get(`/hosts/${disallowedHost.uuid}/metrics`)).json);
    expect(Object.values(catalogue.metrics).flat()).toEqual([]);
    const series = parseWith(SeriesResponse, (await get(`/hosts/${disallowedHost.uuid}/metrics/series?names=system.cpu.user&since=1h`)).json);
    const points = series.series['system.cpu.user']!;
    expect(points.length).toBeGreaterThan(50);
    expect(points.every((p) => p.value === null)).toBe(true);
    const latest = parseWith(LatestValue, (await get(`/hosts/${disallowedHost.uuid}/metrics/system.cpu.user/latest`)).json);
    expect(latest).toMatchObject({ timestamp: null, value: null });
  });

  it('§2 Metric series response: host_uuid, since, interval and series of {timestamp, value} points', async () => {
    const answer = await get(`/hosts/${allowedHost.uuid}/metrics/series?names=system.cpu.user,system.load.1&since=30m`);
    const body = parseWith(SeriesResponse, answer.json);
    expect(Object.keys(answer.json as object).sort()).toEqual(['host_uuid', 'interval', 'series', 'since']);
    expect(body.host_uuid).toBe(allowedHost.uuid);
    expect(body.since).toMatch(RFC3339_SECONDS);
    expect(Number.isInteger(body.interval)).toBe(true);
    expect(Object.keys(body.series)).toEqual(['system.cpu.user', 'system.load.1']);
    for (const point of body.series['system.cpu.user']!) {
      expect(Object.keys(point).sort()).toEqual(['timestamp', 'value']);
      expect(point.timestamp).toMatch(RFC3339_SECONDS);
      expect(point.value === null || typeof point.value === 'number').toBe(true);
    }
  });

  it('§2 Metric names are dotted lowercase <component>.<path> strings (per-device names add |<device>)', async () => {
    const catalogue = parseWith(MetricCatalogue, (await get(`/hosts/${allowedHost.uuid}/metrics`)).json);
    const names = Object.values(catalogue.metrics).flat();
    expect(names.length).toBeGreaterThan(20);
    for (const name of names) expect(name).toMatch(/^[a-z0-9_]+(\.[a-z0-9_]+)+(\|[^|,\s]+)?$/);
    const plain = names.filter((n) => !n.includes('|'));
    for (const name of names.filter((n) => n.includes('|'))) expect(plain).toContain(name.split('|')[0]);
  });

  it('per-device names (upstream facts): disks, interfaces and mount points are listed, served in series and latest, and add up to the totals', async () => {
    clock.advance(3 * HOUR);
    const names = Object.values(parseWith(MetricCatalogue, (await get(`/hosts/${allowedHost.uuid}/metrics`)).json).metrics).flat();
    const devicesOf = (prefix: string): string[] => names.filter((n) => n.startsWith(`${prefix}|`)).map((n) => n.slice(prefix.length + 1));
    const disks = devicesOf('system.io.iops_r');
    const interfaces = devicesOf('system.net.bytes_sent');
    const mounts = devicesOf('system.disk.in_use');
    expect(disks.length).toBeGreaterThanOrEqual(1);
    expect(disks.length).toBeLessThanOrEqual(2);
    expect(interfaces.length).toBeGreaterThanOrEqual(1);
    expect(interfaces.length).toBeLessThanOrEqual(2);
    expect(mounts.length).toBeGreaterThanOrEqual(1);
    expect(mounts.length).toBeLessThanOrEqual(3);
    expect(mounts).toContain('/');

    const sumsUp = async (base: string, devices: string[]): Promise<void> => {
      const wanted = [base, ...devices.map((d) => `${base}|${d}`)];
      const body = parseWith(SeriesResponse, (await get(`/hosts/${allowedHost.uuid}/metrics/series?names=${wanted.map(encodeURIComponent).join(',')}&since=1h`)).json);
      const total = body.series[base]!;
      let compared = 0;
      total.forEach((point, k) => {
        if (point.value === null) return;
        const parts = devices.map((d) => body.series[`${base}|${d}`]![k]!.value);
        expect(parts.every((v) => v !== null), `${base} at ${point.timestamp}`).toBe(true);
        expect(parts.reduce((a, b) => a! + b!, 0), `${base} at ${point.timestamp}`).toBe(point.value);
        compared++;
      });
      expect(compared, base).toBeGreaterThan(30);
    };
    await sumsUp('system.io.iops_r', disks);
    await sumsUp('system.io.kbs_w', disks);
    await sumsUp('system.net.bytes_sent', interfaces);
    await sumsUp('system.net.packets_in.count', interfaces);
    await sumsUp('system.disk.total', mounts);

    for (const mount of mounts) {
      const name = `system.disk.in_use|${mount}`;
      const latest = await get(`/hosts/${allowedHost.uuid}/metrics/${encodeURIComponent(name)}/latest`);
      expect(latest.status, name).toBe(200);
      const body = parseWith(LatestValue, latest.json);
      expect(body.name).toBe(name);
      expect(body.value).toBeGreaterThan(0);
      expect(body.value).toBeLessThanOrEqual(100);
    }
    const unknown = await get(`/hosts/${allowedHost.uuid}/metrics/${encodeURIComponent('system.io.iops_r|sdz')}/latest`);
    expect(unknown.status).toBe(404);
  });

  it('§2 Alert event: type is website_down or host_alert, host_uuid only on host_alert', async () => {
    const events = parseWith(RecentAlerts, (await get('/alerts/recent?limit=500')).json).alerts;
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) {
      parseWith(AlertEvent, event);
      expect(['website_down', 'host_alert']).toContain(event.type);
      expect('host_uuid' in event, `event ${event.id}`).toBe(event.type === 'host_alert');
    }
  });

  it('§2 Website check: every field is present with its type', async () => {
    const required = Object.keys(WebsiteCheck.shape).filter((k) => !k.startsWith('cf_'));
    const body = parseWith(WebsiteCheckList, (await get(`/websites/${websiteId}/checks?limit=20`)).json);
    expect(body.checks.length).toBe(20);
    for (const check of body.checks) {
      for (const field of required) expect(check, field).toHaveProperty(field);
      // The two CDN fields are sent on every check, null when the site is behind no CDN.
      expect(check).toHaveProperty('cf_cache_status');
      expect(check).toHaveProperty('cf_datacenter');
    }
  });

  it('§2 other resources: account, alert rule, website, website summary and component parse', async () => {
    parseWith(Account, (await get('/account')).json);
    expect(parseWith(AlertRuleList, (await get('/alerts')).json).rules.length).toBeGreaterThan(0);
    expect(parseWith(WebsiteList, (await get('/websites')).json).websites.length).toBe(6);
    expect(parseWith(WebsiteSummary, (await get(`/websites/${websiteId}`)).json).id).toBe(websiteId);
    const components = parseWith(ComponentList, (await get(`/hosts/${allowedHost.uuid}/components`)).json);
    for (const component of components.components) {
      expect(['web-server', 'application-server', 'database', 'cache']).toContain(component.kind);
    }
  });
});

describe('§4 endpoints', () => {
  it('§4 /account: plan, limits, usage and rate limit', async () => {
    const account = parseWith(Account, (await get('/account')).json);
    expect(account.plan).toBe('pro');
    expect(account.limits?.retention_days).toBe(30);
    expect(account.rate_limit).toMatchObject({ requests_per_minute: 1_000_000, burst: 1_000_000 });
    expect(typeof account.usage?.hosts).toBe('number');
  });

  it('§4 /hosts: {hosts, total} with total = number of hosts', async () => {
    const body = parseWith(HostList, (await get('/hosts')).json);
    expect(body.total).toBe(body.hosts.length);
    expect(body.total).toBe(12);
  });

  it('§4 /hosts/{uuid}: one host, 404 for an unknown uuid', async () => {
    const listed = parseWith(HostList, (await get('/hosts')).json).hosts.find((h) => h.uuid === allowedHost.uuid);
    expect(parseWith(Host, (await get(`/hosts/${allowedHost.uuid}`)).json)).toEqual(listed);
    const missing = await get(`/hosts/${'0'.repeat(32)}`);
    expect(missing.status).toBe(404);
    expect(parseWith(ErrorBody, missing.json).error).toBe('not_found');
  });

  it('§4 /hosts/{uuid}/metrics: names grouped by component', async () => {
    const body = parseWith(MetricCatalogue, (await get(`/hosts/${allowedHost.uuid}/metrics`)).json);
    expect(body.host_uuid).toBe(allowedHost.uuid);
    expect(body.metrics.system).toContain('system.cpu.user');
    for (const [component, names] of Object.entries(body.metrics)) {
      expect(names.length, component).toBeGreaterThan(0);
    }
  });

  it('§4 /hosts/{uuid}/metrics/{name}/latest: the latest value of one metric; 404 for a name the host lacks', async () => {
    const body = parseWith(LatestValue, (await get(`/hosts/${allowedHost.uuid}/metrics/system.cpu.user/latest`)).json);
    expect(body).toMatchObject({ host_uuid: allowedHost.uuid, name: 'system.cpu.user' });
    expect(typeof body.value).toBe('number');
    expect(body.timestamp).toMatch(RFC3339_SECONDS);
    expect(Date.parse(body.timestamp!)).toBeLessThanOrEqual(clock.now());
    const unknown = await get(`/hosts/${allowedHost.uuid}/metrics/no.such.metric/latest`);
    expect(unknown.status).toBe(404);
    expect(parseWith(ErrorBody, unknown.json).error).toBe('not_found');
  });

  it('§4 /hosts/{uuid}/components: detected instances of the host', async () => {
    const body = parseWith(ComponentList, (await get(`/hosts/${allowedHost.uuid}/components`)).json);
    expect(body.host_uuid).toBe(allowedHost.uuid);
    expect(body.components.length).toBeGreaterThan(0);
  });

  it('§4 /alerts: alert rules', async () => {
    const body = parseWith(AlertRuleList, (await get('/alerts')).json);
    expect(new Set(body.rules.map((r) => r.id)).size).toBe(body.rules.length);
  });

  it('§4 /alerts/recent: {alerts}, newest first, default 50, limit caps the count', async () => {
    const all = parseWith(RecentAlerts, (await get('/alerts/recent?limit=500')).json).alerts;
    const byDefault = parseWith(RecentAlerts, (await get('/alerts/recent')).json).alerts;
    expect(byDefault).toEqual(all.slice(0, 50));
    const times = all.map((a) => Date.parse(a.occurred_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(times.every((t) => t <= clock.now())).toBe(true);
    expect(parseWith(RecentAlerts, (await get('/alerts/recent?limit=3')).json).alerts).toEqual(all.slice(0, 3));
    expect(parseWith(RecentAlerts, (await get('/alerts/recent?limit=100000')).json).alerts).toEqual(all.slice(0, 500));
  });

  it('§4 /websites: websites with 24-hour aggregates; a paused one has none', async () => {
    const body = parseWith(WebsiteList, (await get('/websites')).json);
    expect(body.total).toBe(body.websites.length);
    for (const site of body.websites) expect(site.checks_24h! > 0, site.name).toBe(site.enabled);
    expect(body.websites.filter((site) => !site.enabled)).toHaveLength(1);
  });

  it('§4 /websites/{id}/checks of a paused website: the seed\'s envelope with the checks it ran before its pause', async () => {
    const site = parseWith(WebsiteList, (await get('/websites')).json).websites.find((s) => !s.enabled)!;
    const newest = parseWith(WebsiteCheckList, (await get(`/websites/${site.id}/checks`)).json);
    expect(newest.website_id).toBe(site.id);
    expect(newest.checks).toHaveLength(100);
    expect(newest.checks[0]!.checked_at).toBe(site.last_checked_at);
    expect(newest.total).toBeGreaterThan(100);
    const lastDay = parseWith(WebsiteCheckList, (await get(`/websites/${site.id}/checks?since=1d`)).json);
    expect(lastDay).toEqual({ website_id: site.id, total: 0, checks: [] });
  });

  it('§4 /websites/{id}: summary; 404 for an unknown id; 400 for an id that is not an integer', async () => {
    expect(parseWith(WebsiteSummary, (await get(`/websites/${websiteId}`)).json).id).toBe(websiteId);
    expect((await get('/websites/999999')).status).toBe(404);
    for (const bad of ['abc', '1.5', '0x10']) {
      const answer = await get(`/websites/${bad}`);
      expect(answer.status, bad).toBe(400);
      expect(parseWith(ErrorBody, answer.json)).toMatchObject({ error: 'bad_request', message: expect.stringContaining("'id'") as unknown });
    }
  });

  it('§4 /websites/{id}/checks: {website_id, total, checks}', async () => {
    const body = parseWith(WebsiteCheckList, (await get(`/websites/${websiteId}/checks`)).json);
    expect(body.website_id).toBe(websiteId);
    expect(body.total).toBeGreaterThanOrEqual(body.checks.length);
    expect((await get('/websites/abc/checks')).status).toBe(400);
    expect((await get('/websites/999999/checks')).status).toBe(404);
  });
});

describe('§4 rules', () => {
  const seriesOf = async (since: string): Promise<SeriesResponse> =>
    parseWith(SeriesResponse, (await get(`/hosts/${allowedHost.uuid}/metrics/series?names=system.cpu.user&since=${since}`)).json);

  it.each([
    ['1m', 60],
    ['1h', 60],
    ['4h', 60],
    ['240m', 60],
    ['241m', 120],
    ['5h', 120],
    ['1d', 120],
    ['24h', 120],
    ['25h', 300],
    ['2d', 300],
    ['3d', 900],
    ['1w', 900],
    ['8d', 3600],
    ['30d', 3600],
  ])('§4 rule 1: a %s window samples every %d s', async (since, interval) => {
    expect((await seriesOf(since)).interval).toBe(interval);
  });

  it('§4 rule 1: a window of exactly 4 hours is sampled at 60 s ("60 s up to 4 hours"), one minute more at 120 s', async () => {
    for (const since of ['4h', '240m']) {
      const body = await seriesOf(since);
      expect(body.interval, since).toBe(60);
      expect(body.series['system.cpu.user']!.length, since).toBeGreaterThanOrEqual(240);
    }
    expect((await seriesOf('241m')).interval).toBe(120);
  });

  it('§4 rule 1: points are aligned to the interval, from the first aligned time >= since up to now', async () => {
    clock.advance(37_123);
    for (const since of ['1h', '1d', '2d', '1w', '30d']) {
      const body = await seriesOf(since);
      const step = body.interval * 1000;
      const sinceMs = Date.parse(body.since);
      const times = body.series['system.cpu.user']!.map((p) => Date.parse(p.timestamp));
      expect(times[0]! % step).toBe(0);
      expect(times[0]!).toBeGreaterThanOrEqual(sinceMs);
      expect(times[0]! - step).toBeLessThan(sinceMs);
      times.forEach((t, i) => i > 0 && expect(t - times[i - 1]!).toBe(step));
      expect(times.at(-1)!).toBeLessThanOrEqual(clock.now());
      expect(times.at(-1)! + step).toBeGreaterThan(clock.now());
    }
  });

  it('§4 rule 1: since defaults to 1h', async () => {
    const body = parseWith(SeriesResponse, (await get(`/hosts/${allowedHost.uuid}/metrics/series?names=system.cpu.user`)).json);
    expect(body.interval).toBe(60);
    expect(Date.parse(body.since)).toBe(Math.floor((clock.now() - HOUR) / 1000) * 1000);
  });

  it('§4 rule 2: where data is missing the value is null (the newest minutes are not yet ingested)', async () => {
    const body = await seriesOf('1h');
    const points = body.series['system.cpu.user']!;
    expect(points.at(-1)!.value).toBeNull();
    expect(points.filter((p) => typeof p.value === 'number').length).toBeGreaterThan(40);
  });

  it('§4 series: a repeated name is answered once', async () => {
    const body = parseWith(
      SeriesResponse,
      (await get(`/hosts/${allowedHost.uuid}/metrics/series?names=system.cpu.user,system.load.1,system.cpu.user`)).json,
    );
    expect(Object.keys(body.series)).toEqual(['system.cpu.user', 'system.load.1']);
  });

  it('§4 rule 3: checks with no parameters are the newest 100, newest first', async () => {
    const body = parseWith(WebsiteCheckList, (await get(`/websites/${websiteId}/checks`)).json);
    expect(body.checks.length).toBe(100);
    const times = body.checks.map((c) => Date.parse(c.checked_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(times[0]!).toBeLessThanOrEqual(clock.now());
    expect(body.total).toBeGreaterThan(100);
    const newest = parseWith(WebsiteCheckList, (await get(`/websites/${websiteId}/checks?since=1h`)).json).checks.at(-1)!;
    expect(body.checks[0]!.id).toBe(newest.id);
  });

  it('§4 rule 3: limit alone gives the newest limit checks, newest first', async () => {
    const hundred = parseWith(WebsiteCheckList, (await get(`/websites/${websiteId}/checks`)).json).checks;
    const seven = parseWith(WebsiteCheckList, (await get(`/websites/${websiteId}/checks?limit=7`)).json).checks;
    expect(seven).toEqual(hundred.slice(0, 7));
  });

  it('§4 rule 4: checks with since are the checks inside the window, oldest first, total counts them all', async () => {
    const body = parseWith(WebsiteCheckList, (await get(`/websites/${websiteId}/checks?since=3h`)).json);
    const times = body.checks.map((c) => Date.parse(c.checked_at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times.every((t) => t >= clock.now() - 3 * HOUR && t <= clock.now())).toBe(true);
    expect(body.total).toBe(body.checks.length);
    expect(body.total).toBeGreaterThan(100);
  });

  it('§4 rule 4: limit with since keeps the oldest of the window so a client can page forward', async () => {
    const full = parseWith(WebsiteCheckList, (await get(`/websites/${websiteId}/checks?since=3h`)).json);
    const capped = parseWith(WebsiteCheckList, (await get(`/websites/${websiteId}/checks?since=3h&limit=10`)).json);
    expect(capped.checks).toEqual(full.checks.slice(0, 10));
    expect(capped.total).toBe(full.total);
  });

  it('§4 rule 4: with since and no limit at most 500 checks are returned, the oldest of the window', async () => {
    const body = parseWith(WebsiteCheckList, (await get(`/websites/${websiteId}/checks?since=2d`)).json);
    expect(body.checks.length).toBe(500);
    expect(body.total).toBeGreaterThan(500);
    expect(Date.parse(body.checks[0]!.checked_at)).toBeGreaterThanOrEqual(clock.now() - 2 * DAY);
    expect(Date.parse(body.checks[0]!.checked_at)).toBeLessThan(clock.now() - 2 * DAY + 10 * MIN);
  });

  const uuid = (): string => allowedHost.uuid;
  it.each<[string, () => string, string]>([
    ['series names missing', () => `/hosts/${uuid()}/metrics/series`, "'names'"],
    ['series names empty', () => `/hosts/${uuid()}/metrics/series?names=`, "'names'"],
    ['series names with an empty element', () => `/hosts/${uuid()}/metrics/series?names=system.cpu.user,,system.load.1`, "'names'"],
    ['series names with an unknown metric', () => `/hosts/${uuid()}/metrics/series?names=system.cpu.user,no.such.metric`, 'no.such.metric'],
    ['series names given twice', () => `/hosts/${uuid()}/metrics/series?names=system.cpu.user&names=system.load.1`, "'names'"],
    ['series since 0h', () => `/hosts/${uuid()}/metrics/series?names=system.cpu.user&since=0h`, "'since'"],
    ['series since 1.5h', () => `/hosts/${uuid()}/metrics/series?names=system.cpu.user&since=1.5h`, "'since'"],
    ['series since h', () => `/hosts/${uuid()}/metrics/series?names=system.cpu.user&since=h`, "'since'"],
    ['series since 1y', () => `/hosts/${uuid()}/metrics/series?names=system.cpu.user&since=1y`, "'since'"],
    ['series since -1h', () => `/hosts/${uuid()}/metrics/series?names=system.cpu.user&since=-1h`, "'since'"],
    ['series since with a leading space', () => `/hosts/${uuid()}/metrics/series?names=system.cpu.user&since=%201h`, "'since'"],
    ['series since empty', () => `/hosts/${uuid()}/metrics/series?names=system.cpu.user&since=`, "'since'"],
    ['recent limit 0', () => '/alerts/recent?limit=0', "'limit'"],
    ['recent limit -5', () => '/alerts/recent?limit=-5', "'limit'"],
    ['recent limit abc', () => '/alerts/recent?limit=abc', "'limit'"],
    ['recent limit 2.5', () => '/alerts/recent?limit=2.5', "'limit'"],
    ['checks limit 0', () => `/websites/${websiteId}/checks?limit=0`, "'limit'"],
    ['checks limit 501', () => `/websites/${websiteId}/checks?limit=501`, "'limit'"],
    ['checks limit x', () => `/websites/${websiteId}/checks?limit=x`, "'limit'"],
    ['checks since 1y', () => `/websites/${websiteId}/checks?since=1y`, "'since'"],
    ['checks since 0m', () => `/websites/${websiteId}/checks?since=0m&limit=5`, "'since'"],
    ['website id not an integer', () => '/websites/shop/checks', "'id'"],
  ])('§4 rule 5: %s is 400 bad_request naming the parameter', async (_case, path, fragment) => {
    const answer = await get(path());
    expect(answer.status).toBe(400);
    const body = parseWith(ErrorBody, answer.json);
    expect(body.error).toBe('bad_request');
    expect(body.message).toContain(fragment);
  });
});

describe('§9 versioning', () => {
  it('§9: the version is the path prefix /api/v2; other prefixes are 404', async () => {
    expect(sim.monitoringBaseUrl.endsWith('/api/v2')).toBe(true);
    const origin = sim.monitoringBaseUrl.replace(/\/api\/v2$/, '');
    for (const path of ['/api/v1/hosts', '/api/v3/hosts', '/hosts', '/api/hosts']) {
      const answer = await call(`${origin}${path}`, { key: sim.keys.pro });
      expect(answer.status, path).toBe(404);
      expect(parseWith(ErrorBody, answer.json).error).toBe('not_found');
    }
  });

  it('§9: the OpenAPI description is at /api/v2/openapi.json and describes version 2', async () => {
    const doc = (await call(`${sim.monitoringBaseUrl}/openapi.json`)).json as { servers: { url: string }[]; info: { version: string } };
    expect(doc.servers[0]!.url).toBe('/api/v2');
    expect(doc.info.version).toBe('2');
  });
});
