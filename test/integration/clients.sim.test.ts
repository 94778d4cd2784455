import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { NotFoundError, PlanRequiredError, RateLimitedError, UnauthorizedError } from '../../src/upstream/http/errors.js';
import { passThroughGate } from '../support/test-server.js';
import { UndiciTransport } from '../../src/upstream/http/transport.js';
import { createUpstreamMetrics } from '../../src/upstream/metrics.js';
import { MonitoringClient } from '../../src/upstream/monitoring/client.js';
import { monitoringCalls } from '../support/monitoring-calls.js';
import { ReleaseClient } from '../../src/upstream/releases/client.js';

/** Every client method against the simulator of both APIs, over real sockets. */
describe('clients against the simulator', () => {
  let sim: RunningSimulator;
  let transport: UndiciTransport;
  const registry = new Registry();
  const metrics = createUpstreamMetrics(registry);

  beforeAll(async () => {
    sim = await startSimulator({
      monitoringPort: 0,
      releasesPort: 0,
      marketplacePort: 0,
      hosts: 3,
      websites: 2,
      // Far above what these tests send, so the limiter never interferes with them.
      rateLimitPerMinute: 100_000,
      burst: 10_000,
    });
    transport = new UndiciTransport();
  });

  afterAll(async () => {
    await transport.close();
    await sim.close();
  });

  const monitoring = (apiKey: string, authScheme: 'bearer' | 'x-api-key' = 'bearer', maxUrlLength?: number) =>
    monitoringCalls(new MonitoringClient({ baseUrl: sim.monitoringBaseUrl, apiKey, authScheme, transport, gate: passThroughGate, metrics }), { maxUrlLength });

  it.each(['bearer', 'x-api-key'] as const)('reads every Monitoring endpoint with the %s scheme', async (scheme) => {
    const client = monitoring(sim.keys.pro, scheme);
    const account = await client.account();
    expect(account.value.plan).toBe('pro');

    const hosts = await client.hosts();
    expect(hosts.dropped).toEqual([]);
    expect(hosts.value.hosts).toHaveLength(3);
    const first = hosts.value.hosts.find((h) => h.allowed);
    expect(first).toBeDefined();
    const uuid = first?.uuid ?? '';

    expect((await client.host(uuid)).value.uuid).toBe(uuid);

    const catalogue = await client.metricCatalogue(uuid);
    const names = Object.values(catalogue.value.metrics).flat();
    expect(names.length).toBeGreaterThan(10);

    const series = await client.series(uuid, names, '1h');
    expect(series.dropped).toEqual([]);
    expect(Object.keys(series.value.series).sort()).toEqual([...new Set(names)].sort());
    expect(series.value.window?.intervalSeconds).toBe(60);
    expect(series.value.batches).toBeGreaterThanOrEqual(1);

    const latest = await client.latest(uuid, names[0] ?? '');
    expect(latest.value.name).toBe(names[0]);

    const components = await client.components(uuid);
    expect(components.dropped).toEqual([]);
    expect(components.value.host_uuid).toBe(uuid);

    expect((await client.alertRules()).dropped).toEqual([]);
    const alerts = await client.recentAlerts(5);
    expect(alerts.value.length).toBeLessThanOrEqual(5);

    const websites = await client.websites();
    expect(websites.value.websites).toHaveLength(2);
    const siteId = websites.value.websites[0]?.id ?? -1;
    expect((await client.websiteSummary(siteId)).value.id).toBe(siteId);

    const newest = await client.checks(siteId);
    expect(newest.dropped).toEqual([]);
    expect(newest.value.website_id).toBe(siteId);
    const windowed = await client.checks(siteId, { since: '1h', limit: 10 });
    expect(windowed.value.checks.length).toBeLessThanOrEqual(10);
  });

  it('splits a whole catalogue into several series requests under a small URL limit, and asks each name once', async () => {
    const client = monitoring(sim.keys.pro);
    const uuid = (await client.hosts()).value.hosts.find((h) => h.allowed)?.uuid ?? '';
    const names = Object.values((await client.metricCatalogue(uuid)).value.metrics).flat();
    const small = monitoring(sim.keys.pro, 'bearer', 400);
    const series = await small.series(uuid, names, '1d');
    expect(series.value.batches).toBeGreaterThan(2);
    expect(Object.keys(series.value.series).length).toBe(new Set(names).size);
    expect(series.value.window?.intervalSeconds).toBe(120);
    for (const metric of Object.values(series.value.series)) {
      expect(metric.intervalSeconds).toBe(120);
      expect(Date.parse(metric.since)).toBeGreaterThanOrEqual(Date.parse(series.value.window?.since ?? ''));
    }
  });

  it('gets plan_required with an upgrade URL for the Starter key', async () => {
    const error = await monitoring(sim.keys.starter).hosts().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlanRequiredError);
    expect((error as PlanRequiredError).upgradeUrl).toMatch(/^https?:\/\//);
    expect((error as PlanRequiredError).context).toEqual({ api: 'monitoring', endpoint: '/hosts' });
  });

  it('gets unauthorized for a wrong key', async () => {
    await expect(monitoring('wrong-key').account()).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it("gets not_found for another account's host, with the route template in the error", async () => {
    const business = sim.world.accounts().find((a) => a.plan === 'business');
    const foreign = business?.hosts(Date.now())[0]?.uuid ?? '';
    expect(foreign).not.toBe('');
    const error = await monitoring(sim.keys.pro).host(foreign).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).message).not.toContain(foreign);
    expect((error as NotFoundError).context.endpoint).toBe('/hosts/{uuid}');
  });

  it('counts every request in the self-metrics', async () => {
    const text = await registry.metrics();
    expect(text).toMatch(/monapi_upstream_requests_total\{api="monitoring",endpoint="\/hosts\/\{uuid\}\/metrics\/series",code="200"\} \d+/);
    expect(text).toContain('monapi_upstream_requests_total{api="monitoring",endpoint="/hosts",code="403"} 1');
  });

  describe('release lookup', () => {
    const free = () => new ReleaseClient({ mode: 'free', baseUrl: sim.releasesBaseUrl, transport, gate: passThroughGate });
    const market = (key: string = sim.keys.marketplace) =>
      new ReleaseClient({ mode: 'marketplace', baseUrl: sim.marketplaceBaseUrl, marketplaceKey: key, transport, gate: passThroughGate });

    it('free: latest nginx by owner/repository and by URL', async () => {
      const byName = await free().latest({ id: 'nginx/nginx' });
      const byUrl = await free().latest({ id: 'https://github.com/nginx/nginx' });
      expect(byName.version).toMatch(/^\d+\.\d+\.\d+$/);
      // The two answers are the same record; only their times differ.
      expect({ ...byUrl, producedAtMs: 0 }).toEqual({ ...byName, producedAtMs: 0 });
      expect(byName.rawVersion).toBeTruthy();
    });

    it('free: the ?version form agrees with the record', async () => {
      const latest = await free().latest({ id: 'torvalds/linux' });
      expect((await free().version({ id: 'torvalds/linux' })).version).toBe(latest.version);
    });

    it('free: major selects an older line on the free endpoint too', async () => {
      const linux4 = await free().latest({ id: 'torvalds/linux', major: 4 });
      expect(linux4.version).toBe('4.20');
    });

    it('free: an unknown repository is not_found', async () => {
      await expect(free().latest({ id: 'nobody/nothing-here' })).rejects.toBeInstanceOf(NotFoundError);
    });

    it('marketplace: /release with major gives the newest release of that line', async () => {
      const linux4 = await market().latest({ id: 'torvalds/linux', major: 4 });
      expect(linux4.version).toBe('4.20');
      const nginx = await market().latest({ id: 'nginx' });
      expect(nginx.type).toBe('release');
      expect(nginx.assets?.length).toBeGreaterThan(0);
    });

    it('marketplace: version, source and assets in JSON and text agree', async () => {
      const project = { id: 'nginx' };
      const client = market();
      expect(await client.version(project, { text: true })).toEqual(await client.version(project));
      expect(await client.source(project, { text: true })).toBe(await client.source(project));
      const json = await client.assets(project);
      const text = await client.assets(project, { text: true });
      expect(text).toEqual(json);
      expect(json.dropped).toEqual([]);
    });

    it('marketplace: a wrong key is unauthorized', async () => {
      await expect(market('not-the-key').latest({ id: 'nginx' })).rejects.toBeInstanceOf(UnauthorizedError);
    });
  });
});

describe('rate limit from the simulator', () => {
  it('turns the 429 into RateLimitedError with the raw Retry-After', async () => {
    const sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 1, websites: 1, rateLimitPerMinute: 1, burst: 1 });
    const transport = new UndiciTransport();
    try {
      const client = monitoringCalls(new MonitoringClient({ baseUrl: sim.monitoringBaseUrl, apiKey: sim.keys.pro, transport, gate: passThroughGate }));
      await client.account();
      const error = await client.account().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateLimitedError);
      expect((error as RateLimitedError).retryAfter).toMatch(/^\d+$/);
    } finally {
      await transport.close();
      await sim.close();
    }
  });
});
