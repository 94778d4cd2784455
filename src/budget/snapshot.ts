import type { Priority } from './types.js';

/** Outcomes that are retried; the `reason` label of `monapi_upstream_retries_total`. */
export type RetryReason = 'rate_limited' | 'server_error' | 'timeout' | 'network';
export const RETRY_REASONS: readonly RetryReason[] = ['rate_limited', 'server_error', 'timeout', 'network'];

/** A point-in-time view of one key's budget, for the /status page and self-metrics. */
export interface BudgetSnapshot {
  /** Account label, never the key. */
  readonly name: string;
  /** Tokens in the bucket now (fractional; a request needs one). */
  readonly tokens: number;
  /**
   * The rate the budget aims at, requests/second: the configured limit minus headroom, or the
   * lower limit the upstream states for the key (see `applyUpstreamLimit`) minus headroom.
   */
  readonly configuredRatePerSecond: number;
  /** The rate in force now: below the configured one after a 429, climbing back. */
  readonly effectiveRatePerSecond: number;
  /** Bucket capacity: the configured (or lower upstream-stated) burst minus headroom. */
  readonly burst: number;
  readonly concurrency: number;
  /** The whole key waits until this time after a 429; null when not paused. */
  readonly pausedUntilMs: number | null;
  /** Set after a 401/403: requests fail fast until `retryAtMs`, then one probe goes through. */
  readonly authFailed: { readonly kind: 'unauthorized' | 'plan_required'; readonly sinceMs: number; readonly retryAtMs: number } | null;
  readonly queued: Readonly<Record<Priority, number>>;
  /** Requests waiting out a retry backoff (not yet back in the queue). */
  readonly waitingToRetry: number;
  readonly inFlight: number;
  readonly totals: BudgetTotals;
}

export interface BudgetTotals {
  /** Calls to `run`. */
  readonly requests: number;
  /** Upstream attempts started (first tries and retries): the calls actually spent. */
  readonly attempts: number;
  readonly succeeded: number;
  /** Requests that ended in an error handed to the caller (including fail-fast and close). */
  readonly failed: number;
  /** Requests rejected without an attempt because the key is in the auth-failed state. */
  readonly failedFast: number;
  /** 429 responses seen. */
  readonly rateLimited: number;
  readonly retries: Readonly<Record<RetryReason, number>>;
  /** Pause episodes started by a 429. */
  readonly pauses: number;
  /** Time the key has spent paused, in seconds. */
  readonly pausedSeconds: number;
}
