import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/lib/clock.js';
import {
  SimAssetsAnswer,
  SimReleaseError as ReleaseErrorBody,
  SimReleaseRecord as ReleaseRecord,
  SimSourceAnswer as MarketplaceSource,
  SimVersionAnswer as MarketplaceVersion,
} from '../../simulator/releases/schemas.js';
import { createMarketplaceApp, RELEASE_CATALOGUE, ReleaseStore } from '../../simulator/releases/index.js';

const KEY = 'mk-test-4f1c9a';
const AUTH = { 'X-RapidAPI-Key': KEY, 'X-RapidAPI-Host': 'release-lookup.p.rapidapi.com' };

const servers: { close: () => void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function serve(app: express.Express): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push({ close: () => (server.closeAllConnections(), server.close()) });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const UNSUBSCRIBED_KEY = 'mk-unsubscribed-77d2';

async function marketSim(options: { ratePerMinute?: number } = {}) {
  const clock = new FakeClock();
  const store = new ReleaseStore(clock);
  const stats: [string, number][] = [];
  const base = await serve(
    createMarketplaceApp({ clock, key: KEY, unsubscribedKey: UNSUBSCRIBED_KEY, store, ...options, stats: (l, s) => stats.push([l, s]) }),
  );
  const get = async (path: string, headers: Record<string, string> = AUTH) => {
    const res = await fetch(`${base}${path}`, { headers });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  return { clock, store, base, stats, get };
}

describe('§4 commercial endpoints: documented examples', () => {
  it('§4: /release?project=nginx gives {"version":"1.27.3","type":"release",...}', async () => {
    const { get } = await marketSim();
    const res = await get('/release?project=nginx');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.text.startsWith('{"version":"1.27.3","type":"release",')).toBe(true);
    expect(ReleaseRecord.parse(JSON.parse(res.text)).tag_name).toBe('release-1.27.3');
  });

  it('§4: /text/version?project=torvalds/linux gives 6.12, and with &major=4 gives 4.20', async () => {
    const { get } = await marketSim();
    const latest = await get('/text/version?project=torvalds/linux');
    expect(latest.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(latest.text).toBe('6.12');
    expect((await get('/text/version?project=torvalds/linux&major=4')).text).toBe('4.20');
  });
});

describe('§4 commercial endpoints: layouts', () => {
  it('§4 (layout not shown; chosen): /version is {"version": ...}', async () => {
    const { get } = await marketSim();
    const body: unknown = JSON.parse((await get('/version?project=varnish')).text);
    expect(body).toEqual({ version: '7.6.1' });
    expect(MarketplaceVersion.safeParse(body).success).toBe(true);
  });

  it('§4 (layout not shown; chosen): /source is {"source": <tarball URL>}, the record\'s source_url', async () => {
    const { get } = await marketSim();
    const body: unknown = JSON.parse((await get('/source?project=nginx')).text);
    expect(body).toEqual({ source: 'https://github.com/nginx/nginx/archive/release-1.27.3/nginx-1.27.3.tar.gz' });
    expect(MarketplaceSource.safeParse(body).success).toBe(true);
  });

  it('§4 (layout not shown; chosen): /assets is {"assets": [urls]}, the record\'s assets', async () => {
    const { get } = await marketSim();
    const body: unknown = JSON.parse((await get('/assets?project=curl')).text);
    const record = ReleaseRecord.parse(JSON.parse((await get('/release?project=curl')).text));
    expect(body).toEqual({ assets: record.assets });
    expect(SimAssetsAnswer.safeParse(body).success).toBe(true);
    expect(record.assets).toHaveLength(5);
  });

  it('§4: /text/source and /text/assets are plain text, assets one URL a line', async () => {
    const { get } = await marketSim();
    const record = ReleaseRecord.parse(JSON.parse((await get('/release?project=curl')).text));
    const source = await get('/text/source?project=curl');
    expect(source.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(source.text).toBe(record.source_url);
    const assets = await get('/text/assets?project=curl');
    expect(assets.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(assets.text.split('\n')).toEqual(record.assets);
  });

  it('§4: /text/assets of a release without assets is an empty body', async () => {
    const { get } = await marketSim();
    const res = await get('/text/assets?project=linux');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });

  it.each(RELEASE_CATALOGUE.map((p) => p.name))('§2: the release record of %s passes ReleaseRecord', async (name) => {
    const { get } = await marketSim();
    const body: unknown = JSON.parse((await get(`/release?project=${name}`)).text);
    const record = ReleaseRecord.parse(body);
    expect(record.tag_date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\+00:00$/);
    expect(record.source).toMatch(/^(github|gitlab)$/);
    expect(record.from).toMatch(/^https:\/\/(github|gitlab)\.com\/[^/]+\/[^/]+$/);
    expect(record.assets_with_digests?.map((a) => a.url)).toEqual(record.assets);
  });
});

describe('§2 project identifiers', () => {
  it.each([
    'nginx',
    'NGINX',
    'nginx/nginx',
    'https://github.com/nginx/nginx',
    'https://github.com/nginx/nginx/',
    'http://www.github.com/nginx/nginx.git',
    'github.com/nginx/nginx',
  ])('§2: project_id %j resolves to nginx/nginx', async (id) => {
    const { get } = await marketSim();
    const res = await get(`/release?project=${encodeURIComponent(id)}`);
    expect(res.status).toBe(200);
    expect(ReleaseRecord.parse(JSON.parse(res.text))).toMatchObject({ version: '1.27.3', from: 'https://github.com/nginx/nginx' });
  });

  it.each(['php', 'php-src', 'php/php-src', 'https://github.com/php/php-src'])('§2: project_id %j resolves to php/php-src', async (id) => {
    const { get } = await marketSim();
    expect((await get(`/text/version?project=${encodeURIComponent(id)}`)).text).toBe('8.4.1');
  });

  it.each(['nobody', 'nobody/nothing', 'https://gitlab.com/nginx/nginx', 'https://example.com/nginx/nginx', 'nginx/nginx/extra'])(
    '§7 (chosen): project_id %j names no project: 404',
    async (id) => {
      const { get } = await marketSim();
      const res = await get(`/version?project=${encodeURIComponent(id)}`);
      expect(res.status).toBe(404);
      expect(ReleaseErrorBody.parse(JSON.parse(res.text)).error).toBe('not_found');
    },
  );
});

describe('§4 rule: major=N', () => {
  it.each([
    ['linux', 4, '4.20'],
    ['linux', 5, '5.10'],
    ['linux', 6, '6.12'],
    ['chromium', 4, '4.1.249.1064'],
    ['chromium', 14, '14.0.835.202'],
    ['chromium', 40, '40.0.2214.115'],
    ['mariadb', 10, '10.11.10'],
    ['mariadb', 11, '11.6.2'],
    ['varnish', 6, '6.0.14'],
    ['nginx', 1, '1.27.3'],
    ['nginx', '1.26', '1.26.2'],
    ['linux', '6.1', '6.1'],
    ['uv', 0, '0.5.7'],
  ])('§4 rule: %s with major=%s is the latest release whose version starts with that major line: %s', async (project, major, expected) => {
    const { get } = await marketSim();
    const res = await get(`/text/version?project=${project}&major=${major}`);
    expect(res.status).toBe(200);
    expect(res.text).toBe(expected);
  });

  it('§4 rule: major=4 is a prefix match that stops at a part boundary: it never picks 14.x or 40.x', async () => {
    const { get } = await marketSim();
    expect((await get('/text/version?project=chromium')).text).toBe('40.0.2214.115');
    expect((await get('/text/version?project=chromium&major=4')).text).toBe('4.1.249.1064');
  });

  it('§4 rule: every endpoint takes major', async () => {
    const { get } = await marketSim();
    expect(JSON.parse((await get('/version?project=linux&major=4')).text)).toEqual({ version: '4.20' });
    expect(JSON.parse((await get('/source?project=linux&major=4')).text)).toEqual({
      source: 'https://github.com/torvalds/linux/archive/v4.20/linux-4.20.tar.gz',
    });
    expect(JSON.parse((await get('/release?project=linux&major=4')).text)).toMatchObject({ version: '4.20', tag_name: 'v4.20' });
    expect(JSON.parse((await get('/assets?project=nginx&major=1')).text)).toMatchObject({ assets: expect.any(Array) as unknown });
    expect((await get('/text/source?project=linux&major=4')).text).toMatch(/v4\.20/);
    expect((await get('/text/assets?project=nginx&major=1')).text).toMatch(/nginx-1\.27\.3\.tar\.gz/);
  });

  it('§7 (chosen): a major line without releases is 404', async () => {
    const { get } = await marketSim();
    const res = await get('/version?project=linux&major=3');
    expect(res.status).toBe(404);
    expect(ReleaseErrorBody.parse(JSON.parse(res.text)).message).toBe('torvalds/linux has no release with major version 3');
  });

  it('§4 rule: major=6.1 is a prefix that stops at a part boundary: it never picks 6.11 or 6.12', async () => {
    const { get } = await marketSim();
    expect(JSON.parse((await get('/release?project=linux&major=6.1')).text)).toMatchObject({ version: '6.1', tag_name: 'v6.1' });
    expect((await get('/text/version?project=linux&major=6')).text).toBe('6.12');
  });

  it.each(['-1', 'four', '', '1e1', '4&major=5', '1.', 'v4'])('§7 (chosen): major=%s is 400', async (major) => {
    const { get } = await marketSim();
    const res = await get(`/version?project=linux&major=${major}`);
    expect(res.status).toBe(400);
    expect(ReleaseErrorBody.parse(JSON.parse(res.text)).message).toMatch(/^major must be/);
  });
});

describe('§1 latest release', () => {
  it('§1: a pre-release by its text is never the latest, even when newer (linux 6.13-rc1)', async () => {
    const { get } = await marketSim();
    expect((await get('/text/version?project=linux')).text).toBe('6.12');
  });

  it('§1: a release flagged pre-release on the code host is never the latest (agent v1.9.0)', async () => {
    const { get } = await marketSim();
    expect((await get('/text/version?project=nginxinc/nginx-amplify-agent')).text).toBe('1.8.3');
  });

  it('§1: a draft never counts (nginx release-1.27.4 is a draft)', async () => {
    const { get } = await marketSim();
    expect((await get('/text/version?project=nginx')).text).toBe('1.27.3');
  });

  it('§1: versions order numerically, not as text (mariadb 11.6.2 over 11.4.4, 10.11 over 10.6)', async () => {
    const { get } = await marketSim();
    expect((await get('/text/version?project=mariadb')).text).toBe('11.6.2');
  });

  it('§2: a code host without release types sends no type (inkscape on gitlab)', async () => {
    const { get } = await marketSim();
    const record = ReleaseRecord.parse(JSON.parse((await get('/release?project=inkscape')).text));
    expect(record).toMatchObject({ version: '1.4', tag_name: 'INKSCAPE_1_4', source: 'gitlab' });
    expect(record.type).toBeUndefined();
  });

  it('§1: all requests use GET: another method is 405 with Allow', async () => {
    const { base } = await marketSim();
    const res = await fetch(`${base}/version?project=nginx`, { method: 'POST', headers: AUTH });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(ReleaseErrorBody.parse(await res.json()).error).toBe('method_not_allowed');
  });
});

describe('§4 project parameter', () => {
  it.each(['/version', '/version?project=', '/text/version?major=4'])('§4: %s without a project is 400', async (path) => {
    const { get } = await marketSim();
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(ReleaseErrorBody.parse(JSON.parse(res.text)).message).toMatch(/project is required/);
  });

  it('§4 (chosen): project given twice is 400', async () => {
    const { get } = await marketSim();
    const res = await get('/version?project=nginx&project=php');
    expect(res.status).toBe(400);
    expect(ReleaseErrorBody.parse(JSON.parse(res.text)).message).toBe('project must be given at most once');
  });
});

describe('§5 authentication', () => {
  it('§5: marketplace without key is 401', async () => {
    const { get } = await marketSim();
    const res = await get('/version?project=nginx', {});
    expect(res.status).toBe(401);
    expect(ReleaseErrorBody.parse(JSON.parse(res.text))).toEqual({
      error: 'unauthorized',
      message: 'missing X-RapidAPI-Key header',
    });
  });

  it('§5 (marketplace): a known key without a subscription to this API is the marketplace\'s own 403, on every path', async () => {
    const { get, stats } = await marketSim({ ratePerMinute: 2 });
    for (const path of ['/version?project=nginx', '/text/version?project=nginx', '/release', '/no-such-path']) {
      const res = await get(path, { 'X-RapidAPI-Key': UNSUBSCRIBED_KEY, 'X-RapidAPI-Host': 'release-lookup.p.rapidapi.com' });
      expect(res.status, path).toBe(403);
      expect(ReleaseErrorBody.parse(JSON.parse(res.text))).toEqual({ error: 'not_subscribed', message: 'You are not subscribed to this API.' });
      expect(res.text).not.toContain(UNSUBSCRIBED_KEY);
    }
    expect(stats.every(([label, status]) => label === 'unsubscribed' && status === 403)).toBe(true);
    // Refused at the gateway, so the subscribed key's per-minute limit is untouched.
    expect((await get('/version?project=nginx')).status).toBe(200);
  });

  it('§5: a wrong key is 401 and the message never repeats the key sent', async () => {
    const { get } = await marketSim();
    const res = await get('/text/version?project=nginx', { 'X-RapidAPI-Key': 'stolen-key-123' });
    expect(res.status).toBe(401);
    expect(res.text).not.toContain('stolen-key-123');
    expect(res.text).not.toContain(KEY);
  });

  it('§5: the key header is X-RapidAPI-Key, the marketplace\'s literal name; X-RapidAPI-Host is accepted, not required', async () => {
    const { get } = await marketSim();
    expect((await get('/version?project=nginx', { 'X-RapidAPI-Key': KEY })).status).toBe(200);
    expect((await get('/version?project=nginx', { 'X-Marketplace-Key': KEY })).status).toBe(401);
  });

  it('§5: the key is checked before anything else, so unknown paths are 401 too', async () => {
    const { get } = await marketSim();
    expect((await get('/nope', {})).status).toBe(401);
    expect((await get('/nope')).status).toBe(404);
  });

  it('refuses to start with an empty key', () => {
    expect(() => createMarketplaceApp({ clock: new FakeClock(), key: '' })).toThrow(/key must not be empty/);
  });
});

describe('§8 limits of the commercial offering', () => {
  it('§8: no forced cache: a newly published release is answered at once', async () => {
    const { store, get } = await marketSim();
    expect((await get('/text/version?project=nginx')).text).toBe('1.27.3');
    store.publish('nginx', 'release-1.27.5');
    expect((await get('/text/version?project=nginx')).text).toBe('1.27.5');
  });

  it('§8 (numbers not shown; chosen 600/min per key): the default limit is higher than the free one', async () => {
    const { get } = await marketSim();
    const res = await get('/version?project=nginx');
    expect(res.headers.get('x-ratelimit-requests-limit')).toBe('600');
    expect(res.headers.get('x-ratelimit-requests-remaining')).toBe('599');
  });

  it('§8: beyond the per-key limit the answer is 429 with Retry-After until the minute ends', async () => {
    const { clock, get } = await marketSim({ ratePerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await get('/version?project=nginx')).status).toBe(200);
    clock.advance(20_000);
    const limited = await get('/version?project=nginx');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('40');
    expect(ReleaseErrorBody.parse(JSON.parse(limited.text)).error).toBe('rate_limited');
    clock.advance(40_000);
    expect((await get('/version?project=nginx')).status).toBe(200);
  });

  it('§8: requests with a bad key do not use up the key\'s limit', async () => {
    const { get } = await marketSim({ ratePerMinute: 1 });
    expect((await get('/version?project=nginx', { 'X-RapidAPI-Key': 'wrong' })).status).toBe(401);
    expect((await get('/version?project=nginx')).status).toBe(200);
  });
});

describe('simulator bookkeeping', () => {
  it('calls stats once per response, labelled marketplace or invalid-key', async () => {
    const { get, stats } = await marketSim();
    await get('/version?project=nginx');
    await get('/version?project=nginx', { 'X-RapidAPI-Key': 'wrong' });
    await get('/version?project=nobody');
    // 'finish' may fire just after the client has read the body.
    await vi.waitFor(() =>
      expect(stats).toEqual([
        ['marketplace', 200],
        ['invalid-key', 401],
        ['marketplace', 404],
      ]),
    );
  });
});
