import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/lib/clock.js';
import { SimReleaseRecord as ReleaseRecord } from '../../simulator/releases/schemas.js';
import { compareVersions, isPrerelease, normaliseVersion } from '../../simulator/releases/version.js';
import {
  formatTagDate,
  fullName,
  publishRelease,
  RELEASE_CATALOGUE,
  releaseRecord,
  ReleaseStore,
  resolveProject,
  sharedReleaseStore,
} from '../../simulator/releases/index.js';

const MINUTE = 60_000;

describe('the simulated catalogue', () => {
  it('names every project once, across names, aliases and owner/repo', () => {
    const names = RELEASE_CATALOGUE.flatMap((p) => [p.name, ...(p.aliases ?? [])]);
    expect(new Set(names).size).toBe(names.length);
    const repos = RELEASE_CATALOGUE.map((p) => fullName(p).toLowerCase());
    expect(new Set(repos).size).toBe(repos.length);
  });

  it.each(RELEASE_CATALOGUE.flatMap((p) => p.releases.map((r) => [fullName(p), r.tag, r.date] as const)))(
    '%s %s names a version and has an ISO date',
    (_project, tag, date) => {
      expect(normaliseVersion(tag)).toBeDefined();
      expect(Number.isNaN(Date.parse(date))).toBe(false);
    },
  );

  it('holds what the seed rules need: a draft, a flagged pre-release, a pre-release newer than the latest, a scheduled release', () => {
    const releases = RELEASE_CATALOGUE.flatMap((p) => p.releases);
    expect(releases.some((r) => r.draft)).toBe(true);
    expect(releases.some((r) => r.prerelease && !isPrerelease(r.tag))).toBe(true);
    expect(releases.some((r) => r.appearsAfterMinutes !== undefined)).toBe(true);
    const store = new ReleaseStore(new FakeClock());
    const newerPre = RELEASE_CATALOGUE.some((p) => {
      const latest = store.latest(p);
      return latest && p.releases.some((r) => isPrerelease(r.tag) && compareVersions(r.tag, latest.version) > 0);
    });
    expect(newerPre).toBe(true);
  });

  it.each(RELEASE_CATALOGUE.map((p) => [p.name, p] as const))('every release of %s builds a valid record', (_name, project) => {
    for (const release of project.releases) {
      const record = releaseRecord(project, release);
      expect(ReleaseRecord.safeParse(record).success).toBe(true);
      expect(releaseRecord(project, release)).toEqual(record);
    }
  });
});

describe('release records', () => {
  it('writes tag_date with a space and an explicit UTC offset', () => {
    expect(formatTagDate(Date.parse('2020-12-15T14:41:39.250Z'))).toBe('2020-12-15 14:41:39+00:00');
  });

  it('gives assets digests only from mid-2024 on, and sizes near the template size', () => {
    const agent = RELEASE_CATALOGUE.find((p) => p.name === 'nginx-amplify-agent');
    if (!agent) throw new Error('catalogue lacks the agent');
    const old = releaseRecord(agent, { tag: 'v1.8.0', date: '2023-03-08T12:10:41Z' });
    const recent = releaseRecord(agent, { tag: 'v1.8.3', date: '2024-10-15T11:47:29Z' });
    expect(old.assets_with_digests?.every((a) => a.digest === undefined)).toBe(true);
    expect(recent.assets_with_digests?.every((a) => /^sha256:[0-9a-f]{64}$/.test(a.digest ?? ''))).toBe(true);
    for (const asset of recent.assets_with_digests ?? []) {
      expect(asset.size).toBeGreaterThan(6_000_000);
      expect(asset.size).toBeLessThan(7_300_000);
    }
  });

  it('bare tags carry no assets', () => {
    const linux = RELEASE_CATALOGUE.find((p) => p.name === 'linux');
    if (!linux) throw new Error('catalogue lacks linux');
    expect(releaseRecord(linux, { tag: 'v6.12', date: '2024-11-17T22:15:08Z' })).toMatchObject({ assets: [], assets_with_digests: [] });
  });
});

describe('resolveProject', () => {
  it.each([
    ['nginx', 'nginx/nginx'],
    ['  nginx ', 'nginx/nginx'],
    ['Linux', 'torvalds/linux'],
    ['php-src', 'php/php-src'],
    ['mariadb/server', 'MariaDB/server'],
    ['MARIADB/SERVER', 'MariaDB/server'],
    ['https://github.com/torvalds/linux', 'torvalds/linux'],
    ['https://github.com/torvalds/linux/releases', 'torvalds/linux'],
    ['git+https://github.com/torvalds/linux.git', 'torvalds/linux'],
    ['https://gitlab.com/inkscape/inkscape', 'inkscape/inkscape'],
    ['gitlab.com/inkscape/inkscape', 'inkscape/inkscape'],
  ])('%j -> %s', (id, expected) => {
    const project = resolveProject(RELEASE_CATALOGUE, id);
    expect(project && fullName(project)).toBe(expected);
  });

  it.each(['', 'nope', 'server', 'a/b/c', 'https://github.com/inkscape/inkscape', 'https://github.com/nginx', 'http://[bad'])(
    '%j resolves to nothing',
    (id) => {
      expect(resolveProject(RELEASE_CATALOGUE, id)).toBeUndefined();
    },
  );
});

describe('ReleaseStore', () => {
  it('publishes a scheduled release at its minute after start, dated when it appears', () => {
    const clock = new FakeClock();
    const store = new ReleaseStore(clock);
    const php = store.resolve('php');
    if (!php) throw new Error('catalogue lacks php');
    clock.advance(60 * MINUTE - 1);
    expect(store.latest(php)?.version).toBe('8.4.1');
    clock.advance(1);
    expect(store.latest(php)).toMatchObject({ version: '8.4.2', tag_date: formatTagDate(store.startMs + 60 * MINUTE) });
  });

  it('a published release joins the history; drafts and flagged pre-releases still do not count', () => {
    const clock = new FakeClock();
    const store = new ReleaseStore(clock);
    const nginx = store.resolve('nginx');
    if (!nginx) throw new Error('catalogue lacks nginx');
    store.publish('nginx', 'release-1.29.0', { draft: true });
    store.publish('nginx', 'release-1.28.0', { prerelease: true });
    expect(store.latest(nginx)?.version).toBe('1.27.3');
    store.publish('nginx', 'release-1.27.10', { date: '2025-01-01T00:00:00Z' });
    expect(store.latest(nginx)).toMatchObject({ version: '1.27.10', tag_date: '2025-01-01 00:00:00+00:00' });
  });

  it('for equal versions, the one published last is the latest', () => {
    const clock = new FakeClock();
    const store = new ReleaseStore(clock);
    const linux = store.resolve('linux');
    if (!linux) throw new Error('catalogue lacks linux');
    store.publish('linux', 'v6.12.0');
    expect(store.latest(linux)?.tag_name).toBe('v6.12.0');
  });

  it.each([
    ['nope', 'v1.0', {}, /unknown project 'nope'/],
    ['nginx', 'latest', {}, /tag 'latest' names no version/],
    ['nginx', 'release-2.0.0', { date: 'yesterday' }, /date 'yesterday' is not an ISO 8601 instant/],
  ])('publish(%j, %j) fails with a clear error', (project, tag, options, message) => {
    expect(() => new ReleaseStore(new FakeClock()).publish(project, tag, options)).toThrow(message);
  });

  it('apps on the same clock share one store; publishRelease writes to it', () => {
    const clock = new FakeClock();
    expect(sharedReleaseStore(clock)).toBe(sharedReleaseStore(clock));
    expect(sharedReleaseStore(clock)).not.toBe(sharedReleaseStore(new FakeClock()));
    publishRelease(clock, 'varnish', 'varnish-7.6.2');
    const varnish = sharedReleaseStore(clock).resolve('varnish');
    expect(varnish && sharedReleaseStore(clock).latest(varnish)?.version).toBe('7.6.2');
  });
});
