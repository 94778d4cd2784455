import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeClock } from '../../src/lib/clock.js';
import type { LayoutEnvelope, RunningSimulator, ShapeSet } from '../../simulator/index.js';
import { buildMonitoringOpenApi } from '../../simulator/openapi.js';
import { createMonitoringApp } from '../../simulator/monitoring/server.js';
import { SimAccountBody, SimAlertRuleList, SimHostList, SimWebsiteSummary } from '../../simulator/monitoring/schemas.js';
import { TokenBucketLimiter } from '../../simulator/rate-limit.js';
import { EnvelopeList, EnvelopeObject, HalList, HalResource, JsonApiDocument, JsonApiList, KeyValueList } from '../../simulator/layouts/schemas.js';
import { call, everyEndpoint, parseWith, startTestSimulator, type Answer } from './monitoring-helpers.js';

/**
 * Layouts and pages over HTTP. Every list is read twice in each layout and shape set: in one
 * request with paging off, and page by page, following the next page the way
 * docs/simulator.md ("Layouts and pages") says that layout announces it. The pages together
 * must be the whole list, in order, each item once, as many as the simulator's own totals.
 */

let sim: RunningSimulator;
let clock: FakeClock;
let uuids: string[];

type List = 'hosts' | 'websites' | 'alert-rules' | 'components' | 'metrics';
type Json = Record<string, unknown>;

const ENVELOPES: readonly LayoutEnvelope[] = ['none', 'hal', 'jsonapi', 'envelope'];
const SETS: readonly ShapeSet[] = ['standard', 'alt', 'nested'];

/** The documented next-page mechanism of each list with no envelope layout. */
const PLAIN_NEXT: Record<List, 'link' | 'cursor'> = { hosts: 'link', websites: 'cursor', 'alert-rules': 'cursor', components: 'link', metrics: 'link' };
/** The documented resource type of each list (HAL `_embedded` key, JSON:API `type`). */
const TYPES: Record<List, string> = { hosts: 'hosts', websites: 'websites', 'alert-rules': 'alert_rules', components: 'components', metrics: 'metric_groups' };

const obj = (value: unknown, what = 'value'): Json => {
  expect(value !== null && typeof value === 'object' && !Array.isArray(value), `${what} is an object`).toBe(true);
  return value as Json;
};
const arr = (value: unknown, what = 'value'): unknown[] => {
  expect(Array.isArray(value), `${what} is an array`).toBe(true);
  return value as unknown[];
};

const str = (value: unknown, what = 'value'): string => {
  expect(typeof value, `${what} is a string`).toBe('string');
  return value as string;
};

const get = (path: string): Promise<Answer> => call(`${sim.monitoringBaseUrl}${path}`, { key: sim.keys.pro });

function listPaths(): { list: List; path: string }[] {
  return [
    { list: 'hosts', path: '/hosts' },
    { list: 'websites', path: '/websites' },
    { list: 'alert-rules', path: '/alerts' },
    ...uuids.flatMap((uuid) => [
      { list: 'components' as const, path: `/hosts/${uuid}/components` },
      { list: 'metrics' as const, path: `/hosts/${uuid}/metrics` },
    ]),
  ];
}

/** The items of one answer, read the way a client of that layout and shape set would. */
function itemsOf(envelope: LayoutEnvelope, set: ShapeSet, list: List, body: unknown): unknown[] {
  if (envelope === 'hal') {
    parseWith(HalList, body);
    const embedded = obj(obj(body)._embedded, '_embedded');
    expect(Object.keys(embedded)).toEqual([TYPES[list]]);
    return arr(embedded[TYPES[list]]);
  }
  if (envelope === 'jsonapi') {
    parseWith(JsonApiList, body);
    const data = arr(obj(body).data, 'data');
    for (const resource of data) expect(obj(resource).type).toBe(TYPES[list]);
    return data;
  }
  if (envelope === 'envelope') return parseWith(EnvelopeList, body).result;
  const b = list === 'components' && set === 'alt' ? {} : obj(body);
  switch (list) {
    case 'hosts':
      return arr(b.hosts);
    case 'websites':
      return arr(set === 'alt' ? b.results : set === 'nested' ? obj(b.data).websites : b.websites);
    case 'alert-rules':
      return arr(set === 'alt' ? b.alerts : set === 'nested' ? b.alert_rules : b.rules);
    case 'components':
      if (set === 'alt') return arr(body);
      if (set === 'nested') return Object.entries(obj(b.components)).flatMap(([group, items]) => arr(items).map((item) => ({ group, item })));
      return arr(b.components);
    case 'metrics':
      if (set === 'alt') return arr(b.items);
      return Object.entries(obj(b.metrics)).map(([component, names]) => ({ component, names }));
  }
}

/** Where the next page is, as the layout announces it; undefined on the last page. */
function nextOf(envelope: LayoutEnvelope, set: ShapeSet, list: List, answer: Answer, url: URL): URL | undefined {
  const body = answer.json;
  const origin = new URL(sim.monitoringBaseUrl).origin;
  if (envelope !== 'none') expect(answer.headers.get('link')).toBeNull();
  if (envelope === 'hal') {
    const next = obj(obj(body)._links)['next'];
    if (next === undefined) return undefined;
    const href = String(obj(next).href);
    expect(href).toMatch(/^\/api\/v2\//);
    return new URL(href, url);
  }
  if (envelope === 'jsonapi') {
    const next = obj(obj(body).links).next;
    if (next === undefined) return undefined;
    expect(str(next).startsWith(`${origin}/api/v2/`)).toBe(true);
    return new URL(str(next));
  }
  if (envelope === 'envelope') {
    const info = obj(obj(body).result_info);
    if (Number(info.page) >= Number(info.total_pages)) return undefined;
    const next = new URL(url);
    next.searchParams.set('page', String(Number(info.page) + 1));
    return next;
  }
  if (PLAIN_NEXT[list] === 'link') {
    const header = answer.headers.get('link');
    if (list !== 'components' || set !== 'alt') expect(obj(body)).not.toHaveProperty('next_cursor');
    if (header === null) return undefined;
    const match = /^<([^>]+)>; rel="next"$/.exec(header);
    expect(match, header).not.toBeNull();
    return new URL(match![1]!, url);
  }
  expect(answer.headers.get('link')).toBeNull();
  if (!sim.layout.settings().paged) {
    // Paging off: the body the simulator has always sent, with nothing about pages.
    expect(answer.text).not.toMatch(/next_cursor|has_more/);
    return undefined;
  }
  if (list === 'websites' && set === 'alt') {
    const next = obj(body).next;
    return next === null ? undefined : new URL(str(next));
  }
  const holder = list === 'websites' && set === 'nested' ? obj(obj(body).data) : obj(body);
  expect(holder.has_more).toBe(holder.next_cursor !== null);
  if (holder.next_cursor === null) return undefined;
  const next = new URL(url);
  next.search = '';
  next.searchParams.set('cursor', str(holder.next_cursor));
  return next;
}

async function walk(envelope: LayoutEnvelope, set: ShapeSet, list: List, path: string, perPage?: number): Promise<{ items: unknown[]; pages: number }> {
  let url: URL | undefined = new URL(`${sim.monitoringBaseUrl}${path}${perPage === undefined ? '' : `?per_page=${perPage}`}`);
  const items: unknown[] = [];
  let pages = 0;
  while (url) {
    const answer = await call(url.href, { key: sim.keys.pro });
    expect(answer.status, `${url.href}: ${answer.text.slice(0, 200)}`).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(envelope === 'jsonapi' ? /^application\/vnd\.api\+json;/ : /^application\/json;/);
    items.push(...itemsOf(envelope, set, list, answer.json));
    url = nextOf(envelope, set, list, answer, url);
    pages += 1;
    expect(pages).toBeLessThan(100);
  }
  return { items, pages };
}

function totalOf(list: List, path: string): number {
  const totals = sim.listTotals(sim.keys.pro);
  const uuid = path.split('/')[2] ?? '';
  if (list === 'components') return totals.components[uuid]!;
  if (list === 'metrics') return totals.metrics[uuid]!;
  return list === 'alert-rules' ? totals.alertRules : totals[list];
}

beforeAll(async () => {
  ({ sim, clock } = await startTestSimulator());
  uuids = parseWith(SimHostList, (await get('/hosts')).json).hosts.map((h) => h.uuid);
});

beforeEach(() => {
  sim.layout.reset();
  sim.shapes.reset();
});

afterAll(async () => {
  await sim.close();
});

describe('every list, page by page, in every layout and shape set', () => {
  for (const envelope of ENVELOPES) {
    for (const set of SETS) {
      it(`${envelope} × ${set}: the pages, followed as announced, are the whole list in order, each item once`, async () => {
        sim.shapes.set({ default: set });
        const most: Partial<Record<List, number>> = {};
        for (const { list, path } of listPaths()) {
          sim.layout.set({ envelope, paged: false });
          const whole = await walk(envelope, set, list, path);
          expect(whole.pages, path).toBe(1);
          sim.layout.set({ paged: true, pageSize: 2 });
          const paged = await walk(envelope, set, list, path);
          const texts = whole.items.map((item) => JSON.stringify(item));
          expect(new Set(texts).size, path).toBe(texts.length);
          // Nested components are grouped by software on each page, so the order across groups may differ.
          if (envelope === 'none' && set === 'nested' && list === 'components') expect(paged.items.map((i) => JSON.stringify(i)).sort()).toEqual([...texts].sort());
          else expect(paged.items, path).toEqual(whole.items);
          expect(paged.items.length, path).toBe(totalOf(list, path));
          expect(paged.pages, path).toBe(Math.max(1, Math.ceil(paged.items.length / 2)));
          most[list] = Math.max(most[list] ?? 0, paged.pages);
        }
        // Every kind of list really had a second page.
        for (const list of Object.keys(PLAIN_NEXT) as List[]) expect(most[list], list).toBeGreaterThan(1);
      });
    }
  }
});

describe('pages', () => {
  it('default page size 3: 12 hosts in 4 pages, 6 websites in 2, 4 rules in 2; per_page is kept in the next links', async () => {
    sim.layout.set({ paged: true });
    expect((await walk('none', 'standard', 'hosts', '/hosts')).pages).toBe(4);
    expect((await walk('none', 'standard', 'websites', '/websites')).pages).toBe(2);
    expect((await walk('none', 'standard', 'alert-rules', '/alerts')).pages).toBe(2);
    expect(await walk('none', 'standard', 'hosts', '/hosts', 5)).toMatchObject({ pages: 3, items: expect.any(Array) as unknown });
    sim.layout.set({ envelope: 'jsonapi' });
    expect((await walk('jsonapi', 'standard', 'hosts', '/hosts', 5)).pages).toBe(3);
  });

  it('the Link header of components is an absolute URL, of metrics a relative reference; the seed body of /hosts is kept', async () => {
    sim.layout.set({ paged: true, pageSize: 1 });
    const components = await get(`/hosts/${uuids[0]}/components`);
    expect(components.headers.get('link')).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/api\/v2\/hosts\/[0-9a-f]{32}\/components\?cursor=[\w-]+>; rel="next"$/);
    const metrics = await get(`/hosts/${uuids[0]}/metrics`);
    expect(metrics.headers.get('link')).toMatch(/^<\/api\/v2\/hosts\/[0-9a-f]{32}\/metrics\?cursor=[\w-]+>; rel="next"$/);
    const hosts = parseWith(SimHostList.strict(), (await get('/hosts')).json);
    expect(hosts).toMatchObject({ total: 12 });
    expect(hosts.hosts).toHaveLength(1);
  });

  it('cursors hold their place while the clock moves: the websites, walked with a minute between pages, are each met once', async () => {
    sim.layout.set({ paged: true, pageSize: 2 });
    const all = arr(obj((await get('/websites?per_page=500')).json).websites).map((w) => obj(w).id);
    const ids: unknown[] = [];
    let url: string | undefined = `${sim.monitoringBaseUrl}/websites`;
    while (url) {
      const body = obj((await call(url, { key: sim.keys.pro })).json);
      ids.push(...arr(body.websites).map((w) => obj(w).id));
      url = body.next_cursor === null ? undefined : `${sim.monitoringBaseUrl}/websites?cursor=${str(body.next_cursor)}`;
      clock.advance(60_000);
    }
    expect(all).toHaveLength(6);
    expect(ids).toEqual(all);
  });

  it.each<[LayoutEnvelope, string, string]>([
    ['none', '?cursor=not-a-cursor', 'cursor'],
    ['hal', '?cursor=eyJsIjoid2Vic2l0ZXMiLCJvIjoyfQ', "'cursor' belongs to another list (websites)"],
    ['jsonapi', '?page=0', "'page'"],
    ['envelope', '?page=5', "'page' is beyond the last page, 4"],
    ['none', '?per_page=x', "'per_page'"],
    ['hal', '?page=1&cursor=eyJsIjoiaG9zdHMiLCJvIjoyfQ', 'exclude each other'],
  ])('%s: /hosts%s is 400 bad_request naming it', async (envelope, query, text) => {
    sim.layout.set({ envelope, paged: true });
    const answer = await get(`/hosts${query}`);
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'bad_request', message: expect.stringContaining(text) as unknown });
  });

  it('a bad cursor is 400 on every paged list', async () => {
    sim.layout.set({ paged: true });
    for (const { path } of listPaths()) {
      const answer = await get(`${path}?cursor=%21%21`);
      expect(answer.status, path).toBe(400);
      expect(obj(answer.json).message, path).toContain("'cursor'");
    }
  });

  it('with paging off the paging parameters are ignored like any unknown parameter', async () => {
    const plain = await get('/websites');
    expect((await get('/websites?cursor=nope&page=0')).text).toBe(plain.text);
    sim.layout.set({ envelope: 'hal' });
    expect((await get('/alerts?cursor=nope')).status).toBe(200);
  });

  it('pageFailAfter: later pages are 503 and counted as failed, earlier ones served', async () => {
    sim.resetStats();
    sim.layout.set({ envelope: 'jsonapi', paged: true, pageSize: 2, pageFailAfter: 1 });
    const first = await get('/websites');
    expect(first.status).toBe(200);
    const next = String(obj(obj(first.json).links).next);
    const second = await call(next, { key: sim.keys.pro });
    expect(second.status).toBe(503);
    expect(second.json).toEqual({ error: 'service_unavailable', message: expect.stringContaining('page 2') as unknown });
    expect((await get('/websites?page=3')).status).toBe(503);
    expect(sim.pageStats().pro?.websites).toEqual({ served: { '1': 1 }, failed: { '2': 1, '3': 1 } });
    expect(sim.stats().monitoring.pro?.by_status).toEqual({ '200': 1, '503': 2 });
  });

  it('page requests are counted per account, list and page; a reset of the stats clears them', async () => {
    sim.resetStats();
    sim.layout.set({ envelope: 'hal', paged: true });
    await walk('hal', 'standard', 'websites', '/websites');
    await walk('hal', 'standard', 'hosts', '/hosts');
    await call(`${sim.monitoringBaseUrl}/hosts`, { key: sim.keys.business });
    expect(sim.pageStats()).toEqual({
      pro: { websites: { served: { '1': 1, '2': 1 }, failed: {} }, hosts: { served: { '1': 1, '2': 1, '3': 1, '4': 1 }, failed: {} } },
      business: { hosts: { served: { '1': 1 }, failed: {} } },
    });
    expect(obj((await call(`${sim.adminUrl}/layout`)).json).pages).toEqual(sim.pageStats());
    await call(`${sim.adminUrl}/stats/reset`, { method: 'POST' });
    expect(sim.pageStats()).toEqual({});
  });
});

describe('the layouts', () => {
  it('hal: items have _links.self; an alert rule links its hosts instead of listing them; the links of a host are served', async () => {
    const standardRules = parseWith(SimAlertRuleList, (await get('/alerts')).json).rules;
    sim.layout.set({ envelope: 'hal' });
    const body = parseWith(HalList, (await get('/alerts')).json);
    const items = body._embedded.alert_rules!;
    expect(items.map((i) => i.id)).toEqual(standardRules.map((r) => r.id));
    for (const [k, item] of items.entries()) {
      const rule = standardRules[k]!;
      const bound = rule.host_uuids ?? (rule.host_uuid === null ? [] : [rule.host_uuid]);
      expect(item).not.toHaveProperty('host_uuid');
      expect(item).not.toHaveProperty('host_uuids');
      expect(item._links.self).toEqual({ href: `/api/v2/alerts/${rule.id}` });
      if (bound.length === 0) expect(item._links).not.toHaveProperty('hosts');
      else expect(item._links.hosts).toEqual(bound.map((uuid) => ({ href: `/api/v2/hosts/${uuid}` })));
    }
    expect(items.some((i) => Array.isArray(i._links.hosts) && i._links.hosts.length > 1)).toBe(true);

    const hosts = parseWith(HalList, (await get('/hosts')).json);
    expect(hosts).toMatchObject({ total: 12, page_size: 12, _links: { self: { href: '/api/v2/hosts' } } });
    const host = hosts._embedded.hosts![0]!;
    for (const rel of ['self', 'metrics', 'components']) {
      const answer = await call(new URL(String(obj(host._links[rel]).href), sim.monitoringBaseUrl).href, { key: sim.keys.pro });
      expect(answer.status, rel).toBe(200);
    }
    const one = parseWith(HalResource, (await get(`/hosts/${String(host.uuid)}`)).json);
    expect(one._links.self).toEqual({ href: `/api/v2/hosts/${String(host.uuid)}` });
    parseWith(HalResource, (await get('/account')).json);
    expect(parseWith(HalResource, (await get('/websites/40001')).json)._links).toEqual({
      self: { href: '/api/v2/websites/40001' },
      checks: { href: '/api/v2/websites/40001/checks' },
    });
  });

  it('jsonapi: resource objects with string ids and no id or type attribute, relationships with included resources, its media type', async () => {
    const standardHosts = parseWith(SimHostList, (await get('/hosts')).json).hosts;
    const standardAccount = parseWith(SimAccountBody, (await get('/account')).json);
    sim.layout.set({ envelope: 'jsonapi' });
    const hostsAnswer = await get('/hosts');
    expect(hostsAnswer.headers.get('content-type')).toMatch(/^application\/vnd\.api\+json/);
    const hosts = parseWith(JsonApiList, hostsAnswer.json);
    expect(hosts.data.map((r) => r.id)).toEqual(standardHosts.map((h) => h.uuid));
    expect(hosts.data[0]!.attributes).toMatchObject({ host_type: standardHosts[0]!.type, hostname: standardHosts[0]!.hostname });
    expect(hosts.data[0]!.attributes).not.toHaveProperty('uuid');
    expect(hosts.meta).toEqual({ total: 12 });

    const rules = parseWith(JsonApiList, (await get('/alerts')).json);
    const related = rules.data.flatMap((r) => {
      const data = r.relationships?.hosts?.data;
      return Array.isArray(data) ? data : [];
    });
    expect(related.length).toBeGreaterThan(1);
    const included = rules.included ?? [];
    expect(included.map((r) => `${r.type}/${r.id}`).sort()).toEqual([...new Set(related.map((r) => `${r.type}/${r.id}`))].sort());
    for (const resource of included) expect(resource.attributes).toHaveProperty('hostname');

    const account = parseWith(JsonApiDocument, (await get('/account')).json);
    expect(account.data).toMatchObject({ id: standardAccount.id, type: 'accounts', relationships: { plan: { data: { type: 'plans', id: 'pro' } } } });
    expect(account.data.attributes).not.toHaveProperty('plan');
    expect(account.included).toEqual([{ id: 'pro', type: 'plans', attributes: { name: 'pro' } }]);
    expect(parseWith(JsonApiDocument, (await get('/websites/40001')).json).data).toMatchObject({ id: '40001', type: 'websites' });
    expect(parseWith(JsonApiDocument, (await get(`/hosts/${uuids[0]}`)).json).data).toMatchObject({ id: uuids[0], type: 'hosts' });

    sim.shapes.set({ default: 'alt' });
    const components = parseWith(JsonApiList, (await get(`/hosts/${uuids[0]}/components`)).json);
    for (const c of components.data) expect(c.attributes).toHaveProperty('component_type');
  });

  it('envelope: success wrapper and result_info; the account limits as key/value pairs; the uptimes as a list of windows', async () => {
    const account = parseWith(SimAccountBody, (await get('/account')).json);
    const summary = parseWith(SimWebsiteSummary, (await get('/websites/40001')).json);
    sim.layout.set({ envelope: 'envelope', paged: true });
    expect(parseWith(EnvelopeList, (await get('/hosts?page=2')).json).result_info).toEqual({ page: 2, per_page: 3, count: 3, total_count: 12, total_pages: 4 });
    const result = parseWith(EnvelopeObject, (await get('/account')).json).result;
    expect(parseWith(KeyValueList, result.limits)).toEqual(Object.entries(account.limits!).map(([key, value]) => ({ key, value })));
    expect(parseWith(KeyValueList, result.usage)).toEqual(Object.entries(account.usage!).map(([key, value]) => ({ key, value })));
    const site = parseWith(EnvelopeObject, (await get('/websites/40001')).json).result;
    const uptime = arr(site.uptime).map((w) => obj(w));
    expect(uptime.map((w) => w.window)).toEqual(['P1D', 'P7D', 'P30D']);
    const pct = [summary.uptime_pct_24h, summary.uptime_pct_7d, summary.uptime_pct_30d];
    for (const [k, w] of uptime.entries()) expect(w.ratio).toBeCloseTo(pct[k]! / 100, 10);
    expect(site).not.toHaveProperty('uptime_pct_7d');

    sim.shapes.set({ default: 'nested' });
    const nested = parseWith(EnvelopeObject, (await get('/account')).json).result;
    expect(arr(nested.quotas).map((q) => obj(q).key)).toEqual(['hosts', 'websites']);
    const windows = arr(parseWith(EnvelopeObject, (await get('/websites/40001')).json).result.windows).map((w) => obj(w));
    expect(windows.map((w) => w.window)).toEqual(['P1D', 'P7D', 'P30D']);
    expect(windows[1]).toHaveProperty('uptime_ratio');
  });

  it('the endpoints a layout does not wrap keep their bodies: series, latest, recent alerts, checks', async () => {
    const paths = [`/hosts/${uuids[0]}/metrics/series?names=system.cpu.user`, `/hosts/${uuids[0]}/metrics/system.cpu.user/latest`, '/alerts/recent', '/websites/40001/checks'];
    const before = await Promise.all(paths.map((p) => get(p)));
    sim.layout.set({ envelope: 'jsonapi', paged: true });
    const after = await Promise.all(paths.map((p) => get(p)));
    for (const [k, path] of paths.entries()) expect(after[k]!.text, path).toBe(before[k]!.text);
  });
});

describe('layout off', () => {
  it('every body of every endpoint in every shape set is byte for byte what a server without layouts sends', async () => {
    const limiter = new TokenBucketLimiter({ clock, perMinute: 1_000_000, burst: 1_000_000 });
    const bare = createServer(createMonitoringApp({ world: sim.world, clock, limiter, shapes: sim.shapes }));
    bare.listen(0, '127.0.0.1');
    await once(bare, 'listening');
    const base = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/api/v2`;
    try {
      sim.layout.set({ envelope: 'hal', paged: true });
      sim.layout.reset();
      for (const set of SETS) {
        sim.shapes.set({ default: set });
        for (const path of [...everyEndpoint(uuids[7]!, 40001), '/openapi.json', '/hosts?cursor=x&page=0']) {
          const [mine, theirs] = [await get(path), await call(`${base}${path}`, { key: sim.keys.pro })];
          const strip = (text: string): string => text.replace(/"remaining":"?\d+"?/, '');
          expect(strip(mine.text), `${set} ${path}`).toBe(strip(theirs.text));
          expect(mine.headers.get('link')).toBeNull();
        }
      }
    } finally {
      bare.close();
      bare.closeAllConnections();
    }
  });
});

describe('truth and control', () => {
  it('listTotals and GET /_sim/list-totals give each list its item count', async () => {
    const totals = sim.listTotals(sim.keys.pro);
    expect(totals).toMatchObject({ hosts: 12, websites: 6, alertRules: 4 });
    expect(Object.keys(totals.components)).toEqual(uuids);
    for (const uuid of uuids) {
      const catalogue = obj(obj((await get(`/hosts/${uuid}/metrics`)).json).metrics);
      expect(totals.metrics[uuid]).toBe(Object.keys(catalogue).length);
      expect(totals.metricNames[uuid]).toBe(Object.values(catalogue).flat().length);
      expect(totals.components[uuid]).toBe(arr(obj((await get(`/hosts/${uuid}/components`)).json).components).length);
    }
    expect((await call(`${sim.adminUrl}/list-totals?account=pro`)).json).toEqual({ account: 'pro', ...totals });
    expect((await call(`${sim.adminUrl}/list-totals?account=nobody`)).status).toBe(400);
    expect(() => sim.listTotals('wrong')).toThrow(/no simulated account/);
  });

  it('GET/POST/DELETE /_sim/layout: the view, a query-string or JSON change, 400 naming a bad field, back to off', async () => {
    const admin = (path: string, method = 'GET', body?: unknown): Promise<Answer> =>
      call(`${sim.adminUrl}${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });
    expect((await admin('/layout')).json).toMatchObject({ envelope: 'none', paged: false, pageSize: 3, pageFailAfter: null });
    expect((await admin('/layout?envelope=hal&paged=true', 'POST')).json).toMatchObject({ envelope: 'hal', paged: true, next: { websites: 'hal-links-next' } });
    expect((await admin('/layout', 'POST', { envelope: 'none', pageSize: 4, pageFailAfter: 2 })).json).toMatchObject({
      envelope: 'none',
      paged: true,
      pageSize: 4,
      pageFailAfter: 2,
      next: { hosts: 'link-header', websites: 'next-cursor' },
    });
    for (const bad of [{ envelope: 'xml' }, { pageSize: 0 }, { pageSize: 501 }, { paged: 'sometimes' }, { layout: 'hal' }]) {
      const answer = await admin('/layout', 'POST', bad);
      expect(answer.status, JSON.stringify(bad)).toBe(400);
      expect(obj(answer.json).message).toContain(Object.keys(bad)[0]!);
    }
    expect(sim.layout.settings()).toMatchObject({ pageSize: 4 });
    expect((await admin('/layout', 'DELETE')).json).toMatchObject({ envelope: 'none', paged: false, pageSize: 3, pageFailAfter: null });
    expect(arr(obj((await admin('/')).json).endpoints).join('\n')).toContain('/_sim/layout');
  });

  it('a bad layout option is an error naming the field before any listener opens', async () => {
    await expect(startTestSimulator({ layout: { pageSize: 0 } })).rejects.toThrow(/pageSize/);
  });

  it('the OpenAPI document follows the layout: the envelope schemas, the paging parameters, the JSON:API media type', async () => {
    sim.layout.set({ envelope: 'jsonapi', paged: true });
    const doc = obj((await call(`${sim.monitoringBaseUrl}/openapi.json`)).json);
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    const hosts = obj(obj(obj(doc.paths)['/hosts']).get);
    expect(arr(hosts.parameters)).toEqual([{ $ref: '#/components/parameters/Page' }, { $ref: '#/components/parameters/PerPage' }, { $ref: '#/components/parameters/Cursor' }]);
    expect(obj(obj(obj(hosts.responses)['200']).content)).toHaveProperty(['application/vnd.api+json']);
    expect(obj(hosts.responses)).toHaveProperty('400');
    const series = obj(obj(obj(doc.paths)['/hosts/{uuid}/metrics/series']).get);
    expect(obj(obj(obj(series.responses)['200']).content)).toHaveProperty(['application/json']);
    sim.layout.reset();
    expect(JSON.stringify((await call(`${sim.monitoringBaseUrl}/openapi.json`)).json)).toBe(JSON.stringify(buildMonitoringOpenApi({ rateLimitPerMinute: 1_000_000, burst: 1_000_000 })));
  });
});
