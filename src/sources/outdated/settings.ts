import { z } from 'zod';
import { describeValue, section, strictObject } from '../../config/schema.js';
import type { Report, SettingsInput } from '../../config/source-spec.js';
import { freeModeProblem, projectIdProblem } from '../releases/settings.js';
import { DEFAULT_LINE_POLICY, LINE_POLICIES, resolveSoftwareRules, type LinePolicy, type SoftwareRules } from './software.js';

const SOFTWARE_NAME = /^[a-z0-9][a-z0-9_.-]*$/;

/** A project of the outdated check's table, or `false`: that software is not checked. */
const outdatedProject = z.unknown().transform((value, ctx): string | false => {
  if (value === false) return false;
  const problem = typeof value === 'string' ? projectIdProblem(value) : `must be a project id such as nginx/nginx, or false to not check this software (got ${describeValue(value)})`;
  if (problem !== undefined) {
    ctx.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  }
  return value as string;
});

/** `nginx: nginx/nginx`, `nginx: {project: nginx/nginx, line: major}` or `nginx: false`. */
const outdatedEntry = z.preprocess(
  (value) => (typeof value === 'object' && value !== null ? value : { project: value }),
  strictObject({ project: outdatedProject, line: z.enum(LINE_POLICIES).optional() }),
);

export const OUTDATED_KEYS = {
  outdated: section({
    enabled: z.boolean().default(true),
    line: z.enum(LINE_POLICIES).default(DEFAULT_LINE_POLICY),
    projects: z.preprocess(
      (value) => (value === null ? undefined : value),
      z
        .record(
          z.string().superRefine((name, ctx) => {
            if (!SOFTWARE_NAME.test(name)) {
              ctx.addIssue({ code: 'custom', message: `software names are lowercase letters, digits, ., _ and -, as the component's type (got ${describeValue(name)})` });
            }
          }),
          outdatedEntry,
        )
        .default({}),
    ),
  }),
};

/** The outdated check: installed versions against the latest release of their line. */
export interface OutdatedSettings {
  readonly enabled: boolean;
  /** The line policy of entries that set none. */
  readonly line: LinePolicy;
  /** Every checked software with its project and line: the defaults with the configured entries laid over them. */
  readonly rules: SoftwareRules;
}

interface RawOutdated {
  readonly mode: 'free' | 'marketplace';
  readonly outdated: { enabled: boolean; line: LinePolicy; projects: Record<string, { project: string | false; line?: LinePolicy }> };
}

export function outdatedSettings({ section: raw }: SettingsInput, report: Report): OutdatedSettings {
  // The schema above made this key; the loader hands every section over untyped.
  const { outdated: keys, mode } = raw as unknown as RawOutdated;
  if (mode === 'free' && keys.enabled) {
    for (const [software, entry] of Object.entries(keys.projects)) {
      const problem = entry.project === false ? undefined : freeModeProblem(entry.project);
      if (problem !== undefined) report(['outdated', 'projects', software], problem);
    }
  }
  const rules = resolveSoftwareRules(
    Object.fromEntries(Object.entries(keys.projects).map(([software, entry]) => [software, entry.project === false ? false : { project: entry.project, line: entry.line }])),
    keys.line,
  );
  return { enabled: keys.enabled, line: keys.line, rules };
}

/** What `--config.check` says of the outdated check. */
export function outdatedSummary(settings: OutdatedSettings, enabled: boolean): string {
  if (!enabled) return 'outdated check: off';
  return `outdated check: ${[...settings.rules]
    .map(([software, rule]) => `${software} ${rule.project}${rule.line === settings.line ? '' : ` (${rule.line})`}`)
    .join(', ')}; line ${settings.line}`;
}
