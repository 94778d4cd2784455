import type { Component } from '../components/decode.js';
import { parseVersion, type ParsedVersion } from '../../upstream/releases/version.js';

/**
 * Which software a detected component (or a host's agent) is, which Release Lookup project
 * publishes it, and which version line of that project its installed version belongs to.
 * Pure: the outdated check's tables and readings.
 */

/** The key of the host's agent (its `agent_version`) in the project table. */
export const AGENT_SOFTWARE = 'agent';

/**
 * Default projects, as `owner/repository` so that both offerings take them (the free endpoint
 * takes nothing else). The agent is a fork of the NGINX Amplify agent, whose versions it keeps.
 */
export const DEFAULT_SOFTWARE_PROJECTS: Readonly<Record<string, string>> = {
  nginx: 'nginx/nginx',
  'php-fpm': 'php/php-src',
  mysql: 'mysql/mysql-server',
  mariadb: 'MariaDB/server',
  varnish: 'varnishcache/varnish-cache',
  [AGENT_SOFTWARE]: 'nginxinc/nginx-amplify-agent',
};

/**
 * Which releases an installed version is compared with:
 * - `minor`: the newest release of its release series (`1.26.2` against the newest `1.26.x`),
 * - `major`: the newest with the same first number (`1.26.2` against the newest `1.x`),
 * - `latest`: the newest release of the project.
 */
export const LINE_POLICIES = ['minor', 'major', 'latest'] as const;
export type LinePolicy = (typeof LINE_POLICIES)[number];
export const DEFAULT_LINE_POLICY: LinePolicy = 'minor';

export interface SoftwareRule {
  readonly project: string;
  readonly line: LinePolicy;
}

/** Software name (as `softwareOf` gives it) to the rule that checks it. */
export type SoftwareRules = ReadonlyMap<string, SoftwareRule>;

/** One entry of the configured table: a project, a project with its own line, or `false` (not checked). */
export type SoftwareOverride = false | { readonly project: string; readonly line?: LinePolicy | undefined };

/** The default table with the configured entries laid over it. */
export function resolveSoftwareRules(overrides: Readonly<Record<string, SoftwareOverride>>, line: LinePolicy): SoftwareRules {
  const rules = new Map<string, SoftwareRule>();
  for (const [software, project] of Object.entries(DEFAULT_SOFTWARE_PROJECTS)) rules.set(software, { project, line });
  for (const [software, override] of Object.entries(overrides)) {
    if (override === false) rules.delete(software);
    else rules.set(software, { project: override.project, line: override.line ?? line });
  }
  return rules;
}

/** Names the agent's types and the services' software names give the same software. */
const TYPE_ALIASES: Readonly<Record<string, string>> = {
  phpfpm: 'php-fpm',
  phpfpm_pool: 'php-fpm',
  php_fpm: 'php-fpm',
  mysqld: 'mysql',
  mariadbd: 'mariadb',
  varnishd: 'varnish',
};

/**
 * The software a component is: its type (the agent's, such as `phpfpm`, or the software a
 * service names, such as `php-fpm`), lower-cased, with the agent's type names mapped to the
 * table's. The agent watches MariaDB with its mysql collector, so a `mysql` whose version or
 * name says MariaDB is `mariadb`. Undefined when the component has no type.
 */
export function softwareOf(component: Pick<Component, 'type' | 'name' | 'display_name' | 'version'>): string | undefined {
  const type = component.type?.trim().toLowerCase() || namedSoftware(component);
  if (type === undefined || type === '') return undefined;
  const software = TYPE_ALIASES[type] ?? type;
  if (software === 'mysql' && [component.version, component.name, component.display_name].some((text) => text !== undefined && /mariadb/i.test(text))) {
    return 'mariadb';
  }
  return software;
}

/**
 * Without a type, the software a component's name starts with, when it is one the table
 * knows (`nginx @ web-1`, `phpfpm www @ web-1`, `mysql`): a list grouped by category gives a
 * category, not the software, and the name then says which it is.
 */
function namedSoftware(component: Pick<Component, 'name' | 'display_name'>): string | undefined {
  for (const text of [component.display_name, component.name]) {
    const first = text?.trim().toLowerCase().split(/[\s@/:]+/)[0];
    if (first === undefined || first === '') continue;
    const software = TYPE_ALIASES[first] ?? first;
    if (software in DEFAULT_SOFTWARE_PROJECTS && software !== AGENT_SOFTWARE) return software;
  }
  return undefined;
}

/**
 * The version a component reports, parsed by the release service's rules (prefixes such as
 * `nginx/` stripped; `-MariaDB` or a package revision `-1` make a post-release, which sorts
 * after the release itself). Two forms seen on servers are read first: a dpkg epoch
 * (`1:10.11.6`) is dropped, and so is the `5.5.5-` MariaDB puts before its version for old
 * MySQL clients (`5.5.5-10.11.6-MariaDB`). Undefined when absent or not a version.
 */
export function readInstalledVersion(raw: string | undefined): ParsedVersion | undefined {
  if (raw === undefined) return undefined;
  const text = raw
    .trim()
    .replace(/^\d+:(?=\d)/, '')
    .replace(/^5\.5\.5-(?=\d+\.\d+.*mariadb)/i, '');
  return parseVersion(text);
}

/**
 * The line to ask the service for (its `major` parameter, a prefix of the version at a dot):
 * `minor` gives the first two numbers (`1.26`), `major` the first (`1`), `latest` none.
 * A version with one number has only that line (`7`).
 */
export function versionLine(version: ParsedVersion, policy: LinePolicy): string | undefined {
  if (policy === 'latest') return undefined;
  return version.release.slice(0, policy === 'major' ? 1 : 2).join('.');
}
