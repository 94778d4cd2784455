import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../lib/clock.js';
import { InvalidResponseError, NotFoundError } from '../http/errors.js';
import { recordingGate } from '../../../test/support/test-server.js';
import type { Transport } from '../http/transport.js';
import { MajorUnavailableError, ReleaseClient, freeProjectPath, type ReleaseClientOptions } from './client.js';

interface Sent {
  url: URL;
  headers: Readonly<Record<string, string>>;
}

interface Reply {
  body: string;
  type?: string;
  headers?: Record<string, string>;
}

function fakeTransport(answer: (url: URL) => Reply) {
  const sent: Sent[] = [];
  const transport: Transport = {
    get(url, headers) {
      const parsed = new URL(url);
      sent.push({ url: parsed, headers });
      const { body, type = 'application/json', headers: extra = {} } = answer(parsed);
      return Promise.resolve({ status: 200, headers: { 'content-type': type, ...extra }, body: Buffer.from(body) });
    },
  };
  return { transport, sent };
}

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const TWO_HOURS = 2 * 3_600_000;

const record = {
  version: '1.27.3',
  type: 'release',
  tag_name: 'release-1.27.3',
  tag_date: '2024-11-26 15:00:00+00:00',
  source: 'github',
  source_url: 'https://github.com/nginx/nginx/archive/release-1.27.3.tar.gz',
  assets: ['https://example.test/nginx.tgz'],
};

function make(mode: 'free' | 'marketplace', answer: (url: URL) => Reply, extra: Partial<ReleaseClientOptions> = {}) {
  const { transport, sent } = fakeTransport(answer);
  const gate = recordingGate();
  const releases = new ReleaseClient({
    mode,
    baseUrl: mode === 'free' ? 'http://free.test' : 'http://market.test/v1',
    marketplaceKey: mode === 'marketplace' ? 'mk-1' : undefined,
    transport,
    gate,
    clock: new FakeClock(NOW),
    ...extra,
  });
  return { releases, sent, gate };
}

const jsonOf = (value: unknown) => () => ({ body: JSON.stringify(value) });

describe('freeProjectPath', () => {
  it.each([
    ['nginx/nginx', 'nginx/nginx'],
    [' torvalds/linux ', 'torvalds/linux'],
    ['https://github.com/nginx/nginx', 'nginx/nginx'],
    ['https://github.com/nginx/nginx/', 'nginx/nginx'],
    ['https://www.github.com/dvershinin/lastversion.git', 'dvershinin/lastversion'],
    ['github.com/owner/repo/releases/latest', 'owner/repo'],
    ['http://GitHub.com/a.b/c_d-e', 'a.b/c_d-e'],
  ])('%s → %s', (id, expected) => {
    expect(freeProjectPath(id)).toBe(expected);
  });

  it.each([
    ['nginx', 'a bare name names no repository'],
    ['a/b/c', 'exactly <owner>/<repository>'],
    ['https://gitlab.com/group/project', 'gitlab.com is not GitHub'],
    ['https://github.com/only-owner', 'names no <owner>/<repository>'],
    ['owner/re po', "'re po' is not a valid owner or repository name"],
    ['../etc', "'..' is not a valid"],
  ])('refuses %s', (id, message) => {
    expect(() => freeProjectPath(id)).toThrow(message);
  });
});

describe('ReleaseClient, free endpoint', () => {
  it('fetches /<owner>/<repository> without credentials and normalises the version', async () => {
    const { releases, sent, gate } = make('free', jsonOf({ ...record, version: 'v1.27.3' }));
    const latest = await releases.latest({ id: 'https://github.com/nginx/nginx' });
    expect(latest).toEqual({
      version: '1.27.3',
      rawVersion: 'v1.27.3',
      type: 'release',
      tagDate: '2024-11-26 15:00:00+00:00',
      sourceUrl: record.source_url,
      assets: record.assets,
      producedAtMs: NOW - TWO_HOURS,
      freshness: 'worst_case',
    });
    expect(sent[0]?.url.href).toBe('http://free.test/nginx/nginx');
    expect(Object.keys(sent[0]?.headers ?? {})).toEqual(['accept']);
    expect(gate.calls).toEqual([{ priority: 'normal', endpoint: '/{owner}/{repository}' }]);
  });

  it('sends major to the free endpoint too (section 1: every endpoint takes it), and accepts a release in that line', async () => {
    const { releases, sent } = make('free', jsonOf(record));
    const latest = await releases.latest({ id: 'nginx/nginx', major: 1 });
    expect(latest.version).toBe('1.27.3');
    expect(sent[0]?.url.search).toBe('?major=1');
    const plain = make('free', jsonOf(record));
    await plain.releases.latest({ id: 'nginx/nginx' });
    expect(plain.sent[0]?.url.search).toBe('');
  });

  it('rejects a release outside the major line with a not_found error that says why', async () => {
    const { releases } = make('free', jsonOf({ version: '6.12' }));
    const error = await releases.latest({ id: 'torvalds/linux', major: 4 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MajorUnavailableError);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as MajorUnavailableError).kind).toBe('not_found');
    expect((error as Error).message).toContain('answered 6.12, which is not in major line 4');
  });

  it('refuses a bare project name before spending a request', async () => {
    const { releases, sent } = make('free', jsonOf(record));
    await expect(releases.latest({ id: 'nginx' })).rejects.toThrow('bare name');
    expect(sent).toHaveLength(0);
  });

  it.each([['"1.27.3"'], ['{"version":"1.27.3"}']])('reads the ?version form %s', async (body) => {
    const { releases, sent, gate } = make('free', () => ({ body }));
    expect(await releases.version({ id: 'nginx/nginx' })).toEqual({ version: '1.27.3', rawVersion: '1.27.3' });
    expect(sent[0]?.url.href).toBe('http://free.test/nginx/nginx?version');
    expect(gate.calls[0]?.endpoint).toBe('/{owner}/{repository}?version');
  });

  it('has no source or assets lookup', async () => {
    const { releases } = make('free', jsonOf(record));
    await expect(releases.source({ id: 'a/b' })).rejects.toThrow('no source lookup');
    await expect(releases.assets({ id: 'a/b' })).rejects.toThrow('no assets lookup');
  });

  it('fails a version that is no version', async () => {
    const { releases } = make('free', jsonOf({ version: 'latest' }));
    await expect(releases.latest({ id: 'a/b' })).rejects.toBeInstanceOf(InvalidResponseError);
  });
});

describe('ReleaseClient, free endpoint freshness', () => {
  it.each([
    ['an Age header', { age: '600' }, NOW - 600_000, 'age_header'],
    ['Cache-Control: no-cache', { 'cache-control': 'no-cache' }, NOW, 'no_cache'],
    ['a Last-Modified inside the cache time', { 'last-modified': new Date(NOW - 1_800_000).toUTCString() }, NOW - 1_800_000, 'last_modified'],
    ['no caching header: the 2-hour worst case', {}, NOW - TWO_HOURS, 'worst_case'],
  ] as const)('dates the answer from %s', async (_name, headers, produced, basis) => {
    const { releases } = make('free', () => ({ body: JSON.stringify(record), headers }));
    const latest = await releases.latest({ id: 'nginx/nginx' });
    expect(latest.producedAtMs).toBe(produced);
    expect(latest.freshness).toBe(basis);
  });
});

describe('ReleaseClient, marketplace', () => {
  it('asks /release with project and major and sends the marketplace headers', async () => {
    const { releases, sent, gate } = make('marketplace', jsonOf({ version: '4.20', type: 'tag', stars: 1 }));
    const latest = await releases.latest({ id: 'torvalds/linux', major: 4 });
    expect(latest).toEqual({ version: '4.20', rawVersion: '4.20', type: 'tag', producedAtMs: NOW, freshness: 'fetch_time' });
    expect(sent[0]?.url.href).toBe('http://market.test/v1/release?project=torvalds%2Flinux&major=4');
    expect(sent[0]?.headers).toMatchObject({ 'X-RapidAPI-Key': 'mk-1', 'X-RapidAPI-Host': 'market.test' });
    expect(gate.calls).toEqual([{ priority: 'normal', endpoint: '/release' }]);
  });

  it('takes a bare name and custom header names and host', async () => {
    const { releases, sent } = make('marketplace', jsonOf(record), {
      headerNames: { key: 'X-Market-Key', host: 'X-Market-Host' },
      marketplaceHost: 'gateway.example',
    });
    await releases.latest({ id: 'nginx' });
    expect(sent[0]?.url.searchParams.get('project')).toBe('nginx');
    expect(sent[0]?.headers).toMatchObject({ 'X-Market-Key': 'mk-1', 'X-Market-Host': 'gateway.example' });
  });

  it('uses `source` as the source URL only when it is a URL', async () => {
    const { releases } = make('marketplace', jsonOf({ version: '1.0', source: 'https://x/src.tgz' }));
    expect((await releases.latest({ id: 'x' })).sourceUrl).toBe('https://x/src.tgz');
    const { releases: other } = make('marketplace', jsonOf({ version: '1.0', source: 'github' }));
    expect((await other.latest({ id: 'x' })).sourceUrl).toBeUndefined();
  });

  it.each([
    ['/version', (c: ReleaseClient) => c.version({ id: 'p', major: 2 }), { body: '{"version":"v2.5"}' }, { version: '2.5', rawVersion: 'v2.5' }],
    ['/text/version', (c: ReleaseClient) => c.version({ id: 'p', major: 2 }, { text: true }), { body: '2.5\n', type: 'text/plain' }, { version: '2.5', rawVersion: '2.5' }],
    ['/source', (c: ReleaseClient) => c.source({ id: 'p', major: 2 }), { body: '{"source_url":"https://x/s.tgz"}' }, 'https://x/s.tgz'],
    ['/text/source', (c: ReleaseClient) => c.source({ id: 'p', major: 2 }, { text: true }), { body: 'https://x/s.tgz\n', type: 'text/plain' }, 'https://x/s.tgz'],
    ['/assets', (c: ReleaseClient) => c.assets({ id: 'p', major: 2 }), { body: '{"assets":["https://x/a"]}' }, { value: ['https://x/a'], dropped: [] }],
    ['/text/assets', (c: ReleaseClient) => c.assets({ id: 'p', major: 2 }, { text: true }), { body: 'https://x/a\n\nhttps://x/b\n', type: 'text/plain' }, { value: ['https://x/a', 'https://x/b'], dropped: [] }],
  ] as const)('%s', async (path, call, reply, expected) => {
    const { releases, sent, gate } = make('marketplace', () => reply);
    expect(await call(releases)).toEqual(expected);
    expect(sent[0]?.url.pathname).toBe(`/v1${path}`);
    expect(sent[0]?.url.search).toBe('?project=p&major=2');
    expect(gate.calls[0]?.endpoint).toBe(path);
  });

  it.each([
    [{ marketplaceKey: undefined }, 'marketplace mode needs a marketplaceKey'],
    [{ headerNames: { key: 'bad header' } }, "'bad header' is not a valid HTTP header name"],
    [{ baseUrl: 'ftp://x' }, 'http or https'],
    [{ mode: 'paid' as 'free' }, "release mode must be 'free' or 'marketplace'"],
  ])('refuses options %o', (extra, message) => {
    expect(() => make('marketplace', jsonOf(record), extra)).toThrow(message);
  });

  it.each([[-1], [1.5], ['x'], ['1.'], ['']])('refuses major %j', async (major) => {
    const { releases, sent } = make('marketplace', jsonOf(record));
    await expect(releases.latest({ id: 'x', major })).rejects.toThrow('major must be a version line such as 4, 0 or 1.26');
    expect(sent).toHaveLength(0);
  });

  it.each([
    [0, '0', '0.9.1'],
    ['0', '0', '0.9.1'],
    ['1.26', '1.26', '1.26.3'],
    ['1.20', '1.20', '1.20.2'],
  ])('takes major %j as the service does (sent as %s)', async (major, sent, version) => {
    const { releases, sent: requests } = make('marketplace', jsonOf({ version }));
    expect((await releases.latest({ id: 'x', major })).version).toBe(version);
    expect(requests[0]?.url.searchParams.get('major')).toBe(sent);
  });
});
