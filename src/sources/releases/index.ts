import { cronSchedule } from '../../config/cron.js';
import { DEFAULT_RELEASES_SCHEDULE, FREE_ENDPOINT_CACHE_MS } from '../../config/types.js';
import { UpstreamError } from '../../upstream/http/errors.js';
import type { ReleaseLookups } from '../../upstream/releases/lookups.js';
import { familyNames, groupName, type ReleaseSource, type SourceContext } from '../source.js';
import { lookupCadence, type LookupTiming } from './cadence.js';
import { EMPTY_RELEASE_STATE, mapReleaseLookup, RELEASE_FAMILIES, type ReleaseLookupState } from './map.js';
import { RELEASES_KEYS, releaseSettings, type ReleaseProject, type ReleaseSettings } from './settings.js';

/** The lookup key of a project: `nginx/nginx@1.26`, or the id alone without a major line. */
export function projectKey(project: { readonly id: string; readonly major: string | undefined }): string {
  return project.major === undefined ? project.id : `${project.id}@${project.major}`;
}

/** When the unit's lookups run: the `releases` section's schedule, and the free endpoint's cache. */
export function lookupTiming(ctx: SourceContext<ReleaseLookups, unknown>): LookupTiming {
  const timing = ctx.settingsOf(releasesSource)?.timing ?? { schedule: DEFAULT_RELEASES_SCHEDULE, shortestGapMs: FREE_ENDPOINT_CACHE_MS, minGapMs: FREE_ENDPOINT_CACHE_MS };
  return { schedule: cronSchedule(timing.schedule), shortestGapMs: timing.shortestGapMs, minGapMs: timing.minGapMs };
}

/**
 * The latest release of every configured project (`releases.projects`), looked up at start
 * and then on the `releases.schedule`. A project that is also a component's version line
 * is asked once for both (the unit's lookups share answers). Only shard 0 looks up the
 * configured projects, so N shards ask no more than one process would.
 */
export const releasesSource: ReleaseSource<ReleaseSettings> = {
  name: 'releases',
  section: 'releases',
  keys: RELEASES_KEYS,
  settings: releaseSettings,
  enabledBy: (settings) => settings.projects.length > 0,
  howToEnable: 'list projects',
  numbersAsWritten: [['projects', '*', 'major']],
  summary: ({ settings }) => ({ inline: `${settings.projects.length} project${settings.projects.length === 1 ? '' : 's'}` }),
  priority: 'normal',
  families: familyNames(RELEASE_FAMILIES),
  create(ctx) {
    const timing = lookupTiming(ctx);
    const projects = ctx.unit.shard.ordinal === 0 ? ctx.settings.projects : [];
    const targets = new Map(projects.map((p) => [projectKey(p), p]));
    const states = new Map<string, ReleaseLookupState>();
    const lastErrors = new Map<string, { atMs: number; kind: string; message: string }>();
    const dueTimes = new Map<string, number>();
    return {
      scope: 'target',
      targets: () => targets,
      cadence: (project: ReleaseProject) => lookupCadence(timing, dueTimes, projectKey(project), () => ctx.upstream.askedAtMs(asked(project))),
      requestsPerRun: () => 1,
      async poll(project: ReleaseProject, signal) {
        const key = projectKey(project);
        let outcome: Parameters<typeof mapReleaseLookup>[0];
        let failure: Error | undefined;
        try {
          outcome = { ok: true, release: await ctx.upstream.latest(asked(project)) };
          lastErrors.delete(key);
        } catch (error) {
          failure = error instanceof Error ? error : new Error(String(error));
          outcome = { ok: false };
          const message = error instanceof Error ? error.message : String(error);
          lastErrors.set(key, { atMs: ctx.clock.now(), kind: error instanceof UpstreamError ? error.kind : 'internal', message });
        }
        if (signal.aborted) return;
        const { state, families } = mapReleaseLookup(outcome, states.get(key) ?? EMPTY_RELEASE_STATE, { project: project.id, major: project.major, nowMs: ctx.clock.now() });
        states.set(key, state);
        ctx.sink.publish(groupName('releases', key), families);
        if (failure !== undefined) throw failure;
      },
      forget(key) {
        states.delete(key);
        dueTimes.delete(key);
        ctx.sink.retract(groupName('releases', key));
      },
      status: () => ({
        projects: projects.map((p) => {
          const key = projectKey(p);
          const release = states.get(key)?.release;
          return {
            project: p.id,
            major: p.major,
            version: release?.version,
            last_success_ms: states.get(key)?.lastSuccessMs,
            answer_produced_ms: release?.producedAtMs,
            answer_freshness: release?.freshness,
            last_error: lastErrors.get(key),
          };
        }),
      }),
    };
  },
};

function asked(project: ReleaseProject): { id: string; major?: string } {
  return project.major === undefined ? { id: project.id } : { id: project.id, major: project.major };
}
