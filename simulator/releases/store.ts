import { createHash } from 'node:crypto';
import type { Clock } from '../../src/lib/clock.js';
import type { SimReleaseRecord as ReleaseRecord } from './schemas.js';
import { compareVersions, inMajorLine, isPrerelease, normaliseVersion } from './version.js';
import { RELEASE_CATALOGUE, type CodeHost, type SimProject, type SimRelease } from './catalogue.js';

/**
 * The live state behind both release offerings: the catalogue, plus releases published
 * while the simulator runs (scheduled ones and those added with `publish`). The
 * marketplace reads it on every request; the free endpoint caches what it read.
 */

const HOST_DOMAINS: Readonly<Record<CodeHost, string>> = { github: 'github.com', gitlab: 'gitlab.com' };

/** Releases from before digests were published have none, like on the real code host. */
const DIGESTS_SINCE_MS = Date.parse('2024-06-01T00:00:00Z');

export interface PublishOptions {
  /** ISO 8601 instant; defaults to the clock's now. */
  date?: string;
  draft?: boolean;
  prerelease?: boolean;
}

export class ReleaseStore {
  readonly startMs: number;
  private readonly published = new Map<SimProject, SimRelease[]>();

  constructor(
    private readonly clock: Clock,
    readonly catalogue: readonly SimProject[] = RELEASE_CATALOGUE,
  ) {
    this.startMs = clock.now();
  }

  /** The project a `project_id` names: a single name, `owner/repo`, or a URL where it is hosted. */
  resolve(projectId: string): SimProject | undefined {
    return resolveProject(this.catalogue, projectId);
  }

  /** Releases visible now, drafts and pre-releases included, in catalogue order. */
  releases(project: SimProject): SimRelease[] {
    const now = this.clock.now();
    const visible: SimRelease[] = [];
    for (const release of project.releases) {
      if (release.appearsAfterMinutes === undefined) {
        visible.push(release);
        continue;
      }
      const appearsAt = this.startMs + release.appearsAfterMinutes * 60_000;
      if (now >= appearsAt) visible.push({ ...release, date: new Date(appearsAt).toISOString() });
    }
    return visible.concat(this.published.get(project) ?? []);
  }

  /**
   * The latest release: the highest version (by compareVersions) that is neither a draft nor
   * a pre-release (by flag or by its text), optionally inside major line `major` (a prefix). Equal
   * versions (`1.2` and `1.2.0`) go to the one published last.
   */
  latest(project: SimProject, major?: string): ReleaseRecord | undefined {
    let best: { release: SimRelease; version: string } | undefined;
    for (const release of this.releases(project)) {
      if (release.draft || release.prerelease) continue;
      const version = normaliseVersion(release.tag);
      if (version === undefined || isPrerelease(version)) continue;
      if (major !== undefined && !inMajorLine(version, major)) continue;
      const order = best ? compareVersions(version, best.version) : 1;
      if (order > 0 || (order === 0 && best && release.date >= best.release.date)) best = { release, version };
    }
    return best && releaseRecord(project, best.release);
  }

  /**
   * Publishes a release now, as a code host would when a maintainer pushes one.
   * @throws Error naming the problem when the project is unknown or the tag names no version
   */
  publish(projectId: string, tag: string, options: PublishOptions = {}): SimRelease {
    const project = this.resolve(projectId);
    if (!project) throw new Error(`publishRelease: unknown project '${projectId}'`);
    if (normaliseVersion(tag) === undefined) throw new Error(`publishRelease: tag '${tag}' names no version`);
    const date = options.date ?? new Date(this.clock.now()).toISOString();
    if (Number.isNaN(Date.parse(date))) throw new Error(`publishRelease: date '${date}' is not an ISO 8601 instant`);
    const release: SimRelease = { tag, date, draft: options.draft, prerelease: options.prerelease };
    const list = this.published.get(project) ?? [];
    list.push(release);
    this.published.set(project, list);
    return release;
  }
}

const sharedStores = new WeakMap<Clock, ReleaseStore>();

/**
 * One store per clock, so a free app and a marketplace app built on the same clock see the
 * same published releases without being wired together.
 */
export function sharedReleaseStore(clock: Clock): ReleaseStore {
  let store = sharedStores.get(clock);
  if (!store) {
    store = new ReleaseStore(clock);
    sharedStores.set(clock, store);
  }
  return store;
}

/** Publishes `tag` for `projectId` in the store shared by every app built on `clock`. */
export function publishRelease(clock: Clock, projectId: string, tag: string, options?: PublishOptions): SimRelease {
  return sharedReleaseStore(clock).publish(projectId, tag, options);
}

/** `owner/repo` of a project, the form the free endpoint's path and hooks use. */
export function fullName(project: SimProject): string {
  return `${project.owner}/${project.repo}`;
}

/** The project's canonical URL, the record's `from`. */
export function projectUrl(project: SimProject): string {
  return `https://${HOST_DOMAINS[project.host]}/${fullName(project)}`;
}

export function resolveProject(catalogue: readonly SimProject[], projectId: string): SimProject | undefined {
  const id = projectId.trim();
  if (id === '') return undefined;
  const url = asUrl(id);
  if (url) {
    const host = url.hostname.toLowerCase().replace(/^www\./, '');
    const [owner, repo] = url.pathname.split('/').filter((s) => s !== '');
    if (!owner || !repo) return undefined;
    return findByFullName(catalogue, owner, repo.replace(/\.git$/i, ''), host);
  }
  const parts = id.split('/').filter((s) => s !== '');
  if (parts.length === 2) return findByFullName(catalogue, parts[0] ?? '', parts[1] ?? '', undefined);
  if (parts.length !== 1 || id.includes('/')) return undefined;
  const name = id.toLowerCase();
  return catalogue.find((p) => p.name === name || (p.aliases ?? []).includes(name));
}

function asUrl(id: string): URL | undefined {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(id) ? id : /^[^/]+\.[^/]+\//.test(id) ? `https://${id}` : undefined;
  if (text === undefined) return undefined;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function findByFullName(
  catalogue: readonly SimProject[],
  owner: string,
  repo: string,
  domain: string | undefined,
): SimProject | undefined {
  const wanted = `${owner}/${repo}`.toLowerCase();
  return catalogue.find(
    (p) => fullName(p).toLowerCase() === wanted && (domain === undefined || HOST_DOMAINS[p.host] === domain),
  );
}

/** The release record the service sends for one release of a project. */
export function releaseRecord(project: SimProject, release: SimRelease): ReleaseRecord {
  const version = normaliseVersion(release.tag);
  if (version === undefined) throw new Error(`${fullName(project)}: tag '${release.tag}' names no version`);
  const from = projectUrl(project);
  const dateMs = Date.parse(release.date);
  const assets =
    project.kind === 'release'
      ? project.assets.map((template) => {
          const name = template.name.replaceAll('{v}', version);
          const url = `${from}/releases/download/${release.tag}/${name}`;
          const hash = createHash('sha256').update(url).digest('hex');
          const size = template.size + (parseInt(hash.slice(0, 6), 16) % Math.max(1, Math.floor(template.size / 50)));
          return dateMs >= DIGESTS_SINCE_MS ? { url, name, size, digest: `sha256:${hash}` } : { url, name, size };
        })
      : [];
  // `version` then `type` first, as in the documented example `{"version":"1.27.3","type":"release",...}`.
  const record: ReleaseRecord & Record<string, unknown> = {
    version,
    ...(project.kind === undefined ? {} : { type: project.kind }),
    tag_name: release.tag,
    tag_date: formatTagDate(dateMs),
    v_prefix: /^v\d/i.test(release.tag),
    source: project.host,
    source_url: sourceUrl(project, release.tag, version),
    assets: assets.map((a) => a.url),
    assets_with_digests: assets,
    from,
  };
  if (project.kind === 'release') {
    // Fields of the code host's release object that pass through; clients must ignore them.
    record.name = release.tag;
    record.html_url = `${from}/releases/tag/${release.tag}`;
    record.published_at = new Date(dateMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return record;
}

function sourceUrl(project: SimProject, tag: string, version: string): string {
  const from = projectUrl(project);
  return project.host === 'gitlab'
    ? `${from}/-/archive/${tag}/${project.repo}-${tag}.tar.gz`
    : `${from}/archive/${tag}/${project.repo}-${version}.tar.gz`;
}

/** `2020-12-15 14:41:39+00:00`: a space, not `T`, and an explicit UTC offset. */
export function formatTagDate(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}+00:00`;
}
