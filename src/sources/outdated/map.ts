import type { FamilySamples } from '../../exposition/model.js';
import type { Component } from '../components/decode.js';
import { compareParsed, matchesMajor, parseVersion, type ParsedVersion } from '../../upstream/releases/version.js';
import { componentName } from '../components/map.js';
import { parseTagDate } from '../releases/map.js';
import { FamilyCollector, gaugeSpec, infoSpec } from '../shared/families.js';
import { AGENT_SOFTWARE, readInstalledVersion, softwareOf, versionLine, type SoftwareRules } from './software.js';

/**
 * The outdated check, pure: installed versions (from `/hosts/{uuid}/components` and the
 * hosts' `agent_version`) against the latest release of their line (from the Release Lookup
 * API), compared by the release service's own ordering (src/upstream/releases/version.ts).
 */

const FROM = 'looked up from the Release Lookup API on the release schedule';

export const OUTDATED_FAMILIES = {
  outdated: gaugeSpec(
    'monapi_component_outdated',
    `1 when a newer release than the installed version exists in its line, 0 when it is up to date (installed at or above the latest release), per detected component and the host's agent; the versions are labels. No series when the installed version is unknown or the line has no answer (see monapi_component_version_checks). Latest releases ${FROM}.`,
  ),
  checks: gaugeSpec(
    'monapi_component_version_checks',
    'Components (and agents) of known software by the result of their version check: outdated, up_to_date, pending (line not looked up yet), no_answer (the lookup failed or the line has no release), unknown_version (no version reported, or not a version).',
  ),
  latest: infoSpec('monapi_component_latest_version_info', `Latest release of a project in a version line that installed components use (value 1), ${FROM}.`),
  latestTime: gaugeSpec(
    'monapi_component_latest_version_timestamp_seconds',
    `When the latest release of a version line was tagged (Unix time), ${FROM}; a line whose newest release is old may no longer be maintained.`,
    'seconds',
  ),
} as const;

export const CHECK_RESULTS = ['outdated', 'up_to_date', 'pending', 'no_answer', 'unknown_version'] as const;
export type CheckResult = (typeof CHECK_RESULTS)[number];
export type CheckCounts = Record<CheckResult, number>;

/** One installed piece of software the check covers: a component, or the host's agent. */
export interface Install {
  /** The `component` label: the component's name as `monapi_component_info` has it, or `agent`. */
  readonly component: string;
  readonly software: string;
  /** As reported; '' when not reported. */
  readonly rawVersion: string;
  readonly version: ParsedVersion | undefined;
  readonly project: string;
  /** The line looked up (the service's `major`); undefined for `latest`, or when the version is unknown. */
  readonly line: string | undefined;
}

/** What the service last said about one (project, line). */
export interface LineAnswer {
  /** The last release found; kept when a later lookup fails. Undefined while no lookup succeeded. */
  readonly latest: { readonly version: string; readonly tagDate?: string | undefined } | undefined;
  /** Why the last lookup failed; undefined when it succeeded. */
  readonly error: string | undefined;
}

/** The key of one lookup, as the release runtime names projects: `nginx/nginx@1.26`, or the id alone without a line. */
export function lookupKey(project: string, line: string | undefined): string {
  return line === undefined ? project : `${project}@${line}`;
}

function install(component: string, software: string, rawVersion: string | undefined, rules: SoftwareRules): Install | undefined {
  const rule = rules.get(software);
  if (rule === undefined) return undefined;
  const version = readInstalledVersion(rawVersion);
  return {
    component,
    software,
    rawVersion: rawVersion ?? '',
    version,
    project: rule.project,
    line: version === undefined ? undefined : versionLine(version, rule.line),
  };
}

/** The components of software the table knows (others are not checked). */
export function componentInstalls(components: readonly Component[], rules: SoftwareRules): Install[] {
  const out: Install[] = [];
  for (const component of components) {
    const software = softwareOf(component);
    const found = software === undefined || software === AGENT_SOFTWARE ? undefined : install(componentName(component), software, component.version, rules);
    if (found) out.push(found);
  }
  return out;
}

/** The host's agent, when the table checks agents. */
export function agentInstall(agentVersion: string | undefined, rules: SoftwareRules): Install | undefined {
  return install(AGENT_SOFTWARE, AGENT_SOFTWARE, agentVersion, rules);
}

/**
 * The result of one installed version against its line's answer. Never a guess: an unknown
 * version, a line not looked up yet, a failed lookup, or an answer outside the line asked
 * for (a service that ignored `major`) gives no verdict.
 */
export function checkInstall(item: Install, answer: LineAnswer | undefined): { result: CheckResult; latest?: string } {
  if (item.version === undefined) return { result: 'unknown_version' };
  if (answer === undefined) return { result: 'pending' };
  const latestText = answer.latest?.version;
  if (latestText === undefined) return { result: 'no_answer' };
  if (item.line !== undefined && !matchesMajor(latestText, item.line)) return { result: 'no_answer' };
  const latest = parseVersion(latestText);
  if (latest === undefined) return { result: 'no_answer' };
  return { result: compareParsed(item.version, latest) < 0 ? 'outdated' : 'up_to_date', latest: latest.normalised };
}

export function emptyCounts(): CheckCounts {
  return { outdated: 0, up_to_date: 0, pending: 0, no_answer: 0, unknown_version: 0 };
}

/** One host's `monapi_component_outdated` series and its check counts. */
export function mapHostChecks(
  installs: readonly Install[],
  answerOf: (key: string) => LineAnswer | undefined,
  opts: { readonly account: string; readonly hostUuid: string },
): { families: FamilySamples[]; counts: CheckCounts } {
  const c = new FamilyCollector();
  const counts = emptyCounts();
  for (const item of installs) {
    const { result, latest } = checkInstall(item, answerOf(lookupKey(item.project, item.line)));
    counts[result]++;
    if (latest === undefined) continue;
    c.add(
      OUTDATED_FAMILIES.outdated,
      {
        account: opts.account,
        host_uuid: opts.hostUuid,
        component: item.component,
        software: item.software,
        version: item.rawVersion,
        project: item.project,
        line: item.line ?? '',
        latest_version: latest,
      },
      result === 'outdated' ? 1 : 0,
    );
  }
  return { families: c.toFamilies(), counts };
}

/** `monapi_component_version_checks` of one account: every result, zeros included, so alerts on any of them work. */
export function mapCheckCounts(account: string, counts: CheckCounts): FamilySamples[] {
  const c = new FamilyCollector();
  for (const result of CHECK_RESULTS) c.add(OUTDATED_FAMILIES.checks, { account, result }, counts[result]);
  return c.toFamilies();
}

/** The latest release of each line looked up for installed components. Lines without an answer give nothing. */
export function mapLatestVersions(lines: readonly { readonly project: string; readonly line: string | undefined; readonly answer: LineAnswer | undefined }[]): FamilySamples[] {
  const c = new FamilyCollector();
  for (const { project, line, answer } of lines) {
    const latest = answer?.latest;
    if (latest === undefined) continue;
    const id = { project, line: line ?? '' };
    c.add(OUTDATED_FAMILIES.latest, { ...id, version: latest.version }, 1);
    const tagged = latest.tagDate === undefined ? undefined : parseTagDate(latest.tagDate);
    if (tagged !== undefined) c.add(OUTDATED_FAMILIES.latestTime, id, tagged / 1000);
  }
  return c.toFamilies();
}
