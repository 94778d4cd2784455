import { describe, expect, it } from 'vitest';
import {
  decodeBody,
  decodeMarketplaceAssets,
  decodeMarketplaceSource,
  decodeMarketplaceVersion,
  decodeReleaseRecord,
  decodeTextAssets,
  decodeTextValue,
  decodeVersionOnly,
  formatPath,
  monitoringDecoders,
  type JsonDecoder,
} from './decode.js';
import { InvalidResponseError, type RequestContext } from './http/errors.js';

const context: RequestContext = { api: 'monitoring', endpoint: '/test' };
const T = '2026-11-22T12:00:00Z';

const host = (uuid = '0123456789abcdef0123456789abcdef') => ({
  uuid,
  hostname: 'web-1',
  type: 'linux',
  agent_version: '1.8.11-1',
  last_seen: T,
  online: true,
  allowed: true,
  server_kinds: ['web-server'],
  tags: ['env:prod', 'foo'],
  created_at: T,
});
const check = (id = 1) => ({
  id,
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
  cf_cache_status: 'HIT',
  cf_datacenter: 'FRA',
});
const rule = (id = 1) => ({ id, name: 'cpu high', metric: 'system.cpu.user', operator: '>', threshold: 90, duration_seconds: 300, enabled: true, host_uuid: null, created_at: T });
const event = (id = 1) => ({ type: 'host_alert', id, source_id: 3, source_name: 'cpu high', host_uuid: 'abc', message: 'system.cpu.user > 90', occurred_at: T });
const website = (id = 1) => ({ id, name: 'shop', url: 'https://shop.example', enabled: true, up: true, uptime_pct_24h: 99.5, last_status_code: 200 });
const component = (id = 'c1') => ({ id, kind: 'web-server', software: 'nginx', name: 'nginx @ web-1', version: '1.27.3', pid: 42 });
const point = (value: number | null = 1) => ({ timestamp: T, value });

interface Case {
  name: keyof typeof monitoringDecoders;
  good: Record<string, unknown>;
  /** Same response with every optional field left out. */
  minimal: Record<string, unknown>;
  /** Where a list lives, and a malformed item to put in it. */
  list?: { key: string; bad: unknown; expectPath: string };
  /** A response whose envelope is wrong, and the path the error must name. */
  wrongEnvelope: [unknown, string];
}

const cases: Case[] = [
  {
    name: 'account',
    good: { id: 'a1', name: 'Acme', plan: 'pro', limits: { hosts: 10 }, usage: { hosts: 3 }, rate_limit: { requests_per_minute: 120, burst: 30 } },
    minimal: { plan: 'pro' },
    wrongEnvelope: [{ plan: 3 }, 'plan'],
  },
  {
    name: 'hosts',
    good: { hosts: [host('a'), host('b')], total: 2 },
    minimal: { hosts: [], total: 0 },
    list: { key: 'hosts', bad: { ...host('c'), uuid: 7 }, expectPath: 'hosts[1]' },
    wrongEnvelope: [{ total: 1 }, 'hosts'],
  },
  { name: 'host', good: host(), minimal: host(), wrongEnvelope: [{ ...host(), online: 'yes' }, 'online'] },
  {
    name: 'metricCatalogue',
    good: { host_uuid: 'a', metrics: { system: ['system.cpu.user'], nginx: ['nginx.status'] } },
    minimal: { host_uuid: 'a', metrics: {} },
    wrongEnvelope: [{ host_uuid: 'a', metrics: ['x'] }, 'metrics'],
  },
  {
    name: 'series',
    good: { host_uuid: 'a', since: T, interval: 60, series: { 'system.cpu.user': [point(1), point(null)] } },
    minimal: { host_uuid: 'a', since: T, interval: 60, series: {} },
    wrongEnvelope: [{ host_uuid: 'a', since: T, interval: 0, series: {} }, 'interval'],
  },
  {
    name: 'latest',
    good: { host_uuid: 'a', name: 'system.cpu.user', timestamp: T, value: 3.5 },
    minimal: { host_uuid: 'a', name: 'system.cpu.user', timestamp: null, value: null },
    wrongEnvelope: [{ host_uuid: 'a', name: 'x', timestamp: 'yesterday', value: 1 }, 'timestamp'],
  },
  {
    name: 'components',
    good: { host_uuid: 'a', components: [component('c1'), component('c2')] },
    minimal: { host_uuid: 'a', components: [{ id: 'c1', kind: 'cache', software: 'varnish', name: 'varnish' }] },
    list: { key: 'components', bad: { id: 'c3' }, expectPath: 'components[1]' },
    wrongEnvelope: [{ host_uuid: 'a', components: {} }, 'components'],
  },
  {
    name: 'alertRules',
    good: { rules: [rule(1), rule(2)] },
    minimal: { rules: [{ id: 1, name: 'r', metric: 'm', operator: '>', threshold: 1, enabled: false }] },
    list: { key: 'rules', bad: { ...rule(3), threshold: 'high' }, expectPath: 'rules[1]' },
    wrongEnvelope: [{ alert_rules: [] }, 'rules'],
  },
  {
    name: 'recentAlerts',
    good: { alerts: [event(1), event(2)] },
    minimal: { alerts: [{ type: 'website_down', id: 1, source_id: 2, source_name: 'shop', message: '503', occurred_at: T }] },
    list: { key: 'alerts', bad: { ...event(3), type: 'meteor_strike' }, expectPath: 'alerts[1]' },
    wrongEnvelope: [{ alerts: null }, 'alerts'],
  },
  {
    name: 'websites',
    good: { websites: [website(1), website(2)], total: 2 },
    minimal: { websites: [{ id: 1, name: 'shop', url: 'https://shop.example' }], total: 1 },
    list: { key: 'websites', bad: { name: 'no id' }, expectPath: 'websites[1]' },
    wrongEnvelope: [{ websites: [], total: -1 }, 'total'],
  },
  {
    name: 'websiteSummary',
    good: { id: 1, name: 'shop', url: 'https://shop.example', uptime_pct_7d: 99, tls: { version: 'TLSv1.3', cert_days_remaining: 40 }, recent_checks: [check(1), check(2)] },
    minimal: { id: 1, name: 'shop', url: 'https://shop.example' },
    list: { key: 'recent_checks', bad: { ...check(3), success: 'maybe' }, expectPath: 'recent_checks[1]' },
    wrongEnvelope: [{ id: 'one', name: 'shop', url: 'u' }, 'id'],
  },
  {
    name: 'checks',
    good: { website_id: 1, total: 2, checks: [check(1), check(2)] },
    minimal: { website_id: 1, total: 1, checks: [{ ...check(1), cf_cache_status: undefined, cf_datacenter: undefined }] },
    list: { key: 'checks', bad: { ...check(3), checked_at: 'not a time' }, expectPath: 'checks[1]' },
    wrongEnvelope: [{ website_id: 1, total: 0 }, 'checks'],
  },
];

function thrown(fn: () => unknown): InvalidResponseError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidResponseError);
    return error as InvalidResponseError;
  }
  throw new Error('expected an InvalidResponseError');
}

const decoderOf = (name: Case['name']) => monitoringDecoders[name] as JsonDecoder<unknown>;
const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));

describe.each(cases)('monitoring decoder $name', ({ name, good, minimal, wrongEnvelope }) => {
  const decode = decoderOf(name);

  it('decodes a good response unchanged', () => {
    expect(decodeBody(decode, bytes(good), context)).toEqual({ value: good, dropped: [] });
  });

  it('accepts and strips unknown fields', () => {
    const extended = { ...good, brand_new_field: { nested: true } };
    const { value } = decode(extended, context);
    expect(value).toEqual(good);
  });

  it('accepts a response without its optional fields', () => {
    expect(decode(JSON.parse(JSON.stringify(minimal)), context).dropped).toEqual([]);
  });

  it('fails a wrong envelope naming the field', () => {
    const [raw, path] = wrongEnvelope;
    const error = thrown(() => decode(raw, context));
    expect(error.issues.some((issue) => issue.startsWith(path))).toBe(true);
    expect(error.message).toContain(path);
    expect(error.context).toEqual(context);
  });

  it('fails truncated JSON', () => {
    const text = JSON.stringify(good);
    const error = thrown(() => decodeBody(decode, Buffer.from(text.slice(0, text.length - 5)), context));
    expect(error.message).toContain('not valid JSON');
  });

  it('fails an HTML page naming its content type', () => {
    const error = thrown(() => decodeBody(decode, Buffer.from('<html>Bad gateway</html>'), context, 'text/html; charset=utf-8'));
    expect(error.message).toContain('content-type text/html');
  });

  it('fails an empty body', () => {
    expect(thrown(() => decodeBody(decode, Buffer.alloc(0), context)).message).toContain('empty body');
  });
});

const listCases = cases.flatMap((c) => (c.list ? [{ name: c.name, good: c.good, list: c.list }] : []));

describe.each(listCases)('monitoring list decoder $name', ({ name, good, list }) => {
  it('drops one malformed item and keeps the good ones', () => {
    const items = good[list.key] as unknown[];
    const mixed = { ...good, [list.key]: [items[0], list.bad, ...items.slice(1)] };
    const { value, dropped } = decoderOf(name)(mixed, context);
    expect((value as Record<string, unknown>)[list.key]).toEqual(items);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]?.path).toBe(list.expectPath);
    expect(dropped[0]?.issue).toMatch(/: /);
  });
});

describe('series points', () => {
  it('drops a bad point of one metric and names it by metric and index', () => {
    const raw = {
      host_uuid: 'a',
      since: T,
      interval: 60,
      series: { 'system.cpu.user': [point(1), { timestamp: T, value: 'high' }, point(3)], 'nginx.status': [point(1)] },
    };
    const { value, dropped } = monitoringDecoders.series(raw, context);
    expect(value.series['system.cpu.user']).toEqual([point(1), point(3)]);
    expect(value.series['nginx.status']).toEqual([point(1)]);
    expect(dropped).toEqual([{ path: 'series["system.cpu.user"][1]', issue: expect.stringContaining('value') as string }]);
  });
});

describe('formatPath', () => {
  it.each([
    [['hosts', 3, 'uuid'], 'hosts[3].uuid'],
    [['series', 'system.cpu.user', 0], 'series["system.cpu.user"][0]'],
    [[], '(root)'],
    [[0], '[0]'],
  ])('%j → %s', (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });
});

describe('release decoders', () => {
  const releaseContext: RequestContext = { api: 'releases', endpoint: '/release' };

  it.each([
    ['a bare string', '1.27.3', '1.27.3'],
    ['an object', { version: 'v2.0' }, 'v2.0'],
    ['an object with more fields', { version: '6.12', type: 'release' }, '6.12'],
  ])('reads the free ?version form as %s', (_what, raw, expected) => {
    expect(decodeVersionOnly(raw, releaseContext).value).toBe(expected);
  });

  it.each([[''], [{ v: '1' }], [12], [null]])('refuses the ?version form %j', (raw) => {
    thrown(() => decodeVersionOnly(raw, releaseContext));
  });

  it('reads a full release record and strips unknown fields', () => {
    const record = {
      version: '1.27.3',
      type: 'release',
      tag_name: 'release-1.27.3',
      tag_date: '2024-11-26 15:00:00+00:00',
      v_prefix: false,
      source: 'github',
      source_url: 'https://github.com/nginx/nginx/archive/release-1.27.3.tar.gz',
      assets: ['https://x/a.tgz'],
      assets_with_digests: [{ url: 'https://x/a.tgz', name: 'a.tgz', size: 10 }],
      from: 'https://github.com/nginx/nginx',
    };
    expect(decodeReleaseRecord({ ...record, stars: 5 }, releaseContext).value).toEqual(record);
    expect(decodeReleaseRecord({ version: '1' }, releaseContext).value).toEqual({ version: '1' });
  });

  it('refuses a record without a version', () => {
    expect(thrown(() => decodeReleaseRecord({ type: 'release' }, releaseContext)).issues[0]).toMatch(/^version: /);
  });

  it.each([
    [decodeMarketplaceVersion, { version: '6.12' }, '6.12'],
    [decodeMarketplaceSource, { source: 'https://x/src.tgz' }, 'https://x/src.tgz'],
    [decodeMarketplaceSource, { source_url: 'https://x/src2.tgz' }, 'https://x/src2.tgz'],
    [decodeMarketplaceAssets, { assets: ['https://x/a', 'https://x/b'] }, ['https://x/a', 'https://x/b']],
  ] as [JsonDecoder<unknown>, unknown, unknown][])('reads marketplace JSON %#', (decoder, raw, expected) => {
    expect(decoder(raw, releaseContext).value).toEqual(expected);
  });

  it.each([
    [decodeMarketplaceVersion, { v: '1' }],
    [decodeMarketplaceSource, { url: 'x' }],
    [decodeMarketplaceAssets, { assets: 'https://x/a' }],
  ] as [JsonDecoder<unknown>, unknown][])('refuses wrong marketplace JSON %#', (decoder, raw) => {
    thrown(() => decoder(raw, releaseContext));
  });

  it.each([
    ['6.12\n', '6.12'],
    ['  4.20  \r\n\r\n', '4.20'],
  ])('reads a text value %j', (text, expected) => {
    expect(decodeTextValue(Buffer.from(text), releaseContext, 'version')).toBe(expected);
  });

  it.each([[''], ['\n \n'], ['1.0\n2.0\n'], ['<html>Service Unavailable</html> page'], ['x'.repeat(600)]])(
    'refuses the text value %j',
    (text) => {
      expect(thrown(() => decodeTextValue(Buffer.from(text), releaseContext, 'version')).message).toContain('single version');
    },
  );

  it('reads text assets one URL a line, ignoring blanks and dropping non-URLs', () => {
    const body = Buffer.from('https://x/a.tgz\r\n\n  https://x/b.zip  \nnot a url\n\n');
    expect(decodeTextAssets(body)).toEqual({
      value: ['https://x/a.tgz', 'https://x/b.zip'],
      dropped: [{ path: 'assets[2]', issue: 'not an http(s) URL' }],
    });
  });

  it('reads an empty text asset list', () => {
    expect(decodeTextAssets(Buffer.from('\n'))).toEqual({ value: [], dropped: [] });
  });
});
