import type { Clock } from '../lib/clock.js';
import type { SpendLease } from './lease.js';
import type { BudgetMetrics } from './metrics.js';

export interface BackoffOptions {
  /** First retry waits up to this long (full jitter: uniformly 0..cap). */
  initialMs?: number;
  /** The exponential cap never exceeds this. */
  maxMs?: number;
}

export interface RequestBudgetOptions {
  /** Account label used in snapshots, metrics and errors. Never the API key. */
  name: string;
  /** The upstream's documented limit per key. */
  ratePerMinute?: number;
  /** The upstream's documented burst per key. */
  burst?: number;
  /** Fraction (0-0.9) of rate and burst left unused for other users of the same key. */
  headroom?: number;
  /** Maximum attempts in flight at once. */
  concurrency?: number;
  /** Retries after the first attempt for retryable outcomes (429, 5xx, timeout, network). */
  maxRetries?: number;
  backoff?: BackoffOptions;
  /** Upper bound on any pause a `Retry-After` can impose. */
  retryAfterCapMs?: number;
  /** After 401/403 requests fail fast for this long; then one probe goes through. */
  authRetryMs?: number;
  /**
   * Tokens in the bucket at start. Default: half the budgeted burst, because a restarted
   * exporter may find the upstream bucket already partly spent by its predecessor.
   */
  initialTokens?: number;
  /**
   * After this many dispatches of higher priorities have passed over a waiting request,
   * the oldest request of that lower priority goes next. Default 8: under constant high
   * load each lower priority still gets at least one dispatch in nine.
   */
  starvationLimit?: number;
  clock: Clock;
  /** Source of jitter in [0, 1); injectable so tests are deterministic. */
  random?: () => number;
  metrics?: BudgetMetrics;
  /** Notified of pauses and auth state changes, e.g. to log them. */
  onEvent?: (event: BudgetEvent) => void;
  /** With a state file: spending is covered by saves written ahead (see lease.ts). */
  lease?: SpendLease;
  /** What `persistentState()` returned in an earlier process; tokens and pause are taken back. */
  restored?: unknown;
}

export type BudgetEvent =
  | { type: 'paused'; account: string; untilMs: number; pauseMs: number; retryAfter: string | undefined; effectiveRatePerSecond: number }
  | { type: 'auth_failed'; account: string; kind: 'unauthorized' | 'plan_required'; retryAtMs: number }
  | { type: 'auth_recovered'; account: string };

export interface ResolvedBudgetOptions {
  name: string;
  ratePerMinute: number;
  burst: number;
  headroom: number;
  concurrency: number;
  maxRetries: number;
  backoff: { initialMs: number; maxMs: number };
  retryAfterCapMs: number;
  authRetryMs: number;
  /** Requests per second the budget aims at: the limit minus headroom. */
  budgetedRatePerSecond: number;
  /** Bucket capacity: the burst minus headroom, whole tokens. */
  budgetedBurst: number;
  initialTokens: number;
  starvationLimit: number;
  clock: Clock;
  random: () => number;
  metrics: BudgetMetrics | undefined;
  onEvent: ((event: BudgetEvent) => void) | undefined;
  lease: SpendLease | undefined;
  restored: unknown;
}

export const BUDGET_DEFAULTS = {
  ratePerMinute: 120,
  burst: 30,
  headroom: 0.1,
  concurrency: 4,
  maxRetries: 2,
  backoff: { initialMs: 1_000, maxMs: 60_000 },
  retryAfterCapMs: 300_000,
  authRetryMs: 600_000,
  starvationLimit: 8,
} as const;

export class BudgetOptionsError extends Error {
  readonly problems: readonly string[];
  constructor(name: string, problems: readonly string[]) {
    super(`invalid request budget options for account "${name}": ${problems.join('; ')}`);
    this.name = 'BudgetOptionsError';
    this.problems = problems;
  }
}

/** Fills in defaults and checks every option, reporting all problems at once. */
export function resolveBudgetOptions(options: RequestBudgetOptions): ResolvedBudgetOptions {
  const problems: string[] = [];
  const name: unknown = options.name;
  const label = typeof name === 'string' ? name : String(name);
  if (typeof name !== 'string' || name.trim() === '') problems.push('name must be a non-empty string');

  const number = (field: string, value: unknown, fallback: number, check: (n: number) => boolean, rule: string): number => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || !check(value)) {
      problems.push(`${field} must be ${rule}, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return value;
  };
  const positive = (n: number) => n > 0;
  const nonNegativeInt = (n: number) => Number.isInteger(n) && n >= 0;
  const positiveInt = (n: number) => Number.isInteger(n) && n >= 1;

  const ratePerMinute = number('ratePerMinute', options.ratePerMinute, BUDGET_DEFAULTS.ratePerMinute, positive, 'a positive number');
  const burst = number('burst', options.burst, BUDGET_DEFAULTS.burst, positiveInt, 'a positive integer');
  const headroom = number('headroom', options.headroom, BUDGET_DEFAULTS.headroom, (n) => n >= 0 && n <= 0.9, 'a fraction between 0 and 0.9');
  const concurrency = number('concurrency', options.concurrency, BUDGET_DEFAULTS.concurrency, positiveInt, 'a positive integer');
  const maxRetries = number('maxRetries', options.maxRetries, BUDGET_DEFAULTS.maxRetries, nonNegativeInt, 'a non-negative integer');
  const initialMs = number('backoff.initialMs', options.backoff?.initialMs, BUDGET_DEFAULTS.backoff.initialMs, positive, 'a positive number of milliseconds');
  const maxMs = number('backoff.maxMs', options.backoff?.maxMs, Math.max(initialMs, BUDGET_DEFAULTS.backoff.maxMs), positive, 'a positive number of milliseconds');
  if (maxMs < initialMs) problems.push(`backoff.maxMs (${maxMs}) must not be below backoff.initialMs (${initialMs})`);
  const retryAfterCapMs = number('retryAfterCapMs', options.retryAfterCapMs, BUDGET_DEFAULTS.retryAfterCapMs, (n) => n >= 0, 'a non-negative number of milliseconds');
  const authRetryMs = number('authRetryMs', options.authRetryMs, BUDGET_DEFAULTS.authRetryMs, positive, 'a positive number of milliseconds');
  const starvationLimit = number('starvationLimit', options.starvationLimit, BUDGET_DEFAULTS.starvationLimit, positiveInt, 'a positive integer');

  const budgetedRatePerSecond = (ratePerMinute * (1 - headroom)) / 60;
  const budgetedBurst = Math.floor(burst * (1 - headroom));
  if (budgetedBurst < 1) problems.push(`burst ${burst} minus headroom ${headroom} leaves less than one request`);
  const initialTokens = number('initialTokens', options.initialTokens, Math.floor(budgetedBurst / 2), (n) => n >= 0 && n <= Math.max(budgetedBurst, 1), `between 0 and the budgeted burst (${budgetedBurst})`);

  if (!isClock(options.clock)) problems.push('clock must provide now(), setTimeout() and clearTimeout()');
  if (options.random !== undefined && typeof options.random !== 'function') problems.push('random must be a function returning [0, 1)');

  if (problems.length > 0) throw new BudgetOptionsError(label, problems);
  return {
    name: label,
    ratePerMinute,
    burst,
    headroom,
    concurrency,
    maxRetries,
    backoff: { initialMs, maxMs },
    retryAfterCapMs,
    authRetryMs,
    budgetedRatePerSecond,
    budgetedBurst,
    initialTokens,
    starvationLimit,
    clock: options.clock,
    random: options.random ?? Math.random,
    metrics: options.metrics,
    onEvent: options.onEvent,
    lease: options.lease,
    restored: options.restored,
  };
}

function isClock(value: unknown): value is Clock {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Partial<Record<keyof Clock, unknown>>;
  return typeof c.now === 'function' && typeof c.setTimeout === 'function' && typeof c.clearTimeout === 'function';
}
