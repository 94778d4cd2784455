import { z } from 'zod';
import { describeValue, httpUrlProblem, list, strictObject } from '../../config/schema.js';
import type { Report, SettingsInput } from '../../config/source-spec.js';
import { analyseCron } from '../../config/cron.js';
import { FREE_ENDPOINT_CACHE_MS } from '../../config/types.js';
import { MAJOR_LINE_PATTERN } from '../../upstream/releases/version.js';

const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const OWNER_REPO = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9._-]+$/;

export function projectIdProblem(id: string): string | undefined {
  if (PROJECT_NAME.test(id) || OWNER_REPO.test(id)) return undefined;
  if (/^https?:\/\//.test(id) && httpUrlProblem(id) === undefined) return undefined;
  return `must be a project name (nginx), an owner/repository (torvalds/linux) or an http(s) URL (got ${describeValue(id)})`;
}

/** The free endpoint's words for a project id it cannot look up. */
export function freeModeProblem(id: string): string | undefined {
  return OWNER_REPO.test(id) ? undefined : `the free endpoint looks projects up as <owner>/<repository>; ${JSON.stringify(id)} needs mode: marketplace`;
}

/**
 * A major line as the service takes it: a prefix of the version ending at a dot, such as
 * `4`, `0` or `1.26`. The loader hands a number over as written (`1.20` stays `1.20`).
 */
const majorVersion = z
  .unknown()
  .optional()
  .transform((value, ctx): string | undefined => {
    if (value === undefined) return undefined;
    const text = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : typeof value === 'string' ? value.trim() : undefined;
    if (text === undefined || !MAJOR_LINE_PATTERN.test(text)) {
      ctx.addIssue({ code: 'custom', message: `must be a version line such as 4, 0 or 1.26: numbers separated by dots (got ${describeValue(value)})` });
      return z.NEVER;
    }
    return text;
  });

const projectSchema = z.preprocess(
  (value) => (typeof value === 'string' ? { id: value } : value),
  strictObject({
    id: z.string().superRefine((id, ctx) => {
      const problem = projectIdProblem(id);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }),
    major: majorVersion,
  }),
);

export const RELEASES_KEYS = { projects: list(projectSchema, []) };

export interface ReleaseProject {
  /** A name (`nginx`), `owner/repo`, or a URL. */
  readonly id: string;
  /** A major line as the service takes it: `4`, `0`, `1.26` (a prefix of the version at a dot). */
  readonly major: string | undefined;
}

export interface ReleaseSettings {
  readonly projects: readonly ReleaseProject[];
  /** When the lookups of the section run (the outdated check's too). */
  readonly timing: { readonly schedule: string; readonly shortestGapMs: number; readonly minGapMs: number };
}

export function releaseSettings({ section: raw }: SettingsInput, report: Report): ReleaseSettings {
  // The schema above made this key; the loader hands every section over untyped.
  const { projects: listed, mode, schedule, allow_polling_faster_than_cache: faster } = raw as {
    projects: { id: string; major: string | undefined }[];
    mode: 'free' | 'marketplace';
    schedule: string;
    allow_polling_faster_than_cache: boolean;
  };
  const seen = new Map<string, number>();
  const projects = listed.map((project, index) => {
    const identity = `${project.id}\u0000${project.major ?? ''}`;
    const first = seen.get(identity);
    if (first !== undefined) {
      const major = project.major === undefined ? 'without major' : `with major ${project.major}`;
      report(['projects', index], `duplicate project ${JSON.stringify(project.id)} ${major} (also releases.projects[${first}])`);
    } else {
      seen.set(identity, index);
    }
    const problem = mode === 'free' ? freeModeProblem(project.id) : undefined;
    if (problem !== undefined) report(['projects', index, 'id'], problem);
    return { id: project.id, major: project.major };
  });
  const analysis = analyseCron(schedule);
  const shortestGapMs = (analysis.ok ? analysis.shortestGapMs : undefined) ?? FREE_ENDPOINT_CACHE_MS;
  // Asking the free endpoint sooner than its cache keeps an answer only re-reads the cache.
  const minGapMs = mode === 'free' && !faster ? FREE_ENDPOINT_CACHE_MS : 0;
  return { projects, timing: { schedule, shortestGapMs, minGapMs } };
}
