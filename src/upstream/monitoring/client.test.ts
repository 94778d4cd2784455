import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { recordingGate } from '../../../test/support/test-server.js';
import type { Transport, TransportResponse } from '../http/transport.js';
import { createUpstreamMetrics } from '../metrics.js';
import { monitoringCalls } from '../../../test/support/monitoring-calls.js';
import { planSeriesBatches } from '../../sources/series/fetch.js';
import { MonitoringClient, type MonitoringClientOptions } from './client.js';

type Calls = ReturnType<typeof monitoringCalls>;

const BASE = 'http://upstream.test/api/v2';
const T = '2026-11-22T12:00:00Z';

interface Sent {
  url: URL;
  headers: Readonly<Record<string, string>>;
}

/**
 * Answers by path; records every request. With `releasing`, each body is in memory of its own
 * that `release` frees (empties), as UndiciTransport's bodies are.
 */
function fakeTransport(answer: (url: URL) => unknown, releasing = false) {
  const sent: Sent[] = [];
  let released = 0;
  const transport: Transport = {
    get(url, headers) {
      const parsed = new URL(url);
      sent.push({ url: parsed, headers });
      const json = Buffer.from(JSON.stringify(answer(parsed)));
      const store = new ArrayBuffer(json.length);
      json.copy(Buffer.from(store));
      const response: TransportResponse = {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(store),
        ...(releasing && {
          release: () => {
            store.transfer(0);
            released++;
          },
        }),
      };
      return Promise.resolve(response);
    },
  };
  return { transport, sent, released: () => released };
}

function client(answer: (url: URL) => unknown, options: Partial<MonitoringClientOptions> & { maxUrlLength?: number } = {}, releasing = false) {
  const { transport, sent, released } = fakeTransport(answer, releasing);
  const gate = recordingGate();
  const registry = new Registry();
  const metrics = createUpstreamMetrics(registry);
  const { maxUrlLength, ...rest } = options;
  // Every endpoint as the sources call it: the client itself only knows how to send one request.
  const monitoring = monitoringCalls(new MonitoringClient({ baseUrl: BASE, apiKey: 'k-1', transport, gate, metrics, ...rest }), { maxUrlLength });
  return { monitoring, sent, gate, registry, released };
}

const host = (uuid: string) => ({
  uuid,
  hostname: 'h',
  type: 'linux',
  agent_version: '1.8.11-1',
  last_seen: T,
  online: true,
  allowed: true,
  server_kinds: [],
  tags: [],
  created_at: T,
});
const checkList = { website_id: 7, total: 0, checks: [] };

describe('MonitoringClient requests', () => {
  const bodies: Record<string, unknown> = {
    '/api/v2/account': { plan: 'pro' },
    '/api/v2/hosts': { hosts: [host('a')], total: 1 },
    '/api/v2/hosts/a%2Fb': host('a/b'),
    '/api/v2/hosts/a%2Fb/metrics': { host_uuid: 'a/b', metrics: {} },
    '/api/v2/hosts/a%2Fb/metrics/system.cpu.user/latest': { host_uuid: 'a/b', name: 'system.cpu.user', timestamp: null, value: null },
    '/api/v2/hosts/a%2Fb/components': { host_uuid: 'a/b', components: [] },
    '/api/v2/alerts': { rules: [] },
    '/api/v2/alerts/recent': { alerts: [] },
    '/api/v2/websites': { websites: [], total: 0 },
    '/api/v2/websites/7': { id: 7, name: 'w', url: 'https://w', uptime_7d: 0.99 },
    '/api/v2/websites/7/checks': checkList,
  };
  const answer = (url: URL) => bodies[url.pathname];

  it.each([
    ['account', (c: Calls) => c.account(), '/api/v2/account', '/account', 'high'],
    ['hosts', (c: Calls) => c.hosts(), '/api/v2/hosts', '/hosts', 'high'],
    ['host', (c: Calls) => c.host('a/b'), '/api/v2/hosts/a%2Fb', '/hosts/{uuid}', 'normal'],
    ['metricCatalogue', (c: Calls) => c.metricCatalogue('a/b'), '/api/v2/hosts/a%2Fb/metrics', '/hosts/{uuid}/metrics', 'normal'],
    ['latest', (c: Calls) => c.latest('a/b', 'system.cpu.user'), '/api/v2/hosts/a%2Fb/metrics/system.cpu.user/latest', '/hosts/{uuid}/metrics/{name}/latest', 'normal'],
    ['components', (c: Calls) => c.components('a/b'), '/api/v2/hosts/a%2Fb/components', '/hosts/{uuid}/components', 'normal'],
    ['alertRules', (c: Calls) => c.alertRules(), '/api/v2/alerts', '/alerts', 'high'],
    ['recentAlerts', (c: Calls) => c.recentAlerts(), '/api/v2/alerts/recent', '/alerts/recent', 'high'],
    ['recentAlerts(limit)', (c: Calls) => c.recentAlerts(5), '/api/v2/alerts/recent?limit=5', '/alerts/recent', 'high'],
    ['websites', (c: Calls) => c.websites(), '/api/v2/websites', '/websites', 'high'],
    ['websiteSummary', (c: Calls) => c.websiteSummary(7), '/api/v2/websites/7', '/websites/{id}', 'normal'],
    ['checks', (c: Calls) => c.checks(7), '/api/v2/websites/7/checks', '/websites/{id}/checks', 'bulk'],
    ['checks(since, limit)', (c: Calls) => c.checks(7, { since: '15m', limit: 500 }), '/api/v2/websites/7/checks?since=15m&limit=500', '/websites/{id}/checks', 'bulk'],
  ])('%s asks the gate with the route template and sends one request', async (_name, call, pathAndQuery, endpoint, priority) => {
    const { monitoring, sent, gate } = client(answer);
    const result = await call(monitoring);
    expect(result.dropped).toEqual([]);
    expect(sent).toHaveLength(1);
    expect(`${sent[0]?.url.pathname}${sent[0]?.url.search}`).toBe(pathAndQuery);
    expect(gate.calls).toEqual([{ priority, endpoint }]);
  });

  it('lets the caller choose the priority', async () => {
    const { monitoring, gate } = client(answer);
    await monitoring.hosts('bulk');
    expect(gate.calls[0]?.priority).toBe('bulk');
  });

  it.each([
    ['bearer', { authorization: 'Bearer k-1' }],
    ['x-api-key', { 'x-api-key': 'k-1' }],
  ] as const)('sends the key with the %s scheme', async (authScheme, headers) => {
    const { monitoring, sent } = client(answer, { authScheme });
    await monitoring.account();
    expect(sent[0]?.headers).toEqual(headers);
  });

  it('counts dropped list items in the self-metrics by reason', async () => {
    const { monitoring, registry } = client(() => ({ hosts: [host('a'), { uuid: 3 }, { hostname: 'no id' }, 'text', { uuid: 'b' }], total: 5 }));
    const { value, dropped } = await monitoring.hosts();
    expect(value.hosts.map((h) => h.uuid)).toEqual(['a', 'b']);
    expect(dropped.map((d) => [d.path, d.reason, d.field])).toEqual([
      ['hosts[1]', 'wrong_type', 'uuid'],
      ['hosts[2]', 'missing_field', 'uuid'],
      ['hosts[3]', 'not_an_object', '(item)'],
    ]);
    const text = await registry.metrics();
    expect(text).toContain('monapi_decode_dropped_items_total{endpoint="/hosts",reason="wrong_type"} 1');
    expect(text).toContain('monapi_decode_dropped_items_total{endpoint="/hosts",reason="missing_field"} 1');
    expect(text).toContain('monapi_decode_dropped_items_total{endpoint="/hosts",reason="not_an_object"} 1');
  });

  it('logs a shape problem once per endpoint, reason and field, however often it comes back', async () => {
    const warnings: string[] = [];
    const logger = { debug: () => undefined, warn: (fields: Record<string, unknown>) => void warnings.push(`${String(fields.reason)} ${String(fields.field)}`) };
    const { monitoring } = client(() => ({ hosts: [host('a'), { hostname: 'x' }, { hostname: 'y' }, { uuid: 'c', online: true }, { uuid: 'b', online: 'maybe' }] }), { logger });
    for (let i = 0; i < 3; i++) await monitoring.hosts();
    expect(warnings.sort()).toEqual(['ignored online', 'missing_field uuid']);
  });

  it('refuses a page whose every item is malformed, and still counts them', async () => {
    const { monitoring, registry } = client(() => ({ hosts: ['x', 7] }));
    await expect(monitoring.hosts()).rejects.toThrow(/host list: none of its 2 item\(s\) could be read \(first: hosts\[0\] expected an object, got "x"\)/);
    expect(await registry.metrics()).toContain('monapi_decode_dropped_items_total{endpoint="/hosts",reason="not_an_object"} 2');
  });

  it('refuses a page where no item carries the uuid as a shape failure, naming the fields that were there', async () => {
    const { monitoring } = client(() => ({ hosts: [{ hostname: 'x' }, { hostname: 'y' }] }));
    await expect(monitoring.hosts()).rejects.toThrow(/host list: no item carries uuid \(the body has fields hostname\)/);
  });

  it.each([
    ['checks limit 501', (c: Calls) => c.checks(7, { limit: 501 }), 'limit must be an integer from 1 to 500'],
    ['checks limit 0', (c: Calls) => c.checks(7, { limit: 0 }), 'limit must be'],
    ['checks since 1y', (c: Calls) => c.checks(7, { since: '1y' }), "since must be a relative window such as 15m, 1h, 7d or 2w, got '1y'"],
    ['recentAlerts 1.5', (c: Calls) => c.recentAlerts(1.5), 'limit must be a positive integer'],
    ['websiteSummary NaN', (c: Calls) => c.websiteSummary(Number.NaN), 'id must be an integer, got NaN'],
    ['host empty', (c: Calls) => c.host(''), 'uuid must not be empty'],
    ['series since 0h', (c: Calls) => c.series('a', ['x'], '0h'), 'since must be a relative window'],
    ['series name with comma', (c: Calls) => c.series('a', ['a,b']), 'contain no comma'],
  ])('refuses %s before spending a request', async (_name, call, message) => {
    const { monitoring, sent } = client(answer);
    await expect(call(monitoring)).rejects.toThrow(message);
    expect(sent).toHaveLength(0);
  });
});

describe('MonitoringClient and the bodies it is given', () => {
  const points = Array.from({ length: 50 }, (_, i) => ({ timestamp: `2026-11-22T12:${String(i).padStart(2, '0')}:00Z`, value: i % 7 === 0 ? null : i * 1.5 }));
  const bodies: Record<string, unknown> = {
    '/api/v2/account': { plan: 'pro' },
    '/api/v2/hosts': { hosts: [host('a'), host('b')], total: 2 },
    '/api/v2/hosts/a': host('a'),
    '/api/v2/hosts/a/metrics': { host_uuid: 'a', metrics: { system: ['system.cpu.user', 'system.load.1'], nginx: ['nginx.http.request.count'] } },
    '/api/v2/hosts/a/metrics/series': { host_uuid: 'a', since: T, interval: 60, series: { 'system.cpu.user': points, 'system.load.1': points } },
    '/api/v2/hosts/a/metrics/system.cpu.user/latest': { host_uuid: 'a', name: 'system.cpu.user', timestamp: T, value: 12.5 },
    '/api/v2/hosts/a/components': { host_uuid: 'a', components: [{ name: 'nginx', version: '1.22.1' }] },
    '/api/v2/alerts': { rules: [] },
    '/api/v2/alerts/recent': { alerts: [] },
    '/api/v2/websites': { websites: [{ id: 7, name: 'w', url: 'https://w' }], total: 1 },
    '/api/v2/websites/7': { id: 7, name: 'w', url: 'https://w', uptime_7d: 0.99 },
    '/api/v2/websites/7/checks': { website_id: 7, total: 1, checks: [{ id: 9001, success: true, status_code: 200, ttfb_ms: 120, http_version: 'HTTP/2', tls_version: 'TLSv1.3', cert_days_remaining: 60, checked_at: T }] },
  };
  const answer = (url: URL) => bodies[url.pathname];

  it.each([
    ['account', (c: Calls) => c.account()],
    ['hosts', (c: Calls) => c.hosts()],
    ['host', (c: Calls) => c.host('a')],
    ['metricCatalogue', (c: Calls) => c.metricCatalogue('a')],
    ['series', (c: Calls) => c.series('a', ['system.cpu.user', 'system.load.1'], '1h')],
    ['latest', (c: Calls) => c.latest('a', 'system.cpu.user')],
    ['components', (c: Calls) => c.components('a')],
    ['alertRules', (c: Calls) => c.alertRules()],
    ['recentAlerts', (c: Calls) => c.recentAlerts()],
    ['websites', (c: Calls) => c.websites()],
    ['websiteSummary', (c: Calls) => c.websiteSummary(7)],
    ['checks', (c: Calls) => c.checks(7)],
  ])('%s frees every body once decoded, and what it returns keeps nothing of it', async (_name, call) => {
    const kept = client(answer);
    const released = client(answer, {}, true);
    const expected = await call(kept.monitoring);
    const result = await call(released.monitoring);
    expect(released.released()).toBe(released.sent.length);
    expect(released.sent.length).toBeGreaterThan(0);
    expect(result).toEqual(expected);
  });
});

describe('MonitoringClient options', () => {
  const { transport } = fakeTransport(() => ({}));
  const gate = recordingGate();
  it.each([
    [{ baseUrl: 'http://x/api/v1' }, 'must end in /api/v2'],
    [{ baseUrl: 'ftp://x/api/v2' }, 'http or https'],
    [{ baseUrl: 'nope' }, 'not an absolute URL'],
    [{ baseUrl: 'http://x/api/v2?a=1' }, 'must not carry'],
    [{ apiKey: ' ' }, 'apiKey must not be empty'],
    [{ apiKey: 'a\nb' }, 'line breaks'],
    [{ authScheme: 'basic' as 'bearer' }, "authScheme must be 'bearer' or 'x-api-key'"],
  ])('refuses %o', (overrides, message) => {
    expect(() => new MonitoringClient({ baseUrl: BASE, apiKey: 'k', transport, gate, ...overrides })).toThrow(message);
  });

  it('accepts a base URL with a trailing slash', async () => {
    const { transport: t, sent } = fakeTransport(() => ({ plan: 'pro' }));
    await monitoringCalls(new MonitoringClient({ baseUrl: `${BASE}/`, apiKey: 'k', transport: t, gate })).account();
    expect(sent[0]?.url.pathname).toBe('/api/v2/account');
  });
});

describe('planSeriesBatches', () => {
  it.each([
    ['no names', 10, [], 100, []],
    ['all fit', 10, ['aaa', 'bbb', 'ccc'], 21, [['aaa', 'bbb', 'ccc']]],
    ['one byte short', 10, ['aaa', 'bbb', 'ccc'], 20, [['aaa', 'bbb'], ['ccc']]],
    ['one per batch', 10, ['aaaa', 'bbbb', 'cccc'], 14, [['aaaa'], ['bbbb'], ['cccc']]],
    ['order kept', 0, ['a', 'bbbbbbbb', 'c', 'd'], 9, [['a'], ['bbbbbbbb'], ['c', 'd']]],
    ['encoded size counts', 0, ['a b', 'c'], 5, [['a b'], ['c']]],
  ])('%s', (_name, base, names, max, expected) => {
    expect(planSeriesBatches(base, names, max)).toEqual(expected);
  });

  it('keeps every batch within the limit and loses no name', () => {
    const names = Array.from({ length: 500 }, (_, i) => `nginx.upstream.metric_${i}.pctl95`);
    const base = 120;
    const batches = planSeriesBatches(base, names, 2000);
    expect(batches.flat()).toEqual(names);
    for (const batch of batches) expect(base + batch.map(encodeURIComponent).join(',').length).toBeLessThanOrEqual(2000);
    // Greedy: each batch but the last is full, so no two neighbours could have been merged.
    for (let i = 0; i + 1 < batches.length; i++) {
      const merged = [...(batches[i] ?? []), batches[i + 1]?.[0] ?? ''];
      expect(base + merged.join(',').length).toBeGreaterThan(2000);
    }
  });

  it('names a metric that cannot fit even alone', () => {
    expect(() => planSeriesBatches(1990, ['short', 'x'.repeat(20)], 2000)).toThrow(
      `metric name '${'x'.repeat(20)}' is too long to request: with it the series URL would be 2010 bytes, over maxUrlLength 2000`,
    );
  });
});

describe('MonitoringClient.series', () => {
  function seriesAnswer(interval: (names: string[]) => number, since: (names: string[]) => string = () => T) {
    return (url: URL) => {
      const names = (url.searchParams.get('names') ?? '').split(',');
      return {
        host_uuid: 'h1',
        since: since(names),
        interval: interval(names),
        series: Object.fromEntries(names.map((n) => [n, [{ timestamp: T, value: n.length }]])),
      };
    };
  }
  const names = Array.from({ length: 40 }, (_, i) => `system.metric.number_${i}`);

  it('splits names into batches under maxUrlLength and merges the answers', async () => {
    const { monitoring, sent, gate } = client(seriesAnswer(() => 60), { maxUrlLength: 300 });
    const { value } = await monitoring.series('h1', [...names, names[0] ?? ''], '1h');
    expect(sent.length).toBeGreaterThan(1);
    expect(value.batches).toBe(sent.length);
    for (const request of sent) {
      expect(request.url.href.length).toBeLessThanOrEqual(300);
      expect(request.url.searchParams.get('since')).toBe('1h');
    }
    const asked = sent.flatMap((r) => (r.url.searchParams.get('names') ?? '').split(','));
    expect(asked).toEqual(names);
    expect(Object.keys(value.series)).toEqual(names);
    expect(value.window).toEqual({ since: T, intervalSeconds: 60 });
    const third = value.series[names[3] ?? ''];
    expect({ ...third, points: third?.points.toPoints() }).toEqual({ since: T, intervalSeconds: 60, points: [{ timestamp: T, value: names[3]?.length }] });
    expect(new Set(gate.calls.map((c) => `${c.priority} ${c.endpoint}`))).toEqual(new Set(['bulk /hosts/{uuid}/metrics/series']));
  });

  it('keeps each batch its own interval when the batches disagree', async () => {
    const first = names[0] ?? '';
    const { monitoring } = client(seriesAnswer((asked) => (asked.includes(first) ? 60 : 120)), { maxUrlLength: 300 });
    const { value } = await monitoring.series('h1', names);
    expect(value.window).toBeUndefined();
    expect(value.series[first]?.intervalSeconds).toBe(60);
    expect(value.series[names[39] ?? '']?.intervalSeconds).toBe(120);
  });

  it('keeps each batch its own since, and reports the earliest when the intervals agree', async () => {
    const first = names[0] ?? '';
    const later = '2026-11-22T12:00:01Z';
    const { monitoring } = client(seriesAnswer(() => 60, (asked) => (asked.includes(first) ? later : T)), { maxUrlLength: 300 });
    const { value } = await monitoring.series('h1', names);
    expect(value.window).toEqual({ since: T, intervalSeconds: 60 });
    expect(value.series[first]?.since).toBe(later);
    expect(value.series[names[39] ?? '']?.since).toBe(T);
  });

  it('sends nothing for no names', async () => {
    const { monitoring, sent } = client(seriesAnswer(() => 60));
    const { value } = await monitoring.series('h1', []);
    expect(sent).toHaveLength(0);
    expect(value).toEqual({ hostUuid: 'h1', series: {}, window: undefined, batches: 0 });
  });

  it('sends the default window of 1h in one request when the names fit', async () => {
    const { monitoring, sent } = client(seriesAnswer(() => 60));
    await monitoring.series('h1', names.slice(0, 3));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.url.search).toBe(`?since=1h&names=${names.slice(0, 3).join(',')}`);
  });

  it('reports dropped points across batches once', async () => {
    const { monitoring, registry } = client(
      (url) => ({
        host_uuid: 'h1',
        since: T,
        interval: 60,
        series: Object.fromEntries(
          (url.searchParams.get('names') ?? '').split(',').map((n) => [n, [{ timestamp: T, value: 1 }, { timestamp: 'bad', value: 1 }]]),
        ),
      }),
      { maxUrlLength: 300 },
    );
    const { dropped, value } = await monitoring.series('h1', names);
    expect(dropped).toHaveLength(names.length);
    expect(value.batches).toBeGreaterThan(1);
    expect(await registry.metrics()).toContain(
      `monapi_decode_dropped_items_total{endpoint="/hosts/{uuid}/metrics/series",reason="invalid_value"} ${names.length}`,
    );
  });
});

describe('MonitoringClient lists over pages', () => {
  const site = (id: number) => ({ id, name: `site-${id}`, url: `https://s${id}.example.com` });

  it('asks for every page through the gate and joins them, whatever announces the next', async () => {
    const { monitoring, sent, gate } = client((url) => {
      const page = Number(url.searchParams.get('page') ?? '1');
      const cursor = url.searchParams.get('cursor');
      if (cursor === 'c3') return { items: [site(5)], has_more: false };
      if (page === 1) return { _embedded: { websites: [site(1), site(2)] }, _links: { next: { href: '/api/v2/websites?page=2' } }, total: 5 };
      // Page two goes on by a cursor: each page says for itself how the next is found.
      return { _embedded: { websites: [site(3), site(4)] }, next_cursor: 'c3', has_more: true };
    });
    const decoded = await monitoring.websites();
    expect(decoded.value.websites.map((w) => w.id)).toEqual([1, 2, 3, 4, 5]);
    expect(sent.map((s) => `${s.url.pathname}${s.url.search}`)).toEqual(['/api/v2/websites', '/api/v2/websites?page=2', '/api/v2/websites?page=2&cursor=c3']);
    expect(gate.calls).toHaveLength(3);
    expect(decoded.fields?.list).toMatchObject({ path: '_embedded.websites', length: 5, pages: 3, announced: 5, via: '_links.next' });
    expect(decoded.fields?.list?.incomplete).toBeUndefined();
  });

  it('never sends the key to another origin: the list is short, and says so', async () => {
    const { monitoring, sent } = client(() => ({ websites: [site(1)], links: { next: 'https://elsewhere.example.net/api/v2/websites?page=2' }, total: 2 }));
    const decoded = await monitoring.websites();
    expect(sent.map((s) => s.url.host)).toEqual(['upstream.test']);
    expect(decoded.value.websites).toHaveLength(1);
    expect(decoded.fields?.list?.incomplete).toMatch(/another origin/);
  });

  it('stops at max_pages_per_list and says the list is short', async () => {
    const { monitoring, sent } = client((url) => {
      const page = Number(url.searchParams.get('page') ?? '1');
      return { rules: [{ id: page, name: `r${page}`, expression: 'system.cpu.user > 90' }], meta: { page, total_pages: 100 } };
    }, { maxPagesPerList: 3 });
    const decoded = await monitoring.alertRules();
    expect(decoded.value.map((r) => r.id)).toEqual(['1', '2', '3']);
    expect(sent).toHaveLength(3);
    expect(decoded.fields?.list?.incomplete).toMatch(/cap of 3 pages/);
  });

  it('keeps the pages read when a later page fails, and names the page', async () => {
    const { transport, sent } = fakeTransport((url) => (url.searchParams.get('page') === '2' ? undefined : { hosts: [host('a'.repeat(32))], next_page: 2, total: 2 }));
    const failing: Transport = {
      get: (url, headers, signal) =>
        new URL(url).searchParams.get('page') === '2'
          ? Promise.resolve({ status: 503, headers: {}, body: Buffer.from('{"error":"unavailable","message":"try later"}') })
          : transport.get(url, headers, signal),
    };
    const monitoring = monitoringCalls(new MonitoringClient({ baseUrl: BASE, apiKey: 'k-1', transport: failing, gate: recordingGate() }), {});
    const decoded = await monitoring.hosts();
    expect(decoded.value.hosts.map((h) => h.uuid)).toEqual(['a'.repeat(32)]);
    expect(decoded.fields?.list?.incomplete).toMatch(/^page 2 failed: monitoring \/hosts: server error \(HTTP 503\)/);
    expect(sent).toHaveLength(1);
  });
});
