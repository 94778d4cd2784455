/**
 * The simulated projects of the Release Lookup API and their release histories.
 * Tags, dates and asset names follow the real projects closely enough that the exporter
 * meets the same shapes it would in production; the histories are trimmed to what exercises
 * a rule: `release-`/`php-`/`mariadb-`/`varnish-`/`curl-8_11_0`/`INKSCAPE_1_4` and `v` tags,
 * numeric ordering (4.20 > 4.9, 10.11 > 10.6), a project still in its 0.x line,
 * pre-releases newer than the latest stable,
 * a draft, a code host's pre-release flag, versions 4.x next to 14.x and 40.x, a project
 * on another code host, and a release that appears while the simulator runs.
 */

export type CodeHost = 'github' | 'gitlab';

/** `release` for a code host's release object, `tag` for a bare tag; absent on other hosts. */
export type ReleaseKind = 'release' | 'tag';

export interface SimAssetTemplate {
  /** File name; `{v}` stands for the normalised version. */
  readonly name: string;
  /** Typical size in bytes; each release varies it a little, deterministically. */
  readonly size: number;
}

export interface SimRelease {
  readonly tag: string;
  /** ISO 8601 instant in UTC; for a scheduled release, replaced by the moment it appears. */
  readonly date: string;
  /** The code host's draft flag: drafts never count. */
  readonly draft?: boolean;
  /** The code host's pre-release flag, set even where the tag does not say so. */
  readonly prerelease?: boolean;
  /** Minutes after the simulator starts at which this release is published. */
  readonly appearsAfterMinutes?: number;
}

export interface SimProject {
  /** The single-name form of the project id. */
  readonly name: string;
  /** Other single names that resolve to this project. */
  readonly aliases?: readonly string[];
  readonly host: CodeHost;
  readonly owner: string;
  readonly repo: string;
  readonly kind: ReleaseKind | undefined;
  /** Assets attached to each release (only release objects carry assets). */
  readonly assets: readonly SimAssetTemplate[];
  readonly releases: readonly SimRelease[];
}

const signature = (name: string): SimAssetTemplate => ({ name: `${name}.asc`, size: 833 });

export const RELEASE_CATALOGUE: readonly SimProject[] = [
  {
    name: 'nginx',
    host: 'github',
    owner: 'nginx',
    repo: 'nginx',
    kind: 'release',
    assets: [
      { name: 'nginx-{v}.tar.gz', size: 1_272_000 },
      signature('nginx-{v}.tar.gz'),
      { name: 'nginx-{v}.zip', size: 1_838_000 },
      signature('nginx-{v}.zip'),
    ],
    releases: [
      { tag: 'release-1.25.5', date: '2024-04-16T14:32:20Z' },
      { tag: 'release-1.26.0', date: '2024-04-23T15:04:32Z' },
      { tag: 'release-1.27.0', date: '2024-05-29T14:17:10Z' },
      { tag: 'release-1.26.1', date: '2024-05-29T15:32:57Z' },
      { tag: 'release-1.27.1', date: '2024-08-14T15:18:14Z' },
      { tag: 'release-1.26.2', date: '2024-08-14T15:29:37Z' },
      { tag: 'release-1.27.2', date: '2024-10-02T15:13:51Z' },
      { tag: 'release-1.27.3', date: '2024-11-26T15:39:01Z' },
      { tag: 'release-1.27.4', date: '2024-12-18T09:12:44Z', draft: true },
    ],
  },
  {
    name: 'php',
    aliases: ['php-src'],
    host: 'github',
    owner: 'php',
    repo: 'php-src',
    kind: 'tag',
    assets: [],
    releases: [
      { tag: 'php-8.1.31', date: '2024-11-19T17:20:05Z' },
      { tag: 'php-8.2.26', date: '2024-11-19T17:31:40Z' },
      { tag: 'php-8.3.14', date: '2024-11-19T17:45:12Z' },
      { tag: 'php-8.4.0RC4', date: '2024-11-05T16:02:33Z' },
      { tag: 'php-8.4.0', date: '2024-11-19T18:10:51Z' },
      { tag: 'php-8.4.1', date: '2024-11-20T10:22:08Z' },
      { tag: 'php-8.4.2', date: '2024-12-17T19:43:26Z', appearsAfterMinutes: 60 },
    ],
  },
  {
    name: 'mariadb',
    host: 'github',
    owner: 'MariaDB',
    repo: 'server',
    kind: 'tag',
    assets: [],
    releases: [
      { tag: 'mariadb-10.6.20', date: '2024-11-01T10:04:51Z' },
      { tag: 'mariadb-10.11.10', date: '2024-11-01T10:15:22Z' },
      { tag: 'mariadb-11.4.4', date: '2024-11-01T10:26:09Z' },
      { tag: 'mariadb-11.6.2', date: '2024-11-13T12:48:37Z' },
    ],
  },
  {
    name: 'mysql',
    host: 'github',
    owner: 'mysql',
    repo: 'mysql-server',
    kind: 'tag',
    assets: [],
    releases: [
      { tag: 'mysql-8.0.39', date: '2024-07-22T11:03:51Z' },
      { tag: 'mysql-8.4.2', date: '2024-07-22T11:20:14Z' },
      { tag: 'mysql-8.0.40', date: '2024-10-15T10:12:40Z' },
      { tag: 'mysql-8.4.3', date: '2024-10-15T10:31:02Z' },
      { tag: 'mysql-9.1.0', date: '2024-10-15T10:47:55Z' },
    ],
  },
  {
    name: 'varnish',
    aliases: ['varnish-cache'],
    host: 'github',
    owner: 'varnishcache',
    repo: 'varnish-cache',
    kind: 'tag',
    assets: [],
    releases: [
      { tag: 'varnish-6.0.13', date: '2024-03-18T13:40:02Z' },
      { tag: 'varnish-7.4.3', date: '2024-03-18T13:52:44Z' },
      { tag: 'varnish-7.5.0', date: '2024-03-18T14:05:19Z' },
      { tag: 'varnish-7.6.0', date: '2024-09-13T11:30:48Z' },
      { tag: 'varnish-6.0.14', date: '2024-11-08T09:41:15Z' },
      { tag: 'varnish-7.6.1', date: '2024-11-08T09:55:03Z' },
    ],
  },
  {
    name: 'nginx-amplify-agent',
    aliases: ['amplify-agent'],
    host: 'github',
    owner: 'nginxinc',
    repo: 'nginx-amplify-agent',
    kind: 'release',
    assets: [
      { name: 'nginx-amplify-agent_{v}-1~bookworm_amd64.deb', size: 6_912_000 },
      { name: 'nginx-amplify-agent-{v}-1.el9.x86_64.rpm', size: 7_104_000 },
    ],
    releases: [
      { tag: 'v1.8.0', date: '2023-03-08T12:10:41Z' },
      { tag: 'v1.8.1', date: '2023-10-24T09:33:18Z' },
      { tag: 'v1.8.2', date: '2024-04-30T14:02:55Z' },
      { tag: 'v1.8.3', date: '2024-10-15T11:47:29Z' },
      { tag: 'v1.9.0', date: '2024-11-28T08:20:00Z', prerelease: true },
    ],
  },
  {
    // Still in its 0.x line: `major=0` is a legal line, not a bad parameter.
    name: 'uv',
    host: 'github',
    owner: 'astral-sh',
    repo: 'uv',
    kind: 'release',
    assets: [
      { name: 'uv-x86_64-unknown-linux-gnu.tar.gz', size: 16_300_000 },
      { name: 'uv-aarch64-apple-darwin.tar.gz', size: 14_900_000 },
    ],
    releases: [
      { tag: '0.4.30', date: '2024-11-05T21:46:11Z' },
      { tag: '0.5.0', date: '2024-11-07T18:33:09Z' },
      { tag: '0.5.6', date: '2024-12-03T22:02:47Z' },
      { tag: '0.5.7', date: '2024-12-05T20:18:36Z' },
    ],
  },
  {
    name: 'linux',
    host: 'github',
    owner: 'torvalds',
    repo: 'linux',
    kind: 'tag',
    assets: [],
    releases: [
      { tag: 'v4.9', date: '2016-12-11T19:17:54Z' },
      { tag: 'v4.19', date: '2018-10-22T06:37:37Z' },
      { tag: 'v4.20', date: '2018-12-23T23:55:59Z' },
      { tag: 'v5.4', date: '2019-11-24T23:32:01Z' },
      { tag: 'v5.10', date: '2020-12-13T22:41:30Z' },
      { tag: 'v6.1', date: '2022-12-11T22:15:18Z' },
      { tag: 'v6.6', date: '2023-10-30T06:31:08Z' },
      { tag: 'v6.11', date: '2024-09-15T14:57:56Z' },
      { tag: 'v6.12', date: '2024-11-17T22:15:08Z' },
      { tag: 'v6.13-rc1', date: '2024-12-01T22:29:37Z' },
    ],
  },
  {
    name: 'curl',
    host: 'github',
    owner: 'curl',
    repo: 'curl',
    kind: 'release',
    assets: [
      { name: 'curl-{v}.tar.xz', size: 2_750_000 },
      signature('curl-{v}.tar.xz'),
      { name: 'curl-{v}.tar.gz', size: 4_340_000 },
      signature('curl-{v}.tar.gz'),
      { name: 'curl-{v}.zip', size: 5_980_000 },
    ],
    releases: [
      { tag: 'curl-8_9_1', date: '2024-07-31T06:12:44Z' },
      { tag: 'curl-8_10_0', date: '2024-09-11T06:05:18Z' },
      { tag: 'curl-8_10_1', date: '2024-09-18T06:09:52Z' },
      { tag: 'curl-8_11_0', date: '2024-11-06T06:11:37Z' },
    ],
  },
  {
    name: 'chromium',
    host: 'github',
    owner: 'chromium',
    repo: 'chromium',
    kind: 'tag',
    assets: [],
    releases: [
      { tag: '4.0.249.78', date: '2010-01-25T20:11:05Z' },
      { tag: '4.1.249.1064', date: '2010-04-22T18:40:31Z' },
      { tag: '14.0.835.202', date: '2011-10-11T17:02:49Z' },
      { tag: '40.0.2214.111', date: '2015-02-05T19:28:14Z' },
      { tag: '40.0.2214.115', date: '2015-02-19T20:06:53Z' },
    ],
  },
  {
    name: 'inkscape',
    host: 'gitlab',
    owner: 'inkscape',
    repo: 'inkscape',
    kind: undefined,
    assets: [],
    releases: [
      { tag: 'INKSCAPE_1_3_2', date: '2023-11-25T16:20:43Z' },
      { tag: 'INKSCAPE_1_4_BETA_1', date: '2024-07-05T12:00:17Z' },
      { tag: 'INKSCAPE_1_4', date: '2024-10-11T18:34:52Z' },
    ],
  },
];
