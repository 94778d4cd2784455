import type { FamilySamples } from '../../exposition/model.js';
import { parseVersion } from '../../upstream/releases/version.js';
import type { LatestRelease } from '../../upstream/releases/client.js';
import { FamilyCollector, gaugeSpec, infoSpec } from '../shared/families.js';

const FROM = 'from the Release Lookup API, looked up on the configured cron schedule';

export const RELEASE_FAMILIES = {
  info: infoSpec('monapi_release_info', `Latest release of a project (per major line when one is configured): version and release type. Always 1; ${FROM}.`),
  major: gaugeSpec('monapi_release_version_major', `First number of the latest release version, ${FROM}.`),
  minor: gaugeSpec('monapi_release_version_minor', `Second number of the latest release version (0 when absent), ${FROM}.`),
  patch: gaugeSpec('monapi_release_version_patch', `Third number of the latest release version (0 when absent), ${FROM}.`),
  published: gaugeSpec(
    'monapi_release_timestamp_seconds',
    `When the latest release was tagged (Unix time), from its tag_date, ${FROM}.`,
    'seconds',
  ),
  success: gaugeSpec(
    'monapi_release_lookup_success',
    `Whether the last lookup of the project succeeded (0: the other release series show the last known answer), ${FROM}.`,
  ),
  lastSuccess: gaugeSpec(
    'monapi_release_last_success_timestamp_seconds',
    `When the last successful lookup of the project finished (Unix time), ${FROM}.`,
    'seconds',
  ),
  answered: gaugeSpec(
    'monapi_release_answer_timestamp_seconds',
    `When the service computed the answer shown, at the earliest (Unix time): from its Age, Date, Last-Modified or Cache-Control headers, else for the free endpoint the fetch time minus its 2-hour cache (the worst case), else the fetch time; ${FROM}.`,
    'seconds',
  ),
} as const;

export interface ReleaseLookupState {
  readonly release: LatestRelease | undefined;
  readonly lastSuccessMs: number | undefined;
}

export const EMPTY_RELEASE_STATE: ReleaseLookupState = { release: undefined, lastSuccessMs: undefined };

export interface ReleaseMapOptions {
  readonly project: string;
  /** The major line as configured (`4`, `1.26`). */
  readonly major: string | undefined;
  readonly nowMs: number;
}

/**
 * One project's lookup outcome to metric families. A failed lookup keeps the last known
 * release on display and says so with `monapi_release_lookup_success 0`, so a stale value
 * never passes for a fresh one.
 */
export function mapReleaseLookup(
  outcome: { readonly ok: true; readonly release: LatestRelease } | { readonly ok: false },
  previous: ReleaseLookupState,
  opts: ReleaseMapOptions,
): { state: ReleaseLookupState; families: FamilySamples[] } {
  const state: ReleaseLookupState = outcome.ok ? { release: outcome.release, lastSuccessMs: opts.nowMs } : previous;
  const id = { project: opts.project, major: opts.major ?? '' };
  const c = new FamilyCollector();
  c.add(RELEASE_FAMILIES.success, id, outcome.ok ? 1 : 0);
  if (state.lastSuccessMs !== undefined) c.add(RELEASE_FAMILIES.lastSuccess, id, state.lastSuccessMs / 1000);

  const release = state.release;
  if (release) {
    c.add(RELEASE_FAMILIES.info, { ...id, version: release.version, release_type: release.type ?? '' }, 1);
    const parsed = parseVersion(release.version);
    if (parsed) {
      const [major, minor = 0, patch = 0] = parsed.release;
      if (major !== undefined) c.add(RELEASE_FAMILIES.major, id, major);
      c.add(RELEASE_FAMILIES.minor, id, minor);
      c.add(RELEASE_FAMILIES.patch, id, patch);
    }
    const published = release.tagDate === undefined ? undefined : parseTagDate(release.tagDate);
    if (published !== undefined) c.add(RELEASE_FAMILIES.published, id, published / 1000);
    c.add(RELEASE_FAMILIES.answered, id, release.producedAtMs / 1000);
  }
  return { state, families: c.toFamilies() };
}

/**
 * `2020-12-15 14:41:39+00:00` (a space, not `T`), RFC 3339, or a bare date. Undefined
 * when unparsable: a release time is not worth a wrong value.
 */
export function parseTagDate(text: string): number | undefined {
  const trimmed = text.trim();
  const match = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(trimmed);
  if (!match) return undefined;
  const [, date, time = '00:00:00', zone = 'Z'] = match;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${date}T${time.length === 5 ? `${time}:00` : time}${offset}`);
  return Number.isFinite(ms) ? ms : undefined;
}
