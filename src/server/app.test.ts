import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { Gauge, Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from 'pino';
import { everyType } from '../../test/exposition/fixtures.js';
import { rawRequest } from '../../test/server/http.js';
import { joinBody } from '../exposition/gzip.js';
import { MetricStore } from '../exposition/store.js';
import { FakeClock } from '../lib/clock.js';
import { Redactor } from '../lib/redact.js';
import { createServer, startHttpServer, type FailingSource, type RunningServer, type ServerOptions, type StatusProvider } from './app.js';
import type { MissingField } from './status.js';

const execFileAsync = promisify(execFile);

const PROMETHEUS_3_ACCEPT =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';

class FlippableStatus implements StatusProvider {
  isReady = false;
  failing: FailingSource[] = [];
  missing: MissingField[] = [];
  missingFields(): readonly MissingField[] {
    return this.missing;
  }
  failingSources(): readonly FailingSource[] {
    return this.failing;
  }
  payload: unknown = { hosts: 3, lastPoll: '2026-11-22T12:00:00Z', nested: { ok: true, list: [1, 'two', null] } };
  ready(): boolean {
    return this.isReady;
  }
  status(): unknown {
    return this.payload;
  }
  notReadyReason(): string {
    return 'first poll still running';
  }
}

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

async function serve(overrides: Partial<ServerOptions> = {}): Promise<{
  url: string;
  store: MetricStore;
  registry: Registry;
  status: FlippableStatus;
}> {
  const registry = new Registry();
  const store = new MetricStore({ registry });
  store.publish('fixtures', everyType);
  await store.flush();
  const status = new FlippableStatus();
  const app = createServer({ store, selfRegistry: registry, status, version: '9.9.9-test', ...overrides });
  const server = await startHttpServer(app, '127.0.0.1:0');
  running.push(server);
  return { url: server.url, store, registry, status };
}

describe('telemetry path', () => {
  it('serves Prometheus text without Accept, uncompressed, with the data first and self-metrics after', async () => {
    const { url, store } = await serve();
    const res = await rawRequest(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.vary).toBe('Accept, Accept-Encoding');
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    const body = res.body.toString();
    expect(body.startsWith(joinBody(store.snapshot().text).toString())).toBe(true);
    expect(body).toContain('monapi_exporter_scrapes_total{format="text",encoding="identity"} 1');
    expect(body).toContain('# TYPE monapi_exporter_series gauge');
    expect(body).not.toContain('# EOF');
  });

  it('serves gzip-compressed OpenMetrics to Prometheus 3, with # EOF last', async () => {
    const { url, store } = await serve();
    const res = await rawRequest(`${url}/metrics`, { headers: { accept: PROMETHEUS_3_ACCEPT, 'accept-encoding': 'gzip' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    const body = gunzipSync(res.body).toString();
    expect(body.startsWith(joinBody(store.snapshot().openMetrics).toString())).toBe(true);
    expect(body).toContain('# TYPE monapi_exporter_scrapes counter\n');
    expect(body).toContain('monapi_exporter_scrapes_total{format="openmetrics",encoding="gzip"} 1');
    expect(body.endsWith('\n# EOF\n')).toBe(true);
    expect(body.match(/# EOF/g)).toHaveLength(1);
  });

  it('sends a gzip body that curl --compressed decodes completely', async () => {
    const { url, store } = await serve();
    const { stdout } = await execFileAsync('curl', ['-sS', '--compressed', '-H', `Accept: ${PROMETHEUS_3_ACCEPT}`, `${url}/metrics`]);
    expect(stdout.startsWith(joinBody(store.snapshot().openMetrics).toString())).toBe(true);
    expect(stdout.endsWith('\n# EOF\n')).toBe(true);
  });

  it('does not compress when gzip is refused with q=0', async () => {
    const { url } = await serve();
    const res = await rawRequest(`${url}/metrics`, { headers: { 'accept-encoding': 'gzip;q=0, identity' } });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body.toString()).toContain('# TYPE demo_up gauge');
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const { url } = await serve();
    const res = await rawRequest(`${url}/metrics`, { method: 'HEAD', headers: { 'accept-encoding': 'gzip' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(Number(res.headers['content-length'])).toBeGreaterThan(0);
    expect(res.body.length).toBe(0);
  });

  it.each(['POST', 'PUT', 'DELETE'])('refuses %s with 405 and Allow', async (method) => {
    const { url } = await serve();
    const res = await rawRequest(`${url}/metrics`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('records scrape count, duration and bytes sent as self-metrics', async () => {
    const { url, registry } = await serve();
    const first = await rawRequest(`${url}/metrics`, { headers: { 'accept-encoding': 'gzip' } });
    await rawRequest(`${url}/metrics`, { headers: { 'accept-encoding': 'gzip' } });
    const metrics = await registry.metrics();
    expect(metrics).toContain('monapi_exporter_scrapes_total{format="text",encoding="gzip"} 2');
    expect(metrics).toContain('monapi_exporter_scrape_duration_seconds_count{format="text",encoding="gzip"} 2');
    const sent = /monapi_exporter_scrape_sent_bytes_total\{format="text",encoding="gzip"\} (\d+)/.exec(metrics);
    expect(Number(sent?.[1])).toBeGreaterThanOrEqual(first.body.length);
  });

  it('leaves out a self-metric whose name the store already exposes', async () => {
    const registry = new Registry();
    new Gauge({ name: 'demo_up', help: 'Clash.', registers: [registry] }).set(42);
    const { url } = await serve({ selfRegistry: registry });
    const body = (await rawRequest(`${url}/metrics`)).body.toString();
    expect(body.match(/# TYPE demo_up /g)).toHaveLength(1);
    expect(body).not.toContain('demo_up 42');
  });

  it('answers 500 and logs when self-metrics cannot be collected', async () => {
    const registry = new Registry();
    new Gauge({
      name: 'broken',
      help: 'Throws.',
      registers: [registry],
      collect() {
        throw new Error('collector exploded');
      },
    });
    const error = vi.fn();
    const { url } = await serve({ selfRegistry: registry, log: { error } as unknown as Logger });
    const res = await rawRequest(`${url}/metrics`);
    expect(res.status).toBe(500);
    expect(error).toHaveBeenCalledTimes(1);
  });

  it('logs requests that keep failing as one episode: the first whole, then a line a minute with the count', async () => {
    const registry = new Registry();
    new Gauge({
      name: 'broken',
      help: 'Throws.',
      registers: [registry],
      collect() {
        throw new Error('collector exploded');
      },
    });
    const error = vi.fn();
    const info = vi.fn();
    const clock = new FakeClock();
    const { url } = await serve({ selfRegistry: registry, clock, selfMetricsMaxAgeMs: 0, log: { error, info } as unknown as Logger });
    for (let i = 0; i < 50; i++) expect((await rawRequest(`${url}/metrics`)).status).toBe(500);
    expect(error).toHaveBeenCalledTimes(1);
    clock.advance(60_000);
    expect(error).toHaveBeenCalledTimes(2);
    expect(error.mock.calls[1]?.[0]).toMatchObject({ failures: 49, failuresTotal: 50 });
    clock.advance(3 * 60_000);
    expect(info).toHaveBeenCalledTimes(1);
    expect(info.mock.calls[0]?.[0]).toMatchObject({ failuresTotal: 50 });
  });

  it('answers 503 with Retry-After beyond the maximum of concurrent scrapes, and counts it', async () => {
    const registry = new Registry();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    new Gauge({
      name: 'slow_self_metric',
      help: 'Collected slowly.',
      registers: [registry],
      async collect() {
        await held;
        this.set(1);
      },
    });
    const { url } = await serve({ selfRegistry: registry, maxConcurrentScrapes: 1, selfMetricsMaxAgeMs: 0 });
    const first = rawRequest(`${url}/metrics`);
    await vi.waitFor(async () => expect(await registry.getSingleMetricAsString('monapi_exporter_scrapes_total')).toContain('} 1'));
    const second = await rawRequest(`${url}/metrics`);
    expect(second.status).toBe(503);
    expect(second.headers['retry-after']).toBe('1');
    expect(second.body.toString()).toContain('at most 1');
    release();
    expect((await first).status).toBe(200);
    expect((await rawRequest(`${url}/metrics`)).status).toBe(200);
    expect(await registry.metrics()).toContain('monapi_exporter_scrapes_rejected_total 1');
  });

  it('shares one rendering of the self-metrics between scrapes within its maximum age', async () => {
    const registry = new Registry();
    let collected = 0;
    new Gauge({
      name: 'counted_self_metric',
      help: 'Counts its collections.',
      registers: [registry],
      collect() {
        this.set(++collected);
      },
    });
    const { url } = await serve({ selfRegistry: registry, selfMetricsMaxAgeMs: 60_000 });
    const bodies = await Promise.all([1, 2, 3].map(() => rawRequest(`${url}/metrics`)));
    for (const res of bodies) expect(res.body.toString()).toContain('counted_self_metric 1\n');
    expect(collected).toBe(1);
    // Another format is rendered from the same reading of the registry.
    const openMetrics = await rawRequest(`${url}/metrics`, { headers: { accept: PROMETHEUS_3_ACCEPT } });
    expect(openMetrics.body.toString()).toContain('counted_self_metric 1\n');
    expect(collected).toBe(1);
  });

  it('renders the self-metrics for every scrape when their maximum age is 0', async () => {
    const { url } = await serve({ selfMetricsMaxAgeMs: 0 });
    await rawRequest(`${url}/metrics`);
    const second = await rawRequest(`${url}/metrics`);
    expect(second.body.toString()).toContain('monapi_exporter_scrapes_total{format="text",encoding="identity"} 2');
  });

  it('sends a large body whole to a client that reads slowly', async () => {
    const registry = new Registry();
    const store = new MetricStore({ registry });
    const samples = Array.from({ length: 40_000 }, (_, i) => ({ labels: { host: `host-${i}.example.com`, device: `sd${i % 9}` }, value: i }));
    store.publish('big', [{ spec: { name: 'demo_big_bytes', type: 'gauge', help: 'Big.' }, samples }]);
    await store.flush();
    const server = await startHttpServer(createServer({ store, selfRegistry: registry, status: new FlippableStatus() }), '127.0.0.1:0');
    running.push(server);
    const received = (await rawRequest(`${server.url}/metrics`, { pauseAfterReadMs: 1 })).body;
    expect(received.length).toBeGreaterThan(2_000_000);
    expect(received.toString().startsWith(joinBody(store.snapshot().text).toString())).toBe(true);
  });

  it.each(['/metrics/', '/METRICS', '/metrics?debug=1'])('serves the telemetry path also as %s, as express routes would', async (path) => {
    const { url } = await serve();
    expect((await rawRequest(`${url}${path}`)).status).toBe(200);
  });

  it('serves a custom telemetry path and not /metrics', async () => {
    const { url } = await serve({ telemetryPath: '/custom/metrics' });
    expect((await rawRequest(`${url}/custom/metrics`)).status).toBe(200);
    expect((await rawRequest(`${url}/metrics`)).status).toBe(404);
  });

  it.each([['metrics'], ['/me:trics'], ['/*'], ['/-/ready'], ['/']])('refuses the telemetry path %j', (telemetryPath) => {
    const registry = new Registry();
    expect(() => createServer({ store: new MetricStore(), selfRegistry: registry, status: new FlippableStatus(), telemetryPath })).toThrow(
      /invalid telemetry path/,
    );
  });
});

describe('other routes', () => {
  it('answers /-/healthy with 200 OK', async () => {
    const { url } = await serve();
    const res = await rawRequest(`${url}/-/healthy`);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('OK\n');
  });

  it('answers /-/ready with 503 and the reason until ready, then 200', async () => {
    const { url, status } = await serve();
    const notReady = await rawRequest(`${url}/-/ready`);
    expect(notReady.status).toBe(503);
    expect(notReady.body.toString()).toBe('Not ready: first poll still running\n');
    status.isReady = true;
    const ready = await rawRequest(`${url}/-/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body.toString()).toBe('OK\n');
  });

  it('serialises exactly what the status provider returns at /status', async () => {
    const { url, status } = await serve();
    const res = await rawRequest(`${url}/status`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body.toString())).toEqual(status.payload);
    status.payload = { changed: ['x'] };
    expect(JSON.parse((await rawRequest(`${url}/status`)).body.toString())).toEqual({ changed: ['x'] });
  });

  const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

  it.each([
    ['no Accept', {}, ''],
    ['*/*', { accept: '*/*' }, ''],
    ['application/json', { accept: 'application/json' }, ''],
    ['JSON before HTML', { accept: 'application/json, text/html' }, ''],
    ['text/plain', { accept: 'text/plain' }, ''],
    ['a browser asking for ?format=json', { accept: BROWSER_ACCEPT }, '?format=json'],
  ])('answers /status with the JSON for %s', async (_name, headers: Record<string, string>, query) => {
    const { url, status } = await serve();
    const res = await rawRequest(`${url}/status${query}`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.vary).toBe('Accept');
    expect(JSON.parse(res.body.toString())).toEqual(status.payload);
  });

  it.each([
    ['a browser', { accept: BROWSER_ACCEPT }, ''],
    ['HTML before JSON', { accept: 'text/html, application/json' }, ''],
    ['?format=html', {}, '?format=html'],
  ])('answers /status with the HTML page for %s, under a strict Content-Security-Policy', async (_name, headers: Record<string, string>, query) => {
    const { url } = await serve();
    const res = await rawRequest(`${url}/status${query}`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers.vary).toBe('Accept');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const csp = String(res.headers['content-security-policy']);
    expect(csp.split('; ')).toEqual(expect.arrayContaining(["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"]));
    // The one inline style sheet is allowed by its hash, and nothing else: no script at all.
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.body.toString())?.[1] ?? '';
    expect(csp).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(csp).not.toContain('script-src');
    expect(res.body.toString()).not.toMatch(/<script|\sstyle=|\son[a-z]+=/i);
    expect(res.body.toString()).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
  });

  it('refuses an unknown ?format on /status', async () => {
    const { url } = await serve();
    expect((await rawRequest(`${url}/status?format=xml`)).status).toBe(400);
  });

  it('scrubs keys from the HTML status before escaping, so an echoed key with & or < is found whole', async () => {
    const redactor = new Redactor();
    const key = 'k3y&<secret>42';
    redactor.add(key);
    const { url, status } = await serve({ redactor });
    status.payload = { accounts: [{ account: 'prod', up: true, sources: [{ source: 'hosts', up: false, reason: 'unauthorized', last_error: { message: `invalid key ${key}` } }] }] };
    const html = (await rawRequest(`${url}/status?format=html`)).body.toString();
    expect(html).toContain('invalid key [REDACTED]');
    expect(html).not.toContain('k3y');
  });

  it('shows a landing page with version, links and state', async () => {
    // A clock that stands still: the page and the scrape share one rendering of the self-metrics.
    const { url, store } = await serve({ telemetryPath: '/custom', clock: new FakeClock(Date.UTC(2026, 10, 22)) });
    const res = await rawRequest(`${url}/`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = res.body.toString();
    expect(html).toContain('9.9.9-test');
    for (const link of ['/custom', '/status', '/-/healthy', '/-/ready']) expect(html).toContain(`href="${link}"`);
    expect(html).toContain('Starting: not ready (first poll still running)');
    expect(html).not.toContain('Every source works');
    // Every series /metrics serves, the self-metrics included and said apart.
    const body = (await rawRequest(`${url}/custom`, { headers: { accept: 'text/plain' } })).body.toString();
    const samples = body.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
    const said = /(\d+) series on <a href="\/custom">\/custom<\/a>: (\d+) from the upstream APIs and (\d+) about the exporter itself/.exec(html);
    expect(said?.slice(1).map(Number)).toEqual([samples, store.snapshot().series, samples - store.snapshot().series]);
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; .*frame-ancestors 'none'$/);
  });

  it('names the failing sources and why on the landing page, escaped, while staying ready', async () => {
    const { url, status } = await serve();
    status.isReady = true;
    expect((await rawRequest(`${url}/`)).body.toString()).toContain('Every source works.');
    status.failing = [
      { account: 'prod', source: 'websites', reason: 'decode_error', failing: 1, targets: 1, message: 'website list: no list found <script>', upgradeUrl: undefined },
      { account: 'prod', source: 'series', reason: 'timeout', failing: 3, targets: 40, message: undefined, upgradeUrl: undefined },
      { account: 'cheap', source: 'hosts', reason: 'plan_required', failing: 1, targets: 1, message: 'plan required', upgradeUrl: 'https://mon.example/upgrade?a=1&b=2' },
    ];
    const html = (await rawRequest(`${url}/`)).body.toString();
    expect(html).toContain('account prod, source websites: <strong>decode_error</strong>: website list: no list found &#60;script&#62;');
    expect(html).toContain('account prod, source series: <strong>timeout</strong> (3 of 40 targets)');
    expect(html).toContain('<a href="https://mon.example/upgrade?a=1&#38;b=2" rel="noreferrer noopener">Upgrade: https://mon.example/upgrade?a=1&#38;b=2</a>');
    expect(html).toContain('Ready, 3 of 3 sources failing');
    expect(html).not.toContain('Every source works');
    expect(html).not.toContain('<script>');
    expect((await rawRequest(`${url}/-/ready`)).status).toBe(200);
  });

  it('lists the fields no answer carries on the landing page, escaped, and says how to place them', async () => {
    const { url, status } = await serve();
    status.isReady = true;
    expect((await rawRequest(`${url}/`)).body.toString()).not.toContain('Fields not found');
    status.missing = [{ account: 'prod', source: 'website_summary', field: 'uptime_7d', about: 'share of <successful> checks over 7 days' }];
    const html = (await rawRequest(`${url}/`)).body.toString();
    expect(html).toContain('<h2>Fields not found</h2>');
    expect(html).toContain('account prod, source website_summary: <strong>uptime_7d</strong> (share of &#60;successful&#62; checks over 7 days)');
    expect(html).toContain('monapi-exporter probe');
  });

  it('answers unknown routes with 404 text', async () => {
    const { url } = await serve();
    const res = await rawRequest(`${url}/nope`);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
  });

  it.each(['/', '/-/healthy', '/-/ready', '/status'])('refuses POST on %s with 405', async (path) => {
    const { url } = await serve();
    expect((await rawRequest(`${url}${path}`, { method: 'POST' })).status).toBe(405);
  });

  it('does not advertise express', async () => {
    const { url } = await serve();
    expect((await rawRequest(`${url}/-/healthy`)).headers['x-powered-by']).toBeUndefined();
  });
});
