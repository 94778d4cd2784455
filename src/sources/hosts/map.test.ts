import { describe, expect, it } from 'vitest';
import type { Host } from './decode.js';
import { globMatcher } from '../../lib/glob.js';
import { familyHeads, sampleLines } from '../../../test/support/family-lines.js';
import { completeHost, createHostFilter, inventoryHost, mapHosts, missingHostFields, ONLINE_WITHIN_MS, parseTag, tagLabels, type HostFilters } from './map.js';

function host(overrides: Partial<Host> = {}): Host {
  return {
    uuid: 'a'.repeat(32),
    hostname: 'web-1',
    type: 'vm',
    agent_version: '1.8.11-1',
    last_seen: '2026-11-22T12:00:00Z',
    online: true,
    allowed: true,
    server_kinds: [],
    tags: [],
    created_at: '2026-01-01T00:00:00Z',
    ...overrides,
  };
}

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const opts = { account: 'prod', tagLabels: [] as string[] };

describe('mapHosts', () => {
  it.each([
    {
      name: 'one online host',
      input: [host()],
      tagLabels: [] as string[],
      want: [
        `monapi_host_allowed{account="prod",host_uuid="${A}"} 1`,
        `monapi_host_created_timestamp_seconds{account="prod",host_uuid="${A}"} ${Date.UTC(2026, 0, 1) / 1000}`,
        `monapi_host_info{account="prod",agent_version="1.8.11-1",host_type="vm",host_uuid="${A}",hostname="web-1"} 1`,
        `monapi_host_last_seen_timestamp_seconds{account="prod",host_uuid="${A}"} ${Date.UTC(2026, 10, 22, 12) / 1000}`,
        `monapi_host_online{account="prod",host_uuid="${A}"} 1`,
        'monapi_hosts{account="prod",state="not_allowed"} 0',
        'monapi_hosts{account="prod",state="offline"} 0',
        'monapi_hosts{account="prod",state="online"} 1',
        'monapi_hosts{account="prod",state="unknown"} 0',
      ],
    },
    {
      name: 'no hosts: only the zero counts remain (every host series retracted)',
      input: [],
      tagLabels: ['*'],
      want: [
        'monapi_hosts{account="prod",state="not_allowed"} 0',
        'monapi_hosts{account="prod",state="offline"} 0',
        'monapi_hosts{account="prod",state="online"} 0',
        'monapi_hosts{account="prod",state="unknown"} 0',
      ],
    },
    {
      name: 'tags and server kinds (duplicate kinds collapse)',
      input: [host({ tags: ['env:prod', 'canary', 'team:b', 'team:a', 'secret:x'], server_kinds: ['web-server', 'database', 'web-server'] })],
      tagLabels: ['env', 'team', 'canary'],
      want: [
        `monapi_host_server_kind_info{account="prod",host_uuid="${A}",server_kind="database"} 1`,
        `monapi_host_server_kind_info{account="prod",host_uuid="${A}",server_kind="web-server"} 1`,
        `monapi_host_tags_info{account="prod",host_uuid="${A}",tag_canary="true",tag_env="prod",tag_team="a,b"} 1`,
      ],
    },
  ])('$name', ({ input, tagLabels: allow, want }) => {
    const lines = sampleLines(mapHosts(input, { account: 'prod', tagLabels: allow }));
    for (const line of want) expect(lines).toContain(line);
    if (input.length === 0) expect(lines).toEqual(want);
  });

  it('counts states: not_allowed wins over online; every state has a series, 0 or not', () => {
    const hosts = [
      host({ uuid: A, online: true, allowed: true }),
      host({ uuid: B, online: false, allowed: true }),
      host({ uuid: 'c', online: true, allowed: false }),
      host({ uuid: 'd', online: false, allowed: false }),
    ];
    const lines = sampleLines(mapHosts(hosts, opts)).filter((l) => l.startsWith('monapi_hosts{'));
    expect(lines).toEqual([
      'monapi_hosts{account="prod",state="not_allowed"} 2',
      'monapi_hosts{account="prod",state="offline"} 1',
      'monapi_hosts{account="prod",state="online"} 1',
      'monapi_hosts{account="prod",state="unknown"} 0',
    ]);
  });

  it('emits a host tags series with only identity labels when no allowlisted tag is present', () => {
    const lines = sampleLines(mapHosts([host({ tags: ['other:x'] })], { account: 'prod', tagLabels: ['env'] }));
    expect(lines).toContain(`monapi_host_tags_info{account="prod",host_uuid="${A}"} 1`);
  });

  it('omits the tags family when the allowlist is empty', () => {
    const names = mapHosts([host({ tags: ['env:prod'] })], opts).map((f) => f.spec.name);
    expect(names).not.toContain('monapi_host_tags_info');
  });

  it('keeps odd but schema-valid values as they are and lists a duplicated uuid once', () => {
    const odd = host({ hostname: '', type: '', agent_version: '', last_seen: '1970-01-01T00:00:00Z' });
    const families = mapHosts([odd, odd], opts);
    const lines = sampleLines(families);
    expect(lines).toContain(`monapi_host_info{account="prod",agent_version="",host_type="",host_uuid="${A}",hostname=""} 1`);
    expect(lines).toContain(`monapi_host_last_seen_timestamp_seconds{account="prod",host_uuid="${A}"} 0`);
    expect(lines).toContain('monapi_hosts{account="prod",state="online"} 1');
  });

  it('declares the expected families with units', () => {
    expect(familyHeads(mapHosts([host({ server_kinds: ['cache'] })], { account: 'x', tagLabels: ['*'] }))).toEqual([
      'monapi_host_allowed gauge',
      'monapi_host_created_timestamp_seconds gauge seconds',
      'monapi_host_info info',
      'monapi_host_last_seen_timestamp_seconds gauge seconds',
      'monapi_host_online gauge',
      'monapi_host_server_kind_info info',
      'monapi_host_tags_info info',
      'monapi_hosts gauge',
    ]);
  });

  it('gives a host known only by its uuid: info with empty labels, its state unknown', () => {
    const lines = sampleLines(mapHosts([{ uuid: A }], { account: 'prod', tagLabels: ['*'] }));
    expect(lines).toEqual([
      `monapi_host_info{account="prod",agent_version="",host_type="",host_uuid="${A}",hostname=""} 1`,
      `monapi_host_tags_info{account="prod",host_uuid="${A}"} 1`,
      'monapi_hosts{account="prod",state="not_allowed"} 0',
      'monapi_hosts{account="prod",state="offline"} 0',
      'monapi_hosts{account="prod",state="online"} 0',
      'monapi_hosts{account="prod",state="unknown"} 1',
    ]);
  });

  it('names the host when a timestamp cannot be read', () => {
    expect(() => mapHosts([host({ last_seen: 'soon' })], opts)).toThrow(new RegExp(`host ${A} last_seen`));
  });
});

describe('completing a host list item', () => {
  const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
  const seen = (agoMs: number) => new Date(NOW - agoMs).toISOString();

  it.each<[string, Host, Host | undefined, Partial<Host>]>([
    ['a complete list item is taken as is', host(), undefined, host()],
    ['the details fill what the list lacks', { uuid: A, online: true }, { uuid: A, hostname: 'web-9', tags: ['env:prod'], online: false }, { hostname: 'web-9', tags: ['env:prod'], online: true }],
    ['online from last_seen within 3 minutes', { uuid: A, last_seen: seen(ONLINE_WITHIN_MS) }, undefined, { online: true }],
    ['offline from an older last_seen', { uuid: A, last_seen: seen(ONLINE_WITHIN_MS + 1) }, undefined, { online: false }],
    ['neither online nor last_seen: unknown', { uuid: A }, undefined, { online: undefined }],
  ])('%s', (_name, listed, details, want) => {
    const got = completeHost(listed, details, NOW);
    for (const [field, value] of Object.entries(want)) expect(got[field as keyof Host], field).toEqual(value);
  });

  it('lists the fields the list item lacks', () => {
    expect(missingHostFields(host())).toEqual([]);
    expect(missingHostFields({ uuid: A, hostname: 'x', online: true })).toEqual(['type', 'agent_version', 'last_seen', 'allowed', 'server_kinds', 'tags', 'created_at']);
  });

  it('resolves unknowns for polling: no name is empty, unknown online-ness polls as online, no tags none', () => {
    expect(inventoryHost({ uuid: A })).toEqual({ uuid: A, hostname: '', online: true, tags: [] });
  });
});

describe('parseTag / tagLabels', () => {
  it.each([
    { input: 'env:prod', want: { key: 'env', value: 'prod' } },
    { input: 'url:http://x', want: { key: 'url', value: 'http://x' } },
    { input: 'env:', want: { key: 'env', value: '' } },
    { input: 'canary', want: { key: 'canary', value: 'true' } },
    { input: ':orphan', want: undefined },
    { input: '', want: undefined },
  ])('parseTag($input)', ({ input, want }) => {
    expect(parseTag(input)).toEqual(want);
  });

  it.each([
    { name: 'sanitised key', tags: ['team-name:x'], allow: ['*'], want: { tag_team_name: 'x' } },
    { name: 'same key twice, sorted and deduplicated', tags: ['k:b', 'k:a', 'k:b'], allow: ['k'], want: { tag_k: 'a,b' } },
    { name: 'keys that sanitise alike merge', tags: ['team-a:1', 'team_a:2'], allow: ['team*'], want: { tag_team_a: '1,2' } },
    { name: 'not allowlisted', tags: ['env:prod'], allow: ['team'], want: {} },
  ])('tagLabels: $name', ({ tags, allow, want }) => {
    expect(tagLabels(tags, globMatcher(allow))).toEqual(want);
  });
});

describe('createHostFilter over a list', () => {
  const hosts = [
    { hostname: 'web-1', tags: ['env:prod'] },
    { hostname: 'web-2', tags: ['env:staging', 'canary'] },
    { hostname: 'db-1', tags: ['env:prod', 'role:db'] },
  ];
  const none: HostFilters = { includeTags: [], excludeTags: [], includeNames: [], excludeNames: [] };
  it.each([
    { name: 'no filters keeps all', filters: none, want: ['web-1', 'web-2', 'db-1'] },
    { name: 'include names', filters: { ...none, includeNames: ['web-*'] }, want: ['web-1', 'web-2'] },
    { name: 'exclude names', filters: { ...none, excludeNames: ['*-2'] }, want: ['web-1', 'db-1'] },
    { name: 'include tags', filters: { ...none, includeTags: ['env:prod'] }, want: ['web-1', 'db-1'] },
    { name: 'include bare tag', filters: { ...none, includeTags: ['canary'] }, want: ['web-2'] },
    { name: 'exclude tag glob', filters: { ...none, excludeTags: ['role:*'] }, want: ['web-1', 'web-2'] },
    {
      name: 'both includes must hold, exclusion wins',
      filters: { ...none, includeNames: ['*-1'], includeTags: ['env:*'], excludeTags: ['role:db'] },
      want: ['web-1'],
    },
  ])('$name', ({ filters, want }) => {
    expect(hosts.filter(createHostFilter(filters)).map((h) => h.hostname)).toEqual(want);
  });
});

describe('createHostFilter', () => {
  const none = { includeTags: [], excludeTags: [], includeNames: [], excludeNames: [] };
  it.each([
    [none, { hostname: 'web-1', tags: [] }, true],
    [{ ...none, includeTags: ['env:prod'] }, { hostname: 'web-1', tags: ['env:prod', 'role:web'] }, true],
    [{ ...none, includeTags: ['env:prod'] }, { hostname: 'web-1', tags: ['env:staging'] }, false],
    [{ ...none, includeTags: ['env:*'] }, { hostname: 'web-1', tags: ['env:staging'] }, true],
    // A bare tag (the agent allows them) matches only itself.
    [{ ...none, includeTags: ['canary'] }, { hostname: 'web-1', tags: ['canary'] }, true],
    [{ ...none, includeTags: ['canary'] }, { hostname: 'web-1', tags: ['canary:yes'] }, false],
    [{ ...none, excludeTags: ['maintenance'] }, { hostname: 'web-1', tags: ['env:prod', 'maintenance'] }, false],
    [{ ...none, includeNames: ['web-*'] }, { hostname: 'db-1', tags: [] }, false],
    [{ ...none, includeTags: ['env:prod'], includeNames: ['web-*'] }, { hostname: 'web-2', tags: ['env:prod'] }, true],
    [{ ...none, includeTags: ['env:prod'], excludeNames: ['web-2'] }, { hostname: 'web-2', tags: ['env:prod'] }, false],
  ])('%j on %j is %s', (filter, host, expected) => {
    expect(createHostFilter(filter)(host)).toBe(expected);
  });
});
