import { describe, expect, it } from 'vitest';
import { thrownBy } from '../../test/support/thrown.js';
import { monitoringDecoders } from '../../test/support/decoders.js';
import { FieldsMissingError, InvalidResponseError, type RequestContext } from '../upstream/http/errors.js';

/**
 * Shape variants per endpoint. The API document shows the bodies of `/hosts`, the series,
 * `/alerts/recent` and the checks, and leaves `/account`, the metric catalogue, the latest
 * value, components, `/alerts`, `/websites` and `/websites/{id}` "not shown". Every body here
 * is written from the document and the upstream facts (what the real agent and service
 * report), not from the simulator: each is a layout a real service could reasonably send.
 */

const context: RequestContext = { api: 'monitoring', endpoint: '/test' };
const T = '2026-11-22T12:00:00Z';
const UUID = '0123456789abcdef0123456789abcdef';
const SHA = 'a3f1c0de'.repeat(8);

type Name = keyof typeof monitoringDecoders;

/** The decoder of one endpoint, typed as that endpoint's. */
function decode<N extends Name>(name: N, body: unknown): ReturnType<(typeof monitoringDecoders)[N]> {
  // Indexing by a generic key gives the union of every decoder's result; this one's is the N-th.
  return monitoringDecoders[name](body, context) as ReturnType<(typeof monitoringDecoders)[N]>;
}

function refusal(name: Name, body: unknown): string {
  return thrownBy(InvalidResponseError, () => decode(name, body)).message;
}

interface Variant {
  readonly shape: string;
  readonly body: unknown;
  readonly want: unknown;
}

/** A seed host (every field of the document's Host table). */
const seedHost = (uuid = UUID) => ({
  uuid,
  hostname: 'web-1',
  type: 'vm',
  agent_version: '1.8.11-1',
  last_seen: T,
  online: true,
  allowed: true,
  server_kinds: ['web-server'],
  tags: ['env:prod', 'canary'],
  created_at: T,
});

describe('/account', () => {
  it.each<Variant>([
    {
      shape: 'flat object with the document words as keys',
      body: { plan: 'pro', limits: { hosts: 10, websites: 5, retention_days: 30 }, usage: { hosts: 3 }, rate_limit: { requests_per_minute: 120, burst: 30 } },
      want: { plan: 'pro', limits: { hosts: 10, websites: 5, retention_days: 30 }, usage: { hosts: 3 }, rate_limit: { requests_per_minute: 120, burst: 30 } },
    },
    {
      shape: 'rate_limit.per_minute, plan as an object, under data',
      body: { data: { plan: { name: 'Business', id: 3 }, rate_limit: { per_minute: 60, burst: 10, remaining: 59 } } },
      want: { plan: 'Business', rate_limit: { requests_per_minute: 60, burst: 10 } },
    },
    {
      shape: 'under account, tier and max_* limits as strings',
      body: { account: { id: 'acc_1', tier: 'pro', limits: { max_hosts: '25', max_websites: '10', retention: '30d' } } },
      want: { plan: 'pro', limits: { hosts: 25, websites: 10, retention_days: 30 } },
    },
    {
      shape: 'a limit over a window',
      body: { plan: 'pro', rate_limit: { limit: 300, window: '5m' } },
      want: { rate_limit: { requests_per_minute: 60 } },
    },
    { shape: 'a bare rate limit number', body: { plan: 'pro', rate_limit: 90 }, want: { rate_limit: { requests_per_minute: 90 } } },
    { shape: 'per second', body: { plan: 'pro', rate_limit: { per_second: 2 } }, want: { rate_limit: { requests_per_minute: 120 } } },
    {
      shape: 'limits and usage under one category per resource, the rate as a count and a period, numbers as strings',
      body: { plan: { tier: 'business' }, quotas: { hosts: { max: '50', used: '12' }, websites: { max: 20, used: 3 } }, api: { rate_limit: { requests: '7200', period: '1h' }, burst: '30' } },
      want: { plan: 'business', limits: { hosts: 50, websites: 20 }, usage: { hosts: 12, websites: 3 }, rate_limit: { requests_per_minute: 120, burst: 30 } },
    },
    { shape: 'the rate as requests per second, in a word', body: { rateLimit: { requests: 2, per: 'second' } }, want: { rate_limit: { requests_per_minute: 120 } } },
  ])('$shape', ({ body, want }) => {
    const { value, dropped } = decode('account', body);
    expect(value).toMatchObject(want as object);
    expect(dropped).toEqual([]);
  });

  it('refuses an answer that carries none of the figures it is polled for: a shape failure, not an empty account', () => {
    expect(() => decode('account', {})).toThrow(FieldsMissingError);
    expect(() => decode('account', { id: 'acc_1', created_at: T })).toThrow(/account: no item carries any of plan, host_limit/);
  });

  it('refuses a list', () => {
    expect(refusal('account', [{ plan: 'pro' }])).toContain('account: expected an object, got a list');
  });
});

describe('/hosts', () => {
  const uuids = (body: unknown) => decode('hosts', body).value.hosts.map((h) => h.uuid);
  it.each<Variant>([
    { shape: 'the document: {hosts, total}', body: { hosts: [seedHost('a'), seedHost('b')], total: 2 }, want: ['a', 'b'] },
    { shape: 'without total', body: { hosts: [seedHost('a')] }, want: ['a'] },
    { shape: 'a bare list', body: [seedHost('a')], want: ['a'] },
    { shape: 'under data with paging', body: { data: [seedHost('a')], page: 1, per_page: 50 }, want: ['a'] },
    { shape: 'under data.hosts', body: { data: { hosts: [seedHost('a')] }, meta: { total: 1 } }, want: ['a'] },
    { shape: 'under items', body: { items: [seedHost('a')], next: null }, want: ['a'] },
    { shape: 'under an unexpected name, the only list', body: { machines: [seedHost('a')], count: 1 }, want: ['a'] },
    { shape: 'the uuid as id', body: { hosts: [{ id: 'a', hostname: 'x' }] }, want: ['a'] },
  ])('$shape', ({ body, want }) => {
    expect(uuids(body)).toEqual(want);
  });

  it('reads tags as a list, the agent comma string, or an object; every other field optional and nullable', () => {
    const { value, dropped } = decode('hosts', {
      hosts: [
        { uuid: 'a', tags: 'foo,bar,env:prod' },
        { uuid: 'b', tags: { env: 'prod', tier: 2 }, online: null, hostname: null },
        { uuid: 'c', online: 'true', allowed: 0, last_seen: '2026-11-22 12:00:00+00:00' },
      ],
    });
    expect(dropped).toEqual([]);
    expect(value.hosts).toEqual([
      { uuid: 'a', tags: ['foo', 'bar', 'env:prod'] },
      { uuid: 'b', tags: ['env:prod', 'tier:2'] },
      { uuid: 'c', online: true, allowed: false, last_seen: '2026-11-22T12:00:00.000Z' },
    ]);
  });

  it.each<Variant>([
    {
      shape: 'nested: host, agent, status and created objects, tags as an object, the type as os',
      body: {
        data: {
          hosts: [
            { host: { uuid: UUID, name: 'web-1' }, os: 'linux', agent: { version: '1.8.11-1' }, status: { online: 'true', allowed: true, last_seen: T }, kinds: ['web-server'], labels: { env: 'prod' }, created: { at: T } },
          ],
        },
        meta: { total: '1' },
      },
      want: {
        hosts: [{ uuid: UUID, hostname: 'web-1', type: 'linux', agent_version: '1.8.11-1', online: true, allowed: true, last_seen: T, server_kinds: ['web-server'], tags: ['env:prod'], created_at: T }],
        total: 1,
      },
    },
    {
      shape: 'camelCase, states as words, a Unix time, lists as comma strings',
      body: { hosts: [{ hostUuid: UUID, hostName: 'web-1', agentVersion: '1.8.11-1', lastSeenAt: 1763812800, status: 'offline', overLimit: true, serverKinds: 'web-server,database', tags: 'canary,env:prod' }] },
      want: {
        hosts: [{ uuid: UUID, hostname: 'web-1', agent_version: '1.8.11-1', last_seen: '2025-11-22T12:00:00.000Z', online: false, allowed: false, server_kinds: ['web-server', 'database'], tags: ['canary', 'env:prod'] }],
        total: undefined,
      },
    },
    {
      shape: 'grouped in an object keyed by host type',
      body: { hosts: { vm: [{ uuid: 'a', hostname: 'web-1' }], container: [{ uuid: 'b', hostname: 'db-1' }] } },
      want: { hosts: [{ uuid: 'a', hostname: 'web-1' }, { uuid: 'b', hostname: 'db-1' }], total: undefined },
    },
  ])('reads the fields wherever they sit: $shape', ({ body, want }) => {
    const { value, dropped, fields } = decode('hosts', body);
    expect(dropped).toEqual([]);
    expect(value).toEqual(want);
    expect(fields?.essentialMissing).toEqual([]);
  });

  it('reports the fields no host carries, and where it found the others', () => {
    const { fields } = decode('hosts', { hosts: [{ uuid: 'a', host: { name: 'web-1' } }] });
    expect(fields?.found.hostname?.path).toBe('host.name');
    expect(fields?.missing).toEqual(['type', 'agent_version', 'last_seen', 'online', 'allowed', 'server_kinds', 'tags', 'created_at']);
  });

  it.each([
    [{ total: 3 }, 'host list: no list found in the body (an object with 1 field(s): total; none holds a list)'],
    [{ hosts_a: [], hosts_b: [] }, 'host list: no list found in the body'],
  ])('refuses %j: no list', (body, message) => {
    expect(refusal('hosts', body)).toContain(message);
  });
});

describe('/hosts/{uuid}', () => {
  it.each<Variant>([
    { shape: 'the host itself', body: seedHost(), want: { uuid: UUID, hostname: 'web-1' } },
    { shape: 'under host', body: { host: seedHost() }, want: { uuid: UUID, hostname: 'web-1' } },
    { shape: 'under data', body: { data: { uuid: UUID, hostname: 'web-1', tags: ['a'] } }, want: { uuid: UUID, tags: ['a'] } },
  ])('$shape', ({ body, want }) => {
    expect(decode('host', body).value).toMatchObject(want as object);
  });

  it('refuses a host that carries none of the details it is asked for', () => {
    expect(refusal('host', { host: { uuid: UUID } })).toContain('host: no item carries any of hostname, type, agent_version');
  });

  it('refuses a host without a uuid', () => {
    expect(refusal('host', { hostname: 'x' })).toContain('host: no item carries uuid (the body has fields hostname)');
  });
});

describe('/hosts/{uuid}/metrics (names grouped by component)', () => {
  const GROUPED = { system: ['system.cpu.user', 'system.load.1'], nginx: ['nginx.http.request.count'] };
  it.each<Variant>([
    { shape: 'an object of component to names, wrapped', body: { host_uuid: UUID, metrics: GROUPED }, want: GROUPED },
    { shape: 'an object of component to names, bare', body: GROUPED, want: GROUPED },
    { shape: 'a flat list of names', body: ['system.cpu.user', 'system.load.1', 'nginx.http.request.count'], want: GROUPED },
    { shape: 'a flat list under metrics', body: { metrics: ['system.cpu.user', 'system.load.1', 'nginx.http.request.count'] }, want: GROUPED },
    {
      shape: 'a list of {name, component}',
      body: { data: [{ name: 'system.cpu.user', component: 'system' }, { name: 'system.load.1' }, { name: 'nginx.http.request.count', component: 'nginx' }] },
      want: GROUPED,
    },
    {
      shape: 'a list of {component, metrics}',
      body: { components: [{ component: 'system', metrics: ['system.cpu.user', 'system.load.1'] }, { component: 'nginx', metrics: [{ name: 'nginx.http.request.count' }] }] },
      want: GROUPED,
    },
    { shape: 'data wrapping metrics', body: { data: { host_uuid: UUID, metrics: GROUPED } }, want: GROUPED },
    { shape: 'a host without metrics', body: { host_uuid: UUID, metrics: {} }, want: {} },
  ])('$shape', ({ body, want }) => {
    const { value, dropped, fields } = decode('metricCatalogue', body);
    expect(value.metrics).toEqual(want);
    expect(dropped).toEqual([]);
    // A host without metrics says nothing of their names: none is missing.
    expect(fields?.missing).toEqual([]);
    expect(fields?.found.name?.sample).toBe(Object.keys(want as object).length === 0 ? undefined : 'system.cpu.user');
  });

  it('says where the names were: alone, or under a key of object items', () => {
    expect(decode('metricCatalogue', { metrics: GROUPED }).fields?.found.name?.path).toBe('(the name itself)');
    expect(decode('metricCatalogue', [{ metric: 'system.cpu.user' }]).fields?.found.name?.path).toBe('metric');
  });

  it('reports the name missing when no object item carries one, and reads it where fields: places it', () => {
    const body = { metrics: [{ metric: { id: 'system.cpu.user', unit: '%' } }, { metric: { id: 'nginx.http.request.count' } }] };
    const refused = thrownBy(FieldsMissingError, () => decode('metricCatalogue', body));
    expect(refused.message).toContain('metric catalogue: no item carries name (the body has fields metric)');
    expect(refused.report.missing).toEqual(['name']);
    const placed = monitoringDecoders.metricCatalogue(body, context, { fieldPaths: { name: 'metric.id' } });
    expect(placed.value.metrics).toEqual({ system: ['system.cpu.user'], nginx: ['nginx.http.request.count'] });
    expect(placed.fields?.found.name).toEqual({ path: 'metric.id', sample: 'system.cpu.user', configured: true });
  });

  it('drops names that cannot be requested and keeps the rest', () => {
    const { value, dropped } = decode('metricCatalogue', { metrics: { system: ['system.cpu.user', 'a,b', 7, '', { title: 'x' }] } });
    expect(value.metrics).toEqual({ system: ['system.cpu.user'] });
    expect(dropped.map((d) => [d.path, d.reason])).toEqual([
      ['metrics.system[1]', 'invalid_value'],
      ['metrics.system[2]', 'wrong_type'],
      ['metrics.system[3]', 'invalid_value'],
      ['metrics.system[4]', 'missing_field'],
    ]);
  });

  it('refuses a body without any names', () => {
    expect(refusal('metricCatalogue', { host_uuid: UUID })).toContain('metric catalogue: no metric names found');
  });
});

describe('/hosts/{uuid}/metrics/{name}/latest', () => {
  it.each<Variant>([
    { shape: '{value, timestamp}', body: { host_uuid: UUID, name: 'system.cpu.user', value: 12.5, timestamp: T }, want: { value: 12.5, timestamp: T } },
    { shape: 'nested under point', body: { name: 'system.cpu.user', point: { timestamp: T, value: 3 } }, want: { value: 3, timestamp: T } },
    { shape: 'nested under data, value as a string, time as `time`', body: { data: { value: '7.25', time: T } }, want: { value: 7.25, timestamp: T } },
    { shape: 'a null value (a gap)', body: { value: null, timestamp: T }, want: { value: null, timestamp: T } },
    { shape: 'a bare number', body: 42, want: { value: 42, timestamp: null } },
    {
      shape: 'a list of points: the newest',
      body: { points: [{ timestamp: '2026-11-22T11:59:00Z', value: 1 }, { timestamp: T, value: 2 }] },
      want: { value: 2, timestamp: T },
    },
  ])('$shape', ({ body, want }) => {
    expect(decode('latest', body).value).toEqual(want);
  });

  it.each<Variant>([
    { shape: 'nested: host, metric and latest objects, the value a string, the time with milliseconds', body: { host: { uuid: UUID }, metric: { name: 'system.cpu.user' }, latest: { at: '2026-11-22T12:00:00.000Z', value: '12.5' } }, want: { value: 12.5, timestamp: '2026-11-22T12:00:00.000Z' } },
    { shape: 'under data with an offset and a unit', body: { data: { timestamp: '2026-11-22T12:00:00+00:00', value: 3, unit: null } }, want: { value: 3, timestamp: '2026-11-22T12:00:00+00:00' } },
    { shape: 'camelCase, a Unix time', body: { latestValue: { measuredAt: 1763812800, v: 0.5 } }, want: { value: 0.5, timestamp: '2025-11-22T12:00:00.000Z' } },
    { shape: 'a numeric string alone', body: '7', want: { value: 7, timestamp: null } },
  ])('reads the point wherever it sits: $shape', ({ body, want }) => {
    const { value, fields } = decode('latest', body);
    expect(value).toEqual(want);
    expect(fields?.found.value).toBeDefined();
  });

  it('refuses a value that is not a number rather than taking it for a gap', () => {
    expect(refusal('latest', { value: 'high', timestamp: T })).toContain('latest value: value: "high" is not a number');
  });

  it('refuses a body without a value', () => {
    expect(refusal('latest', { timestamp: T })).toContain('latest value: no item carries value (the body has fields timestamp)');
  });
});

describe('/hosts/{uuid}/components', () => {
  const fromAgent = [
    { type: 'nginx', local_id: SHA, host_uuid: UUID, display_name: 'nginx @ web-1', version: '1.26.3', pid: 812, plus: false, ssl: 'OpenSSL 3.0.13' },
    { type: 'phpfpm_pool', local_id: `${SHA.slice(1)}0`, display_name: 'phpfpm www @ web-1', name: 'www', listen: '/run/php/www.sock' },
    { type: 'mysql', local_id: `${SHA.slice(2)}00`, display_name: 'mysql @ web-1', version: '8.0.36' },
  ];
  const display = (body: unknown) => decode('components', body).value.components.map((c) => [c.display_name ?? c.name, c.type, c.version]);
  it.each<Variant>([
    {
      shape: 'what the agent reports: type, local id, display name, no host uuid on the envelope',
      body: { components: fromAgent },
      want: [
        ['nginx @ web-1', 'nginx', '1.26.3'],
        ['phpfpm www @ web-1', 'phpfpm_pool', undefined],
        ['mysql @ web-1', 'mysql', '8.0.36'],
      ],
    },
    { shape: 'a bare list', body: fromAgent.slice(0, 1), want: [['nginx @ web-1', 'nginx', '1.26.3']] },
    { shape: 'under data', body: { data: fromAgent.slice(2) }, want: [['mysql @ web-1', 'mysql', '8.0.36']] },
    { shape: 'under objects (the agent\'s word)', body: { objects: fromAgent.slice(2) }, want: [['mysql @ web-1', 'mysql', '8.0.36']] },
    {
      shape: 'kind and software instead of type, name as the display name',
      body: { host_uuid: UUID, components: [{ id: 'c1', kind: 'web-server', software: 'nginx', name: 'nginx @ web-1', version: '1.27.3' }] },
      want: [['nginx @ web-1', 'nginx', '1.27.3']],
    },
    {
      shape: 'grouped by kind under components: the key is the type',
      body: { host_uuid: UUID, components: { nginx: [{ display_name: 'nginx @ web-1', version: '1.26.3' }], mysql: [{ display_name: 'mysql @ web-1', version: '8.0.36' }] } },
      want: [
        ['nginx @ web-1', 'nginx', '1.26.3'],
        ['mysql @ web-1', 'mysql', '8.0.36'],
      ],
    },
    {
      shape: 'grouped by kind at the top, an item with a type of its own keeps it',
      body: { php: [{ title: 'phpfpm www @ web-1', type: 'phpfpm_pool', pool: 'www' }], varnish: [{ label: 'varnish @ web-1', software_version: '7.5' }] },
      want: [
        ['phpfpm www @ web-1', 'phpfpm_pool', undefined],
        ['varnish @ web-1', 'varnish', '7.5'],
      ],
    },
  ])('$shape', ({ body, want }) => {
    expect(display(body)).toEqual(want);
  });

  it('drops a component that cannot be named, keeps the others', () => {
    const { value, dropped } = decode('components', { components: [{ type: 'varnish', pid: 3 }, fromAgent[0]] });
    expect(value.components).toHaveLength(1);
    expect(dropped).toEqual([{ path: 'components[0]', reason: 'missing_field', field: 'display_name', issue: 'display_name: no display name, name or id to call the component by' }]);
  });
});

describe('/alerts (alert rules)', () => {
  const rules = (body: unknown) => decode('alertRules', body).value;
  it.each<Variant>([
    {
      shape: 'under rules, separate fields',
      body: { rules: [{ id: 701, name: 'cpu high', metric: 'system.cpu.user', operator: '>', threshold: 90, duration_seconds: 300, enabled: true, host_uuid: null }] },
      want: [{ id: '701', name: 'cpu high', metric: 'system.cpu.user', operator: '>', threshold: 90, duration_seconds: 300, enabled: true }],
    },
    {
      shape: 'under alerts, an expression string and a numeric-string id',
      body: { alerts: [{ id: '702', name: 'cpu high', expression: 'system.cpu.user > 90', enabled: true }] },
      want: [{ id: '702', name: 'cpu high', metric: 'system.cpu.user', operator: '>', threshold: 90, enabled: true }],
    },
    {
      shape: 'under alert_rules, threshold as a string with %, status words, duration as 5m',
      body: { alert_rules: [{ id: 3, metric: 'system.disk.in_use', comparison: 'gte', threshold: '85 %', status: 'paused', for: '5m' }] },
      want: [{ id: '3', metric: 'system.disk.in_use', operator: '>=', threshold: 85, enabled: false, duration_seconds: 300 }],
    },
    {
      shape: 'a bare list, condition with a function and for',
      body: [{ id: 'r-1', condition: 'avg(nginx.http.status.5xx) > 10 for 2m', host: UUID }],
      want: [{ id: 'r-1', metric: 'nginx.http.status.5xx', operator: '>', threshold: 10, duration_seconds: 120, hosts: [UUID] }],
    },
    { shape: 'data.rules', body: { data: { rules: [{ id: 1, name: 'x' }] } }, want: [{ id: '1', name: 'x' }] },
    {
      shape: 'the condition as an object, the scope as a list of hosts, the state as a word',
      body: { alert_rules: [{ id: '704', state: 'enabled', condition: { metric: 'system.load.5', op: 'gt', value: '8', duration: { seconds: 600 } }, scope: { hosts: [UUID, 'f'.repeat(32)] } }] },
      want: [{ id: '704', metric: 'system.load.5', operator: '>', threshold: 8, duration_seconds: 600, enabled: true, hosts: [UUID, 'f'.repeat(32)] }],
    },
    { shape: 'no rules', body: { rules: [] }, want: [] },
  ])('$shape', ({ body, want }) => {
    expect(rules(body)).toEqual(want);
  });

  it('keeps a rule whose expression it cannot read, without a threshold', () => {
    expect(rules({ rules: [{ id: 9, expression: 'anomaly(system.cpu.user)' }] })).toEqual([{ id: '9' }]);
  });
});

describe('/alerts/recent', () => {
  const event = { type: 'host_alert', id: 17, source_id: 701, source_name: 'cpu high', host_uuid: UUID, message: 'system.cpu.user > 90', occurred_at: T };
  it.each<Variant>([
    { shape: 'the document: {alerts}', body: { alerts: [event] }, want: [{ type: 'host_alert', id: 17, source_id: '701', source_name: 'cpu high', occurred_at: T }] },
    { shape: 'a bare list', body: [event], want: [{ id: 17 }] },
    { shape: 'under events, ids as strings', body: { events: [{ ...event, id: '18', source_id: '702' }] }, want: [{ id: 18, source_id: '702' }] },
    {
      shape: 'an account-wide event with a null host',
      body: { alerts: [{ type: 'website_down', id: 5, source_id: 40001, source_name: 'shop', host_uuid: null, message: 'HTTP 503', occurred_at: T }] },
      want: [{ type: 'website_down', id: 5, source_name: 'shop' }],
    },
  ])('$shape', ({ body, want }) => {
    const { value, dropped } = decode('recentAlerts', body);
    expect(value).toMatchObject(want as object[]);
    expect(dropped).toEqual([]);
  });

  it.each<Variant>([
    {
      shape: 'nested: the event, its source and its time under objects, ids as strings',
      body: { data: { events: [{ event: { id: '17', type: 'host_alert' }, rule: { id: 701, name: 'cpu high' }, host: { uuid: UUID }, triggered: { at: T } }] } },
      want: [{ type: 'host_alert', id: 17, source_id: '701', source_name: 'cpu high', occurred_at: T }],
    },
    {
      shape: 'grouped by type, camelCase, a Unix time in milliseconds',
      body: {
        alerts: {
          website_down: [{ eventId: 5, websiteId: 40001, websiteName: 'shop', createdAt: 1763812800000 }],
          host_alert: [{ eventId: 17, ruleId: '701', ruleName: 'cpu high', hostUuid: UUID, createdAt: 1763812860000 }],
        },
      },
      want: [
        { type: 'website_down', id: 5, source_id: '40001', source_name: 'shop', occurred_at: '2025-11-22T12:00:00.000Z' },
        { type: 'host_alert', id: 17, source_id: '701', source_name: 'cpu high', occurred_at: '2025-11-22T12:01:00.000Z' },
      ],
    },
  ])('reads the fields wherever they sit: $shape', ({ body, want }) => {
    const { value, dropped, fields } = decode('recentAlerts', body);
    expect(dropped).toEqual([]);
    expect(value).toEqual(want);
    expect(fields?.missing).toEqual([]);
  });

  it('reports no field missing for an account without recent events', () => {
    const { value, fields } = decode('recentAlerts', { alerts: [] });
    expect(value).toEqual([]);
    expect(fields?.missing).toEqual([]);
  });

  it('drops an event without a type or id, keeps the others', () => {
    const { value, dropped } = decode('recentAlerts', { alerts: [{ id: 1 }, { type: 'host_alert' }, event] });
    expect(value).toHaveLength(1);
    expect(dropped.map((d) => `${d.reason} ${d.field}`)).toEqual(['missing_field type', 'missing_field id']);
  });
});

describe('/websites', () => {
  const site = { id: 40001, name: 'shop.example.com', url: 'https://shop.example.com/' };
  it.each<Variant>([
    { shape: 'without total (what the stand-in sent)', body: { websites: [{ ...site, uptime_pct_24h: 99.5 }] }, want: [{ id: 40001, uptime_24h: 0.995 }] },
    { shape: 'with total', body: { websites: [site], total: 1 }, want: [{ id: 40001 }] },
    { shape: 'a bare list', body: [site], want: [{ id: 40001 }] },
    { shape: 'under data with meta', body: { data: [site], meta: { total: 1, page: 1 } }, want: [{ id: 40001 }] },
    { shape: 'under results, id as a string', body: { results: [{ ...site, id: '40001' }] }, want: [{ id: 40001 }] },
    {
      shape: 'aggregates nested under stats_24h, ratio uptime, ttfb words',
      body: { websites: [{ ...site, stats_24h: { checks: 1440, failures: 3, avg_ttfb_ms: 182.4 }, uptime_ratio_24h: 0.995, status: 'up' }] },
      want: [{ id: 40001, checks_24h: 1440, failures_24h: 3, ttfb_avg_24h: 0.1824, uptime_24h: 0.995, up: true }],
    },
    {
      shape: 'uptime as an object of windows, paused flag',
      body: { websites: [{ ...site, uptime: { '24h': 98.2, '7d': 99.1 }, paused: true, interval: '5m' }] },
      want: [{ id: 40001, uptime_24h: 0.982, enabled: false, check_interval: 300 }],
    },
    { shape: 'no name: called by its URL', body: [{ id: 7, url: 'https://x.example/' }], want: [{ id: 7, name: 'https://x.example/' }] },
    { shape: 'no name or URL: called by its id', body: [{ id: 8 }], want: [{ id: 8, name: 'website 8' }] },
  ])('$shape', ({ body, want }) => {
    const { value, dropped } = decode('websites', body);
    expect(value.websites).toMatchObject(want as object[]);
    expect(dropped).toEqual([]);
  });

  it('drops a website without an id', () => {
    const { value, dropped } = decode('websites', { websites: [{ name: 'x' }, site] });
    expect(value.websites.map((w) => w.id)).toEqual([40001]);
    expect(dropped[0]).toMatchObject({ path: 'websites[0]', reason: 'missing_field', field: 'id' });
  });
});

describe('/websites/{id} (website summary)', () => {
  it.each<Variant>([
    {
      shape: 'flat, with a tls object and recent checks',
      body: {
        id: 40001,
        name: 'shop',
        url: 'https://shop/',
        uptime_pct_24h: 99.9,
        uptime_pct_7d: 99.5,
        uptime_pct_30d: 99.2,
        avg_ttfb_ms_24h: 180,
        tls: { version: 'TLSv1.3', cert_days_remaining: 41, cert_expires_at: '2027-01-02T08:00:00Z', issuer: "Let's Encrypt" },
        recent_checks: [{ id: 1, checked_at: T, success: true }],
      },
      want: {
        id: 40001,
        uptime: { '24h': 0.999, '7d': 0.995, '30d': 0.992 },
        ttfb_avg_24h: 0.18,
        tls: { version: 'TLSv1.3', cert_remaining: 41 * 86400, cert_expires_at: '2027-01-02T08:00:00Z', issuer: "Let's Encrypt" },
      },
    },
    {
      shape: 'under website, uptime as windows, certificate object with not_after',
      body: { website: { id: '40001', uptime: { '24h': 99, '7d': 98, '30d': 97 }, certificate: { not_after: '2027-01-02 08:00:00+00:00', issuer: { name: 'R3' } } } },
      want: { id: 40001, uptime: { '24h': 0.99, '7d': 0.98, '30d': 0.97 }, tls: { cert_expires_at: '2027-01-02T08:00:00.000Z' } },
    },
    {
      shape: 'under data, flat TLS fields, recent checks beside them (not read: the checks source reads them)',
      body: { data: { id: 40001, tls_version: 'TLSv1.2', ssl_expires_at: '2027-01-02T08:00:00Z', checks: [{ id: 2, checked_at: T }] } },
      want: { tls: { version: 'TLSv1.2', cert_expires_at: '2027-01-02T08:00:00Z' } },
    },
    { shape: 'one figure is enough', body: { id: 40001, uptime_7d: 0.5 }, want: { id: 40001, uptime: { '7d': 0.5 } } },
  ])('$shape', ({ body, want }) => {
    expect(decode('websiteSummary', body).value).toMatchObject(want as object);
  });

  it.each([
    ['nothing but an id', { id: 40001, name: 'shop' }],
    ['its figures under names nobody could place', { id: 1, foo: 99.5, bar: { baz: '2027-01-02T08:00:00Z' }, recent_checks: [{ id: 1, checked_at: T }] }],
  ])('refuses a summary that carries none of its figures (%s): polled for nothing is a shape failure', (_name, body) => {
    expect(() => decode('websiteSummary', body)).toThrow(FieldsMissingError);
    expect(() => decode('websiteSummary', body)).toThrow(/website summary: no item carries any of uptime_24h, .*cert_expires_at/);
  });
});

describe('/websites/{id}/checks', () => {
  const seedCheck = {
    id: 9001,
    success: true,
    status_code: 200,
    ttfb_ms: 120,
    http_version: 'HTTP/2',
    tls_version: 'TLSv1.3',
    cert_days_remaining: 60,
    checked_at: T,
    dns_lookup: 5,
    tls_handshake: 30,
    security_score: 80,
    has_hsts: true,
    has_x_frame_options: true,
    has_x_content_type_options: true,
    has_csp: false,
    has_referrer_policy: true,
    has_permissions_policy: false,
  };
  /** The seed's check as the decoder gives it: durations in seconds, the score 0-1. */
  const decoded = {
    ...seedCheck,
    ttfb_ms: undefined,
    ttfb: 0.12,
    cert_days_remaining: undefined,
    cert_remaining: 60 * 86_400,
    dns_lookup: 0.005,
    tls_handshake: 0.03,
    security_score: 0.8,
  };
  const defined = (check: object) => Object.fromEntries(Object.entries(check).filter(([, v]) => v !== undefined));
  it.each<Variant>([
    { shape: 'the document: {website_id, total, checks}', body: { website_id: 40001, total: 1, checks: [seedCheck] }, want: { website_id: 40001, total: 1, checks: [defined(decoded)] } },
    { shape: 'without total', body: { checks: [seedCheck] }, want: { total: undefined, checks: [defined(decoded)] } },
    { shape: 'a bare list', body: [seedCheck], want: { checks: [defined(decoded)] } },
    {
      shape: 'a failed check: status, TTFB and TLS null',
      body: { checks: [{ ...seedCheck, success: false, status_code: null, ttfb_ms: null, tls_version: null, cert_days_remaining: null, tls_handshake: null }] },
      want: { checks: [{ id: 9001, success: false, checked_at: T, http_version: 'HTTP/2', dns_lookup: 0.005 }] },
    },
    {
      shape: 'TLS, CDN and headers nested under objects, numbers as strings',
      body: { checks: [{ id: '9003', checked_at: T, status: 'up', status_code: '200', ttfb_ms: '120', tls: { version: 'TLSv1.3', handshake_ms: 30, cert_days_remaining: '60' }, cf: { cache_status: 'HIT', datacenter: 'FRA' }, security: { score: '80', headers: { hsts: true, csp: false } } }] },
      want: { checks: [{ id: 9003, success: true, status_code: 200, ttfb: 0.12, tls_version: 'TLSv1.3', tls_handshake: 0.03, cert_remaining: 60 * 86_400, cdn_cache_status: 'HIT', cdn_datacenter: 'FRA', security_score: 0.8, has_hsts: true, has_csp: false }] },
    },
    {
      shape: 'the CDN fields under the provider abbreviation (Cloudflare)',
      body: { checks: [{ ...seedCheck, cf_cache_status: 'HIT', cf_datacenter: 'FRA' }] },
      want: { checks: [{ cdn_cache_status: 'HIT', cdn_datacenter: 'FRA' }] },
    },
    {
      shape: 'the CDN fields under another abbreviation (Fastly), ids as strings',
      body: { checks: [{ ...seedCheck, id: '9002', fastly_cache_status: 'MISS', fastly_datacenter: 'AMS' }] },
      want: { checks: [{ id: 9002, cdn_cache_status: 'MISS', cdn_datacenter: 'AMS' }] },
    },
  ])('$shape', ({ body, want }) => {
    const { value, dropped } = decode('checks', body);
    expect(value).toMatchObject(want as object);
    expect(dropped).toEqual([]);
  });

  it('drops only a check without an id or time', () => {
    const { value, dropped } = decode('checks', { checks: [{ success: false, checked_at: T }, { id: 2, success: false }, { id: 3, checked_at: T }] });
    expect(value.checks.map((c) => c.id)).toEqual([3]);
    expect(dropped.map((d) => d.field)).toEqual(['id', 'checked_at']);
  });
});

describe('/hosts/{uuid}/metrics/series', () => {
  it.each<Variant>([
    {
      shape: 'the document',
      body: { host_uuid: UUID, since: T, interval: 60, series: { 'system.cpu.user': [{ timestamp: T, value: 1.5 }, { timestamp: T, value: null }] } },
      want: { host_uuid: UUID, since: T, interval: 60, series: { 'system.cpu.user': [{ timestamp: T, value: 1.5 }, { timestamp: T, value: null }] } },
    },
    {
      shape: 'without host and since; values as strings',
      body: { interval: '120', series: { 'nginx.status': [{ timestamp: T, value: '1' }] } },
      want: { host_uuid: undefined, since: undefined, interval: 120, series: { 'nginx.status': [{ timestamp: T, value: 1 }] } },
    },
    {
      shape: 'under data',
      body: { data: { interval: 60, series: { 'system.load.1': [] } } },
      want: { interval: 60, series: { 'system.load.1': [] } },
    },
  ])('$shape', ({ body, want }) => {
    expect(decode('series', body).value).toEqual(want);
  });

  it.each<Variant>([
    {
      shape: 'nested envelope: host and window objects, the interval as text',
      body: { host: { uuid: UUID }, window: { since: T, step: '1m' }, series: { 'system.cpu.user': [{ timestamp: T, value: 1.5 }] } },
      want: { host_uuid: UUID, since: T, interval: 60, series: { 'system.cpu.user': [{ timestamp: T, value: 1.5 }] } },
    },
    {
      shape: 'the interval in milliseconds, points as {t, v} with Unix times and strings',
      body: { data: { interval_ms: 60_000, metrics: { 'nginx.status': [{ t: 1763812800, v: '1' }, { t: 1763812860, v: null }] } } },
      want: { host_uuid: undefined, since: undefined, interval: 60, series: { 'nginx.status': [{ timestamp: '2025-11-22T12:00:00.000Z', value: 1 }, { timestamp: '2025-11-22T12:01:00.000Z', value: null }] } },
    },
    {
      shape: 'a list of {metric, points}, points as [time, value]',
      body: { interval: 60, series: [{ metric: 'system.load.1', unit: null, points: [[T, 0.5], [T, null]] }] },
      want: { host_uuid: undefined, since: undefined, interval: 60, series: { 'system.load.1': [{ timestamp: T, value: 0.5 }, { timestamp: T, value: null }] } },
    },
    {
      shape: 'the series under a name of its own',
      body: { interval: 60, host_uuid: UUID, by_metric: { 'system.cpu.user': [{ time: T, value: 2 }] } },
      want: { host_uuid: UUID, since: undefined, interval: 60, series: { 'system.cpu.user': [{ timestamp: T, value: 2 }] } },
    },
  ])('reads the envelope and the points wherever they sit: $shape', ({ body, want }) => {
    const { value, dropped, fields } = decode('series', body);
    expect(dropped).toEqual([]);
    expect(value).toEqual(want);
    expect(fields?.found.interval).toBeDefined();
    expect(fields?.found.timestamp).toBeDefined();
    expect(fields?.found.value).toBeDefined();
  });

  it.each([{ host_uuid: UUID, since: T, interval: 60 }, { interval: 60 }, { since: T, interval: 60 }])(
    'reads the documented envelope %o as the engine does (its own shortcut, by the hot path)',
    (envelope) => {
      const series = { 'system.cpu.user': [{ timestamp: T, value: 1.5 }] };
      const documented = decode('series', { ...envelope, series });
      // One key the document does not show: the envelope is read through the engine.
      const engine = decode('series', { ...envelope, request_id: 'r-1', series });
      expect(documented.value).toEqual(engine.value);
      expect(documented.fields).toEqual({ ...engine.fields, paths: engine.fields?.paths.filter((path) => path !== 'request_id') });
    },
  );

  it('reports the point value missing when no point carries one, rather than reading every point as a gap', () => {
    const { value, fields } = decode('series', { interval: 60, series: { 'system.cpu.user': [{ timestamp: T, amount: 3 }] } });
    expect(value.series['system.cpu.user']).toEqual([{ timestamp: T, value: null }]);
    expect(fields?.missing).toEqual(['since', 'host_uuid', 'value']);
  });

  it('reports the point time missing when no point carries one, and refuses the body', () => {
    const refused = thrownBy(FieldsMissingError, () => decode('series', { interval: 60, series: { 'system.cpu.user': [{ value: 1 }, { value: 2 }] } }));
    expect(refused.message).toContain('series response: no item carries timestamp');
    expect(refused.report.missing).toContain('timestamp');
  });

  it('drops a bad point, naming its metric and index', () => {
    const { value, dropped } = decode('series', { interval: 60, series: { 'system.cpu.user': [{ timestamp: T, value: 1 }, { timestamp: T, value: 'high' }] } });
    expect(value.series['system.cpu.user']).toEqual([{ timestamp: T, value: 1 }]);
    expect(dropped).toEqual([{ path: 'series["system.cpu.user"][1]', reason: 'invalid_value', field: 'value', issue: 'value: "high" is not a number' }]);
  });

  it('keeps the order of documented points around ones it has to read or drop', () => {
    const at = (minute: number) => `2024-05-01T10:0${minute}:00Z`;
    const sent = [{ timestamp: at(1), value: 1 }, { time: at(2), value: '2' }, { timestamp: at(3), value: 'x' }, { timestamp: at(4), value: null }, { timestamp: 'soon', value: 5 }, { timestamp: at(6), value: 6 }];
    const { value, dropped } = decode('series', { interval: 60, series: { a: sent, b: [sent[0], sent[3]] } });
    expect(value.series).toEqual({
      a: [{ timestamp: at(1), value: 1 }, { timestamp: at(2), value: 2 }, { timestamp: at(4), value: null }, { timestamp: at(6), value: 6 }],
      b: [{ timestamp: at(1), value: 1 }, { timestamp: at(4), value: null }],
    });
    expect(dropped.map((d) => d.path)).toEqual(['series["a"][2]', 'series["a"][4]']);
  });

  it('refuses a body without an interval: how long a point covers decides how deltas are counted', () => {
    expect(refusal('series', { series: {} })).toContain('series response: no item carries interval (the body has fields series)');
  });
});
