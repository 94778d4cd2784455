import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/lib/clock.js';
import {
  SimReleaseError as ReleaseErrorBody,
  SimReleaseRecord as ReleaseRecord,
  SimVersionAnswer as VersionOnly,
} from '../../simulator/releases/schemas.js';
import { createMarketplaceApp, createReleasesApp, publishRelease, ReleaseStore } from '../../simulator/releases/index.js';
import type { ShapeSource } from '../../simulator/shapes/shapes.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

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

async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json(), headers: res.headers };
}

function postJson(url: string, payload: unknown): Promise<{ status: number; body: unknown; headers: Headers }> {
  return getJson(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
}

async function freeSim(options: { shapes?: ShapeSource; ratePerMinute?: number } = {}) {
  const clock = new FakeClock();
  const store = new ReleaseStore(clock);
  const stats: [string, number][] = [];
  const base = await serve(createReleasesApp({ clock, store, ...options, stats: (l, s) => stats.push([l, s]) }));
  return { clock, store, base, stats };
}

describe('§4 free public endpoint', () => {
  it('§4 free: GET /<owner>/<repository> returns the latest release record', async () => {
    const { base } = await freeSim();
    const { status, body, headers } = await getJson(`${base}/nginx/nginx`);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    const record = ReleaseRecord.parse(body);
    expect(record).toMatchObject({
      version: '1.27.3',
      type: 'release',
      tag_name: 'release-1.27.3',
      tag_date: '2024-11-26 15:39:01+00:00',
      v_prefix: false,
      source: 'github',
      source_url: 'https://github.com/nginx/nginx/archive/release-1.27.3/nginx-1.27.3.tar.gz',
      from: 'https://github.com/nginx/nginx',
    });
    expect(record.assets).toContain('https://github.com/nginx/nginx/releases/download/release-1.27.3/nginx-1.27.3.tar.gz');
    expect(record.assets_with_digests?.map((a) => a.url)).toEqual(record.assets);
  });

  it('§5: the free endpoint is called without any credential', async () => {
    const { base } = await freeSim();
    const res = await fetch(`${base}/torvalds/linux`, { headers: {} });
    expect(res.status).toBe(200);
  });

  it('§4 free: ?version returns only the version, a bare JSON string by default', async () => {
    const { base } = await freeSim();
    const res = await fetch(`${base}/torvalds/linux?version`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.text()).toBe('"6.12"');
  });

  it('§4 free: ?version returns {version} in the alternative shape set', async () => {
    const { base } = await freeSim({ shapes: { of: (endpoint) => (endpoint === 'free-version' ? 'alt' : 'standard') } });
    const { body } = await getJson(`${base}/nginx/nginx?version`);
    expect(body).toEqual({ version: '1.27.3' });
    expect(VersionOnly.safeParse(body).success).toBe(true);
  });

  it.each([
    ['torvalds/linux', '4', '4.20'],
    ['torvalds/linux', '6', '6.12'],
    ['chromium/chromium', '4', '4.1.249.1064'],
    ['MariaDB/server', '10', '10.11.10'],
  ])('§1: the free endpoint takes major too: %s major=%s gives %s', async (repo, major, expected) => {
    const { base } = await freeSim();
    const { status, body } = await getJson(`${base}/${repo}?version&major=${major}`);
    expect(status).toBe(200);
    expect(body).toBe(expected);
  });

  it('§2: the v prefix is stripped from the version and reported in v_prefix', async () => {
    const { base } = await freeSim();
    const { body } = await getJson(`${base}/torvalds/linux`);
    expect(ReleaseRecord.parse(body)).toMatchObject({ version: '6.12', tag_name: 'v6.12', v_prefix: true, type: 'tag' });
  });

  it('§7 (not shown; chosen): an unknown project is 404 with {error: "not_found", message}', async () => {
    const { base } = await freeSim();
    const { status, body } = await getJson(`${base}/nobody/nothing`);
    expect(status).toBe(404);
    expect(ReleaseErrorBody.parse(body)).toEqual({ error: 'not_found', message: "unknown project 'nobody/nothing'" });
  });

  it.each([
    ['astral-sh/uv', '0', '0.5.7'],
    ['torvalds/linux', '6.1', '6.1'],
    ['nginx/nginx', '1.26', '1.26.2'],
  ])('§1, §4: major is a prefix of the normalised version, so %s major=%s (not only integers >= 1) gives %s', async (repo, major, expected) => {
    const { base } = await freeSim();
    const { status, body } = await getJson(`${base}/${repo}?version&major=${major}`);
    expect(status).toBe(200);
    expect(body).toBe(expected);
  });

  it.each(['abc', '-4', '', '1.', 'v4', '4 '])('§7 (chosen): major=%j is 400', async (major) => {
    const { base } = await freeSim();
    const { status, body } = await getJson(`${base}/nginx/nginx?major=${encodeURIComponent(major)}`);
    expect(status).toBe(400);
    expect(ReleaseErrorBody.parse(body).message).toMatch(/major must be a version prefix/);
  });

  it('§7 (chosen): a major line without releases is 404', async () => {
    const { base } = await freeSim();
    const { status, body } = await getJson(`${base}/nginx/nginx?major=9`);
    expect(status).toBe(404);
    expect(ReleaseErrorBody.parse(body).message).toBe('nginx/nginx has no release with major version 9');
  });
});

describe('§8 the 2-hour cache of the free endpoint', () => {
  it('§8: the free endpoint caches for 2 hours, even when a newer release is published', async () => {
    const { clock, store, base } = await freeSim();
    expect((await getJson(`${base}/nginx/nginx?version`)).body).toBe('1.27.3');

    clock.advance(10 * MINUTE);
    store.publish('nginx', 'release-1.27.5');
    clock.advance(2 * HOUR - 10 * MINUTE - 1000);
    const stale = await getJson(`${base}/nginx/nginx?version`);
    expect(stale.body).toBe('1.27.3');
    expect(stale.headers.get('cache-control')).toBe('public, max-age=1');
    expect(stale.headers.get('age')).toBe('7199');

    clock.advance(1000);
    const fresh = await getJson(`${base}/nginx/nginx?version`);
    expect(fresh.body).toBe('1.27.5');
    expect(fresh.headers.get('cache-control')).toBe('public, max-age=7200');
  });

  it('§8: the full record and the ?version form are served from the same cached answer', async () => {
    const { store, base } = await freeSim();
    await getJson(`${base}/nginx/nginx`);
    store.publish('nginx', 'release-1.27.5');
    const record = ReleaseRecord.parse((await getJson(`${base}/nginx/nginx`)).body);
    expect(record.version).toBe('1.27.3');
    expect((await getJson(`${base}/nginx/nginx?version`)).body).toBe('1.27.3');
  });

  it('§8: a release that appears while running reaches the marketplace at once and the free endpoint after the cache expires', async () => {
    const clock = new FakeClock();
    const freeBase = await serve(createReleasesApp({ clock }));
    const marketBase = await serve(createMarketplaceApp({ clock, key: 'test-key' }));
    const marketVersion = async () =>
      (await fetch(`${marketBase}/text/version?project=php`, { headers: { 'X-RapidAPI-Key': 'test-key' } })).text();

    expect((await getJson(`${freeBase}/php/php-src?version`)).body).toBe('8.4.1');
    expect(await marketVersion()).toBe('8.4.1');

    clock.advance(61 * MINUTE); // php 8.4.2 is scheduled 60 minutes after start
    expect(await marketVersion()).toBe('8.4.2');
    expect((await getJson(`${freeBase}/php/php-src?version`)).body).toBe('8.4.1');

    clock.advance(59 * MINUTE);
    expect((await getJson(`${freeBase}/php/php-src?version`)).body).toBe('8.4.2');
  });

  it('§8: publishRelease on the shared store reaches both apps built on the same clock', async () => {
    const clock = new FakeClock();
    const freeBase = await serve(createReleasesApp({ clock }));
    const marketBase = await serve(createMarketplaceApp({ clock, key: 'test-key' }));
    publishRelease(clock, 'curl/curl', 'curl-8_11_1');
    const res = await fetch(`${marketBase}/text/version?project=curl`, { headers: { 'X-RapidAPI-Key': 'test-key' } });
    expect(await res.text()).toBe('8.11.1');
    expect((await getJson(`${freeBase}/curl/curl?version`)).body).toBe('8.11.1');
  });
});

describe('§4 inbound notification hook', () => {
  it('§4 hook: POST /hooks/github with a push payload refreshes the cached answer (202)', async () => {
    const { store, base } = await freeSim();
    expect((await getJson(`${base}/nginx/nginx?version`)).body).toBe('1.27.3');
    store.publish('nginx/nginx', 'release-1.27.5');
    expect((await getJson(`${base}/nginx/nginx?version`)).body).toBe('1.27.3');

    const hook = await postJson(`${base}/hooks/github`, { ref: 'refs/tags/release-1.27.5', repository: { full_name: 'nginx/nginx' } });
    expect(hook.status).toBe(202);
    expect(hook.body).toEqual({ status: 'accepted', project: 'nginx/nginx' });
    expect((await getJson(`${base}/nginx/nginx?version`)).body).toBe('1.27.5');
  });

  it('§4 hook: refreshes every major line of the project, and only that project', async () => {
    const { store, base } = await freeSim();
    await getJson(`${base}/torvalds/linux?version&major=6`);
    await getJson(`${base}/nginx/nginx?version`);
    store.publish('linux', 'v6.13');
    store.publish('nginx', 'release-1.27.5');
    await postJson(`${base}/hooks/github`, { action: 'published', repository: { full_name: 'torvalds/linux' } });
    expect((await getJson(`${base}/torvalds/linux?version&major=6`)).body).toBe('6.13');
    expect((await getJson(`${base}/nginx/nginx?version`)).body).toBe('1.27.3');
  });

  it('§4 hook: GitHub form-encoded deliveries (payload=<json>) are accepted', async () => {
    const { base } = await freeSim();
    const form = new URLSearchParams({ payload: JSON.stringify({ repository: { full_name: 'curl/curl' } }) });
    const { status, body } = await getJson(`${base}/hooks/github`, { method: 'POST', body: form });
    expect(status).toBe(202);
    expect(body).toEqual({ status: 'accepted', project: 'curl/curl' });
  });

  it.each(['GET', 'PUT', 'DELETE'])('§4 hook: the hook takes POST; %s /hooks/github is 405 with Allow: POST, never a project lookup', async (method) => {
    const { base } = await freeSim();
    const { status, body, headers } = await getJson(`${base}/hooks/github`, { method });
    expect(status).toBe(405);
    expect(headers.get('allow')).toBe('POST');
    expect(ReleaseErrorBody.parse(body)).toMatchObject({ error: 'method_not_allowed', message: expect.stringContaining('POST') as unknown });
  });

  it('§1 (all requests use GET): another method on a project is 405 with Allow: GET, HEAD', async () => {
    const { base } = await freeSim();
    const { status, headers } = await getJson(`${base}/nginx/nginx`, { method: 'POST' });
    expect(status).toBe(405);
    expect(headers.get('allow')).toBe('GET, HEAD');
  });

  it('§4 hook: the last segment names the code host; /hooks/gitlab reads project.path_with_namespace', async () => {
    const { base } = await freeSim();
    const { status, body } = await postJson(`${base}/hooks/gitlab`, { project: { path_with_namespace: 'inkscape/inkscape' } });
    expect(status).toBe(202);
    expect(body).toEqual({ status: 'accepted', project: 'inkscape/inkscape' });
  });

  it.each([
    ['a JSON string', '"nginx/nginx"'],
    ['an object without repository', '{"ref":"refs/heads/main"}'],
    ['a full_name that is not a string', '{"repository":{"full_name":42}}'],
    ['a full_name without owner', '{"repository":{"full_name":"nginx"}}'],
    ['malformed JSON', '{"repository":'],
  ])('§4 hook (chosen): a bad payload, %s, is 400', async (_what, payload) => {
    const { base } = await freeSim();
    const { status, body } = await getJson(`${base}/hooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: payload,
    });
    expect(status).toBe(400);
    expect(ReleaseErrorBody.parse(body).error).toBe('bad_request');
  });

  it('§4 hook (chosen): an unknown repository or code host is 404', async () => {
    const { base } = await freeSim();
    const repo = await postJson(`${base}/hooks/github`, { repository: { full_name: 'nobody/nothing' } });
    expect(repo.status).toBe(404);
    expect(ReleaseErrorBody.parse(repo.body).message).toBe("unknown repository 'nobody/nothing' on github.com");
    const gitlabProjectOnGithub = await postJson(`${base}/hooks/github`, { repository: { full_name: 'inkscape/inkscape' } });
    expect(gitlabProjectOnGithub.status).toBe(404);
    const host = await postJson(`${base}/hooks/bitbucket`, { repository: { full_name: 'nginx/nginx' } });
    expect(host.status).toBe(404);
    expect(ReleaseErrorBody.parse(host.body).message).toMatch(/no hook for code host 'bitbucket'/);
  });
});

describe('§8 rate limits of the free endpoint', () => {
  it('§8 (numbers not shown; chosen 60/min per client IP): request 61 in a minute is 429 with Retry-After', async () => {
    const { clock, base } = await freeSim();
    for (let i = 0; i < 60; i++) {
      const res = await fetch(`${base}/nginx/nginx?version`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    clock.advance(15_000);
    const limited = await getJson(`${base}/nginx/nginx?version`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('45');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(ReleaseErrorBody.parse(limited.body).error).toBe('rate_limited');

    clock.advance(45_000);
    expect((await getJson(`${base}/nginx/nginx?version`)).status).toBe(200);
  });

  it('§8: the limit is an option, and hooks count against it', async () => {
    const { base } = await freeSim({ ratePerMinute: 2 });
    expect((await postJson(`${base}/hooks/github`, { repository: { full_name: 'nginx/nginx' } })).status).toBe(202);
    const second = await getJson(`${base}/nginx/nginx`);
    expect(second.status).toBe(200);
    expect(second.headers.get('x-ratelimit-limit')).toBe('2');
    expect((await getJson(`${base}/nginx/nginx`)).status).toBe(429);
  });

  it('rejects a rate that is not a positive integer', () => {
    expect(() => createReleasesApp({ clock: new FakeClock(), ratePerMinute: 0 })).toThrow(/ratePerMinute must be a positive integer/);
  });
});

describe('simulator bookkeeping', () => {
  it('calls stats once per response with the label "free" and the status', async () => {
    const { base, stats } = await freeSim({ ratePerMinute: 2 });
    await getJson(`${base}/nginx/nginx`);
    await getJson(`${base}/nobody/nothing`);
    await getJson(`${base}/nginx/nginx`);
    // 'finish' may fire just after the client has read the body.
    await vi.waitFor(() =>
      expect(stats).toEqual([
        ['free', 200],
        ['free', 404],
        ['free', 429],
      ]),
    );
  });

  it('answers unknown paths with a JSON 404', async () => {
    const { base } = await freeSim();
    const { status, body } = await getJson(`${base}/only-one-segment`);
    expect(status).toBe(404);
    expect(ReleaseErrorBody.parse(body).error).toBe('not_found');
  });
});
