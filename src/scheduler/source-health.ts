import { BudgetClosedError } from '../budget/request-budget.js';
import { FieldsMissingError, UpstreamError } from '../upstream/http/errors.js';

/**
 * Whether each source works, in words operators can act on. A source is up when no job of
 * it failed on its last run; otherwise it is down with the reason most of its failing jobs
 * share. The reasons are a small fixed set, explained in docs/troubleshooting.md: each is
 * a series of `monapi_source_up_reason` that always exists (1 for the current reason, 0 for
 * the others), so that a failing source changes values, never series.
 */

/** Why a source is down: every value of the `reason` label of `monapi_source_up_reason`. */
export const SOURCE_DOWN_REASONS = [
  'pending',
  'unauthorized',
  'plan_required',
  'not_found',
  'rate_limited',
  'bad_request',
  'http_5xx',
  'timeout',
  'network',
  'decode_error',
  'shape',
  'internal',
] as const;
export type SourceDownReason = (typeof SOURCE_DOWN_REASONS)[number];
/** A source's reason: '' while it is up. */
export type SourceReason = SourceDownReason | '';

/**
 * Why an account does not answer (`monapi_up` 0): every value of the `reason` label of
 * `monapi_up_reason`. `pending` before its first answer, `unauthorized` and `plan_required`
 * after a 401 or a 403 plan_required, `unreachable` after repeated failures of other kinds.
 */
export const ACCOUNT_DOWN_REASONS = ['pending', 'unauthorized', 'plan_required', 'unreachable'] as const;
export type AccountDownReason = (typeof ACCOUNT_DOWN_REASONS)[number];

/** Whether an account answers, and if not, why. */
export type AccountUp = { readonly up: true; readonly reason: '' } | { readonly up: false; readonly reason: AccountDownReason };

/** The reason of a failed run. */
export function reasonOf(error: unknown): Exclude<SourceDownReason, 'pending'> {
  // Answered and parsed, but none of the fields the source needs is there.
  if (error instanceof FieldsMissingError) return 'shape';
  if (error instanceof UpstreamError) {
    switch (error.kind) {
      case 'unauthorized':
      case 'plan_required':
      case 'not_found':
      case 'rate_limited':
      case 'bad_request':
      case 'timeout':
      case 'network':
        return error.kind;
      case 'server_error':
        return 'http_5xx';
      case 'invalid_response':
        return 'decode_error';
    }
  }
  if (error instanceof BudgetClosedError) return 'network';
  return 'internal';
}

/** The last run of one job. */
export interface RunRecord {
  readonly ok: boolean;
  readonly reason: SourceReason;
  readonly atMs: number;
  /** The error's message (secrets already scrubbed by the clients). */
  readonly message: string;
  readonly target: string | undefined;
}

export interface SourceHealth {
  readonly source: string;
  readonly up: boolean;
  /** '' when up. */
  readonly reason: SourceReason;
  /** Jobs (targets) the source has now. */
  readonly targets: number;
  /** Of them, those whose last run failed. */
  readonly failing: number;
  /** The most recent failure among them. */
  readonly lastError: { readonly target: string | undefined; readonly atMs: number; readonly message: string } | undefined;
}

/**
 * Health of each named source from its jobs' last runs. A source with no job yet run is
 * `pending`; one with no jobs at all (no websites to check) is up.
 */
export function sourceHealth(
  sources: readonly string[],
  jobs: readonly { readonly id: string; readonly source: string }[],
  lastRuns: ReadonlyMap<string, RunRecord>,
): SourceHealth[] {
  // One pass over the jobs: at a million series an account has thousands, and the self-metrics read this a few times a second.
  const tally = new Map<string, { targets: number; ran: number; failed: RunRecord[] }>(sources.map((source) => [source, { targets: 0, ran: 0, failed: [] }]));
  for (const job of jobs) {
    const own = tally.get(job.source);
    if (own === undefined) continue;
    own.targets++;
    const run = lastRuns.get(job.id);
    if (run === undefined) continue;
    own.ran++;
    if (!run.ok) own.failed.push(run);
  }
  return sources.map((source) => {
    const { targets, ran, failed } = tally.get(source) ?? { targets: 0, ran: 0, failed: [] };
    const latest = failed.reduce<RunRecord | undefined>((best, run) => (best === undefined || run.atMs > best.atMs ? run : best), undefined);
    const base = { source, targets, failing: failed.length };
    if (latest !== undefined) {
      return { ...base, up: false, reason: commonestReason(failed, latest.reason), lastError: { target: latest.target, atMs: latest.atMs, message: latest.message } };
    }
    if (targets > 0 && ran === 0) return { ...base, up: false, reason: 'pending', lastError: undefined };
    return { ...base, up: true, reason: '', lastError: undefined };
  });
}

/** The reason most failing runs share; ties go to the most recent failure's. */
function commonestReason(failed: readonly RunRecord[], latest: SourceReason): SourceReason {
  const counts = new Map<SourceReason, number>();
  for (const run of failed) counts.set(run.reason, (counts.get(run.reason) ?? 0) + 1);
  let best = latest;
  for (const [reason, n] of counts) if (n > (counts.get(best) ?? 0)) best = reason;
  return best;
}

/** The failing sources (not those merely pending) as the landing page lists them. */
export function failingSources(account: string, health: readonly SourceHealth[], upgradeUrl?: string): FailingSource[] {
  return health
    .filter((h) => !h.up && h.reason !== 'pending')
    .map((h) => ({
      account,
      source: h.source,
      reason: h.reason,
      failing: h.failing,
      targets: h.targets,
      message: h.lastError?.message,
      upgradeUrl: h.reason === 'plan_required' ? upgradeUrl : undefined,
    }));
}

/** A source failing now, as the landing page lists it. */
export interface FailingSource {
  /** The account label, `(releases)` for the release lookups. */
  readonly account: string;
  readonly source: string;
  /** A bounded reason such as decode_error or plan_required (see docs/troubleshooting.md). */
  readonly reason: string;
  /** Targets failing, of how many. */
  readonly failing: number;
  readonly targets: number;
  /** The latest error message, secrets scrubbed. */
  readonly message: string | undefined;
  /** Where to upgrade the plan, after a 403 plan_required. */
  readonly upgradeUrl?: string | undefined;
}
