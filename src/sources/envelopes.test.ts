import { describe, expect, it } from 'vitest';
import { monitoringDecoders } from '../../test/support/decoders.js';
import type { RequestContext } from '../upstream/http/errors.js';
import { softwareOf } from './outdated/software.js';

/**
 * Bodies in the envelopes and layouts real REST APIs use (HAL, JSON:API, result wrappers,
 * key/value pair lists, lists of windows, related resources), written from those public
 * conventions and the API document, not from the simulator. Each case is one a third
 * upstream was seen to send, or its nearest neighbour.
 */

const context: RequestContext = { api: 'monitoring', endpoint: '/test' };
const UUID_A = '0123456789abcdef0123456789abcdef';
const UUID_B = 'fedcba9876543210fedcba9876543210';

describe('lists inside common envelopes', () => {
  it('reads /websites as a HAL document', () => {
    const body = {
      _embedded: {
        websites: [
          { id: 7, name: 'shop', url: 'https://shop.example.com', _links: { self: { href: '/api/v2/websites/7' } } },
          { id: 8, name: 'blog', url: 'https://blog.example.com', _links: { self: { href: '/api/v2/websites/8' } } },
        ],
      },
      _links: { self: { href: '/api/v2/websites' } },
      total: 2,
      page_size: 20,
    };
    const decoded = monitoringDecoders.websites(body, context);
    expect(decoded.value.websites.map((w) => [w.id, w.name, w.url])).toEqual([
      [7, 'shop', 'https://shop.example.com'],
      [8, 'blog', 'https://blog.example.com'],
    ]);
    expect(decoded.value.total).toBe(2);
    expect(decoded.fields?.list?.path).toBe('_embedded.websites');
  });

  it('reads components inside a {success, errors, messages, result} envelope', () => {
    const body = { success: true, errors: [], messages: [], result: [{ type: 'nginx', display_name: 'nginx @ web-1', version: '1.25.3' }] };
    const decoded = monitoringDecoders.components(body, context);
    expect(decoded.value.components).toEqual([{ type: 'nginx', display_name: 'nginx @ web-1', version: '1.25.3' }]);
  });

  it('reads a metric catalogue given as a list of objects inside an envelope', () => {
    const body = { success: true, errors: [], messages: [], result: [{ name: 'system.cpu.user' }, { name: 'nginx.http.request.count' }] };
    expect(monitoringDecoders.metricCatalogue(body, context).value.metrics).toEqual({ system: ['system.cpu.user'], nginx: ['nginx.http.request.count'] });
  });

  it('reads a metric catalogue given as JSON:API resources', () => {
    const body = { data: [{ id: 'system.cpu.user', type: 'metrics', attributes: { component: 'system' } }, { id: 'system.load.1', type: 'metrics', attributes: { component: 'system' } }] };
    expect(monitoringDecoders.metricCatalogue(body, context).value.metrics).toEqual({ system: ['system.cpu.user', 'system.load.1'] });
  });

  it('reads JSON:API alert rules, their host scope from related resources', () => {
    const body = {
      data: [
        {
          id: '41',
          type: 'alert-rules',
          attributes: { name: 'CPU high', metric: 'system.cpu.user', operator: '>', threshold: 90, period: '5m', enabled: true },
          relationships: { hosts: { data: [{ type: 'hosts', id: UUID_A }, { type: 'hosts', id: UUID_B }] } },
        },
      ],
      links: { self: '/api/v2/alerts' },
      meta: { total: 1 },
    };
    const [rule] = monitoringDecoders.alertRules(body, context).value;
    expect(rule).toEqual({ id: '41', name: 'CPU high', metric: 'system.cpu.user', operator: '>', threshold: 90, duration_seconds: 300, enabled: true, hosts: [UUID_A, UUID_B] });
  });

  it('reads a HAL rule whose scope is a list of links to hosts', () => {
    const body = { _embedded: { rules: [{ id: 3, name: 'load', expression: 'system.load.1 > 4', _links: { self: { href: '/api/v2/alerts/3' }, hosts: [{ href: `/api/v2/hosts/${UUID_A}` }] } }] } };
    expect(monitoringDecoders.alertRules(body, context).value[0]?.hosts).toEqual([UUID_A]);
  });

  it('reads a JSON:API account, its plan from the included resource', () => {
    const body = {
      data: { id: 'acc-1', type: 'accounts', attributes: { display_name: 'ACME', usage: { hosts: 3 }, limits: { hosts: 10 } }, relationships: { plan: { data: { type: 'plans', id: 'p2' } } } },
      included: [{ type: 'plans', id: 'p2', attributes: { name: 'business' } }],
    };
    const decoded = monitoringDecoders.account(body, context);
    expect(decoded.value.plan).toBe('business');
    expect(decoded.value.limits.hosts).toBe(10);
    expect(decoded.value.usage.hosts).toBe(3);
  });

  it('reads an account given as key/value pairs', () => {
    const body = { result: [{ key: 'plan', value: 'business' }, { key: 'host_limit', value: 50 }, { key: 'retention_days', value: 90 }] };
    const decoded = monitoringDecoders.account(body, context);
    expect(decoded.value).toMatchObject({ plan: 'business', limits: { hosts: 50, retention_days: 90 } });
  });

  it('reads uptime given as a list of windows, and a p95 under the time to first byte', () => {
    const body = { id: 7, uptime: [{ window: 'P7D', ratio: 0.96 }, { window: 'P30D', ratio: 0.9 }, { window: 'PT24H', ratio: 1 }], ttfb_ms: { avg_24h: 120, p95_24h: 300 } };
    const decoded = monitoringDecoders.websiteSummary(body, context);
    expect(decoded.value.uptime).toEqual({ '24h': 1, '7d': 0.96, '30d': 0.9 });
    expect(decoded.value.ttfb_avg_24h).toBe(0.12);
    const list = monitoringDecoders.websites({ websites: [{ id: 7, ttfb_ms: { avg_24h: 120, p95_24h: 300 } }] }, context);
    expect(list.value.websites[0]?.ttfb_p95_24h).toBe(0.3);
  });

  it('chooses between two lists by the declared fields their items carry, and says so', () => {
    const body = { owners: [{ email: 'a@example.com', role: 'admin' }], sites: [{ id: 1, url: 'https://a.example.com', uptime: 0.99 }], tags_list: [{ key: 'x' }] };
    const decoded = monitoringDecoders.websites({ result: body }, context);
    expect(decoded.value.websites.map((w) => w.id)).toEqual([1]);
    // `sites` is one of the resource's own names: no choice was needed.
    const unnamed = { count: 1, a: [{ email: 'a@example.com' }], b: [{ id: 1, url: 'https://a.example.com', uptime: 0.99 }] };
    const chosen = monitoringDecoders.websites(unnamed, context);
    expect(chosen.value.websites.map((w) => w.id)).toEqual([1]);
    expect(chosen.fields?.list?.path).toBe('b');
    expect(chosen.fields?.list?.how).toMatch(/chosen by the declared fields its items carry: \d+ of \d+, over a \(0\)/);
  });
});

describe('a found value must be what its field declares', () => {
  it('takes the ids of a rule scope given as host objects', () => {
    const body = { rules: [{ id: 1, name: 'cpu', expression: 'system.cpu.user > 90', hosts: [{ uuid: UUID_A, hostname: 'web-1' }, { uuid: UUID_B }] }] };
    expect(monitoringDecoders.alertRules(body, context).value[0]?.hosts).toEqual([UUID_A, UUID_B]);
  });

  it('never reads a scope it cannot read as "every host"', () => {
    const body = { rules: [{ id: 1, name: 'cpu', expression: 'system.cpu.user > 90', hosts: [{ hostname: 'web-1' }] }] };
    const decoded = monitoringDecoders.alertRules(body, context);
    expect(decoded.value[0]?.hosts).toBeUndefined();
    expect(decoded.fields?.missing).toContain('hosts');
    expect(decoded.notes?.map((n) => n.field)).toContain('hosts');
  });

  it('does not take the category of a grouped list for the software', () => {
    const body = { web_server: [{ name: 'nginx', version: '1.25.3', display_name: 'nginx @ web-1' }], database: [{ name: 'mysql', version: '8.0.40', display_name: 'mysql @ web-1' }] };
    const decoded = monitoringDecoders.components(body, context);
    expect(decoded.value.components.map((c) => c.type)).toEqual([undefined, undefined]);
    expect(decoded.fields?.missing).toContain('type');
    expect(decoded.value.components.map((c) => softwareOf(c))).toEqual(['nginx', 'mysql']);
  });

  it('does not take a JSON:API resource type for the software', () => {
    const body = { data: [{ id: 'c1', type: 'components', attributes: { type: 'nginx', version: '1.25.3', display_name: 'nginx @ web-1' } }] };
    expect(monitoringDecoders.components(body, context).value.components[0]?.type).toBe('nginx');
  });

  it('reads a paused website as not enabled, though the first website was up', () => {
    const body = { websites: [{ id: 1, status: 'up' }, { id: 2, status: 'paused' }, { id: 3, status: 'down' }] };
    const sites = monitoringDecoders.websites(body, context).value.websites;
    expect(sites.map((s) => [s.id, s.up, s.enabled])).toEqual([
      [1, true, true],
      [2, undefined, false],
      [3, false, true],
    ]);
  });
});

describe('values of another kind than their field, seen on upstreams nobody on the team wrote', () => {
  it('does not read numeric status codes as states: up is missing, never 0 for a paused site', () => {
    const body = [
      { id: 501, friendly_name: 'shop', status: 2 },
      { id: 504, friendly_name: 'paused one', status: 0 },
      { id: 503, friendly_name: 'down one', status: 9 },
    ];
    const decoded = monitoringDecoders.websites(body, context);
    expect(decoded.value.websites.map((w) => w.up)).toEqual([undefined, undefined, undefined]);
    expect(decoded.fields?.missing).toContain('up');
  });

  it('reads a status word as up and enabled at once', () => {
    const body = { data: [1, 2, 3].map((id, i) => ({ id: String(id), type: 'monitors', attributes: { url: `https://s${id}.example.com`, status: ['up', 'down', 'paused'][i] } })) };
    const sites = monitoringDecoders.websites(body, context).value.websites;
    expect(sites.map((s) => [s.id, s.up, s.enabled])).toEqual([
      [1, true, true],
      [2, false, true],
      [3, undefined, false],
    ]);
  });

  it('splits a product/version type', () => {
    const body = { components: [{ kind: 'web-server', software: 'nginx/1.26.2', name: 'nginx @ web-1' }] };
    const [component] = monitoringDecoders.components(body, context).value.components;
    expect(component).toMatchObject({ type: 'nginx', version: '1.26.2' });
  });

  it('reads a monitor-style query, and says an unreadable expression is no condition', () => {
    const query = { rules: [{ id: 701, name: 'cpu', query: 'avg(last_5m):system.cpu.user{host:web-1,host:web-2} > 90' }] };
    expect(monitoringDecoders.alertRules(query, context).value[0]).toMatchObject({ metric: 'system.cpu.user', operator: '>', threshold: 90, duration_seconds: 300 });
    const unreadable = monitoringDecoders.alertRules({ rules: [{ id: 702, name: 'odd', query: 'anomalies(system.cpu.user, "basic", 2)' }] }, context);
    expect(unreadable.value[0]?.metric).toBeUndefined();
    expect(unreadable.fields?.missing).toEqual(expect.arrayContaining(['metric', 'operator', 'threshold']));
  });

  it('marks a scope it cannot read as unknown, so no "every host" is exported', () => {
    const body = { rules: [{ id: 1, name: 'cpu', expression: 'system.cpu.user > 90', hosts: [{ hostname: 'web-1' }] }, { id: 2, name: 'all', expression: 'system.load.1 > 4' }] };
    const rules = monitoringDecoders.alertRules(body, context).value;
    expect(rules.map((r) => r.hosts_unknown)).toEqual([true, undefined]);
  });
});
