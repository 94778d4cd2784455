import type { TimerHandle } from '../lib/clock.js';
import { PlanRequiredError, RateLimitedError, UnauthorizedError, UpstreamError } from '../upstream/http/errors.js';
import { AdaptiveTokenBucket } from './adaptive-bucket.js';
import { fullJitterBackoffMs } from './backoff.js';
import type { SpendLease } from './lease.js';
import type { BudgetEvent, RequestBudgetOptions, ResolvedBudgetOptions } from './options.js';
import { resolveBudgetOptions } from './options.js';
import { PRIORITIES, PriorityQueue } from './priority-queue.js';
import { parseRetryAfter } from './retry-after.js';
import type { BudgetSnapshot, RetryReason } from './snapshot.js';
import type { Priority, RequestGate } from './types.js';

/** Rejection for requests still queued, waiting or in flight when the budget is closed. */
export class BudgetClosedError extends Error {
  readonly account: string;
  readonly endpoint: string;
  constructor(account: string, endpoint: string) {
    super(`request budget for account "${account}" is closed; ${endpoint} was not completed`);
    this.name = 'BudgetClosedError';
    this.account = account;
    this.endpoint = endpoint;
  }
}

interface Pending {
  readonly seq: number;
  readonly priority: Priority;
  readonly endpoint: string;
  readonly attempt: (signal: AbortSignal) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  retriesUsed: number;
}

interface Flight {
  readonly pending: Pending;
  readonly controller: AbortController;
  /** Order in which attempts started; tells echoes of an earlier event from news. */
  readonly attemptNo: number;
  readonly isProbe: boolean;
}

interface AuthFailure {
  readonly kind: 'unauthorized' | 'plan_required';
  readonly sinceMs: number;
  /** Attempts numbered below this started before the failure was known. */
  readonly firstAttemptAfter: number;
  readonly error: UpstreamError;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * What a restart takes back (kept in the state file): the bucket held at most `tokens` at
 * `asOfMs` and spends nothing after it, and the whole key waits until `pausedUntilMs` (a 429's
 * Retry-After). With a spend lease, a regular save writes `tokens: 0` as of the lease's end:
 * the process may spend all it can until then, and a kill leaves no other record of it.
 */
export interface BudgetState {
  readonly tokens: number;
  readonly asOfMs: number;
  readonly pausedUntilMs: number | null;
}

/** Reads what `persistentState` wrote; undefined for anything else. */
export function parseBudgetState(data: unknown): BudgetState | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const { tokens, asOfMs, pausedUntilMs } = data as Record<string, unknown>;
  const finite = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);
  if (!finite(tokens) || !finite(asOfMs) || !(pausedUntilMs === null || finite(pausedUntilMs))) return undefined;
  return { tokens, asOfMs, pausedUntilMs };
}

/**
 * The request budget of one API key. Every upstream request for the key goes through
 * `run`: it waits for a token (bucket sized to the documented limit minus headroom), a
 * concurrency slot and its turn by priority; 429 pauses the whole key and lowers the
 * rate; transient failures are retried with backoff; 401/403 make the key fail fast.
 *
 * @example
 * const budget = createRequestBudget({ name: 'acme', clock: systemClock });
 * const hosts = await budget.run('high', '/hosts', (signal) => client.getHosts(signal));
 */
export class RequestBudget implements RequestGate {
  readonly name: string;
  private readonly options: ResolvedBudgetOptions;
  private readonly bucket: AdaptiveTokenBucket;
  private readonly queue: PriorityQueue<Pending>;
  private readonly inFlight = new Set<Flight>();
  private readonly waitingToRetry = new Map<Pending, TimerHandle>();
  private nextSeq = 0;
  private wakeTimer: TimerHandle | null = null;
  private pumping = false;
  private pumpAgain = false;
  private closed = false;

  private pausedSinceMs: number | null = null;
  private pausedUntilMs: number | null = null;
  private pausedMsCompleted = 0;
  /** Attempts numbered below this started before the current 429 episode. */
  private episodeFirstAttempt = 0;
  private consecutiveRateLimitEpisodes = 0;

  private authFailure: AuthFailure | null = null;
  private probeInFlight = false;
  private readonly lease: SpendLease | undefined;
  /** Spending is covered by the state file until this time. */
  private leaseUntil = -Infinity;
  /** Spent, or wants to, since the last save: the next save must extend the lease. */
  private wantsLease = false;
  /** The lease the save being written grants this budget. */
  private granting: number | undefined;
  /** The pause in force when the budget was closed (closing ends it for the accounting), for `persistentState`. */
  private pausedUntilAtClose: number | null = null;
  private readonly stopLeaseListener: (() => void) | undefined;
  /** Rate and burst in force: the configured ones minus headroom, or lower ones the upstream stated. */
  private budgetedRatePerSecond: number;
  private budgetedBurst: number;

  private readonly totals = {
    requests: 0,
    attempts: 0,
    succeeded: 0,
    failed: 0,
    failedFast: 0,
    rateLimited: 0,
    pauses: 0,
    retries: { rate_limited: 0, server_error: 0, timeout: 0, network: 0 } satisfies Record<RetryReason, number>,
  };

  constructor(options: RequestBudgetOptions) {
    this.options = resolveBudgetOptions(options);
    this.name = this.options.name;
    this.budgetedRatePerSecond = this.options.budgetedRatePerSecond;
    this.budgetedBurst = this.options.budgetedBurst;
    this.bucket = new AdaptiveTokenBucket({
      ratePerSecond: this.options.budgetedRatePerSecond,
      capacity: this.options.budgetedBurst,
      initialTokens: this.options.initialTokens,
      nowMs: this.options.clock.now(),
    });
    this.queue = new PriorityQueue<Pending>(this.options.starvationLimit);
    const restored = parseBudgetState(this.options.restored);
    if (restored) this.restore(restored);
    this.lease = this.options.lease;
    this.stopLeaseListener = this.lease?.onSaved(() => this.saved());
    this.options.metrics?.track(this);
  }

  /**
   * The bucket and pause for the state file. A budget that spent, or wants to, since the last
   * save is written as empty at the end of the lease the save being written grants (it may
   * spend all it can until then, and a kill leaves no other record of it); one holding an
   * earlier lease, as empty at that lease's end; any other (idle, closed, or without a state
   * file) with its exact tokens.
   */
  persistentState(): BudgetState {
    const now = this.options.clock.now();
    const pausedUntilMs = this.pausedUntilMs !== null && this.pausedUntilMs > now ? this.pausedUntilMs : null;
    // Closed, it spends nothing more: the exact tokens (the last save at shutdown).
    if (this.closed) return this.handOver();
    const writing = this.lease?.writing();
    if (writing !== undefined && this.wantsLease) {
      this.granting = writing;
      return { tokens: 0, asOfMs: Math.max(writing, this.leaseUntil), pausedUntilMs };
    }
    if (this.leaseUntil > now) return { tokens: 0, asOfMs: this.leaseUntil, pausedUntilMs };
    return { ...this.bucket.saved(now), pausedUntilMs };
  }

  /** The exact tokens and pause now, for a budget that replaces this one in the same process (a reload). */
  handOver(): BudgetState {
    const now = this.options.clock.now();
    const until = this.closed ? this.pausedUntilAtClose : this.pausedUntilMs;
    return { ...this.bucket.saved(now), pausedUntilMs: until !== null && until > now ? until : null };
  }

  /** A save was written (or failed): the lease it granted, if this budget asked for one, is in force. */
  private saved(): void {
    if (this.granting === undefined) return;
    this.leaseUntil = Math.max(this.leaseUntil, this.granting);
    this.granting = undefined;
    this.wantsLease = false;
    this.pump();
  }

  private restore(state: BudgetState): void {
    const now = this.options.clock.now();
    this.bucket.restore(state.tokens, state.asOfMs, now);
    if (state.pausedUntilMs !== null && state.pausedUntilMs > now) {
      this.pausedSinceMs = now;
      this.pausedUntilMs = Math.min(state.pausedUntilMs, now + this.options.retryAfterCapMs);
      this.bucket.pauseUntil(now, this.pausedUntilMs, false);
    }
  }

  run<T>(priority: Priority, endpoint: string, attempt: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (!PRIORITIES.includes(priority)) {
      return Promise.reject(new TypeError(`unknown request priority ${JSON.stringify(priority)}; expected one of ${PRIORITIES.join(', ')}`));
    }
    if (typeof attempt !== 'function') {
      return Promise.reject(new TypeError(`attempt for ${endpoint} must be a function`));
    }
    this.totals.requests++;
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = {
        seq: this.nextSeq++,
        priority,
        endpoint,
        attempt,
        // The queue holds requests of every result type; each resolve gets back the value its own attempt produced.
        resolve: (value) => resolve(value as T),
        reject,
        retriesUsed: 0,
      };
      this.admit(pending);
      this.pump();
    });
  }

  /**
   * Stops the budget: everything queued or waiting to retry is rejected with a
   * BudgetClosedError, in-flight attempts are aborted through their signal and their
   * callers rejected at once. Later `run` calls reject immediately.
   */
  close(): void {
    if (this.closed) return;
    const now = this.options.clock.now();
    this.pausedUntilAtClose = this.pausedUntilMs;
    this.settlePauseAccounting(now, true);
    this.closed = true;
    this.clearWake();
    for (const pending of this.queue.drain()) this.fail(pending, this.closedError(pending));
    for (const [pending, handle] of this.waitingToRetry) {
      this.options.clock.clearTimeout(handle);
      this.fail(pending, this.closedError(pending));
    }
    this.waitingToRetry.clear();
    this.stopLeaseListener?.();
    const flights = [...this.inFlight];
    this.inFlight.clear();
    for (const flight of flights) {
      const error = this.closedError(flight.pending);
      flight.controller.abort(error);
      this.fail(flight.pending, error);
    }
    this.options.metrics?.untrack(this);
  }

  /**
   * Follows the limit the upstream states for the key (e.g. its account endpoint): the
   * budget uses the lower of it and the configured limit, never more than the operator
   * configured, both minus headroom. `undefined` fields leave the configured value. Returns
   * the limit now in force, per minute and burst (before headroom).
   */
  applyUpstreamLimit(limit: { ratePerMinute?: number | undefined; burst?: number | undefined }): { ratePerMinute: number; burst: number } {
    const valid = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined);
    const ratePerMinute = Math.min(this.options.ratePerMinute, valid(limit.ratePerMinute) ?? Infinity);
    const burst = Math.min(this.options.burst, Math.floor(valid(limit.burst) ?? Infinity));
    const rate = (ratePerMinute * (1 - this.options.headroom)) / 60;
    const capacity = Math.max(1, Math.floor(burst * (1 - this.options.headroom)));
    if (rate !== this.budgetedRatePerSecond || capacity !== this.budgetedBurst) {
      this.budgetedRatePerSecond = rate;
      this.budgetedBurst = capacity;
      this.bucket.reconfigure(rate, capacity, this.options.clock.now());
      this.pump();
    }
    return { ratePerMinute, burst };
  }

  snapshot(): BudgetSnapshot {
    const now = this.options.clock.now();
    this.settlePauseAccounting(now, false);
    const paused = this.pausedUntilMs !== null && now < this.pausedUntilMs;
    const currentPauseMs = paused && this.pausedSinceMs !== null ? now - this.pausedSinceMs : 0;
    const auth = this.authFailure;
    return {
      name: this.name,
      tokens: this.closed ? 0 : this.bucket.available(now),
      configuredRatePerSecond: this.budgetedRatePerSecond,
      effectiveRatePerSecond: this.bucket.ratePerSecondAt(now),
      burst: this.budgetedBurst,
      concurrency: this.options.concurrency,
      pausedUntilMs: paused ? this.pausedUntilMs : null,
      authFailed: auth ? { kind: auth.kind, sinceMs: auth.sinceMs, retryAtMs: auth.sinceMs + this.options.authRetryMs } : null,
      queued: { high: this.queue.size('high'), normal: this.queue.size('normal'), bulk: this.queue.size('bulk') },
      waitingToRetry: this.waitingToRetry.size,
      inFlight: this.inFlight.size,
      totals: {
        ...this.totals,
        retries: { ...this.totals.retries },
        pausedSeconds: (this.pausedMsCompleted + currentPauseMs) / 1000,
      },
    };
  }

  /** Puts a request in the queue, unless the key must fail fast or the budget is closed. */
  private admit(pending: Pending): void {
    if (this.closed) {
      this.fail(pending, this.closedError(pending));
      return;
    }
    const auth = this.authFailure;
    if (auth && this.options.clock.now() < auth.sinceMs + this.options.authRetryMs) {
      this.totals.failedFast++;
      this.fail(pending, failFastError(auth.error, pending.endpoint));
      return;
    }
    this.queue.push(pending);
  }

  private pump(): void {
    if (this.pumping) {
      // An attempt called `run` synchronously while we were dispatching.
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        this.dispatchWhilePossible();
      } while (this.pumpAgain);
    } finally {
      this.pumping = false;
    }
    this.scheduleWake();
  }

  private dispatchWhilePossible(): void {
    while (!this.closed && this.queue.size() > 0 && this.inFlight.size < this.options.concurrency) {
      const now = this.options.clock.now();
      const auth = this.authFailure;
      if (auth) {
        // admit() keeps the queue empty inside the fail-fast window; past it, one probe at a time.
        if (now < auth.sinceMs + this.options.authRetryMs || this.probeInFlight) return;
      }
      if (this.pausedUntilMs !== null && now < this.pausedUntilMs) return;
      if (this.bucket.msUntilToken(now) > 0) return;
      if (this.lease && now >= this.leaseUntil) {
        // Nothing on disk covers spending now: a save first (it pumps again).
        this.wantsLease = true;
        this.lease.request();
        return;
      }
      if (!this.bucket.tryTake(now)) return;
      const next = this.queue.shift();
      if (next === undefined) return;
      if (this.lease) {
        this.wantsLease = true;
        this.lease.touch();
      }
      this.start(next, auth !== null);
    }
  }

  private start(pending: Pending, isProbe: boolean): void {
    const flight: Flight = { pending, controller: new AbortController(), attemptNo: this.totals.attempts++, isProbe };
    this.inFlight.add(flight);
    if (isProbe) this.probeInFlight = true;
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(pending.attempt(flight.controller.signal));
    } catch (error) {
      result = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    result.then(
      (value) => this.settle(flight, { ok: true, value }),
      (error: unknown) => this.settle(flight, { ok: false, error }),
    );
  }

  private settle(flight: Flight, outcome: Outcome): void {
    // Absent after close(): the caller has already been rejected.
    if (!this.inFlight.delete(flight)) return;
    if (flight.isProbe) this.probeInFlight = false;
    const now = this.options.clock.now();
    const { pending } = flight;
    if (outcome.ok) {
      this.consecutiveRateLimitEpisodes = 0;
      this.clearAuthFailureIfProven(flight);
      this.totals.succeeded++;
      pending.resolve(outcome.value);
    } else {
      this.handleFailure(flight, outcome.error, now);
    }
    this.pump();
  }

  private handleFailure(flight: Flight, error: unknown, now: number): void {
    const { pending } = flight;
    if (!(error instanceof UpstreamError)) {
      this.fail(pending, error);
      return;
    }
    switch (error.kind) {
      case 'rate_limited': {
        this.totals.rateLimited++;
        this.clearAuthFailureIfProven(flight);
        this.pauseKey(flight, error, now);
        // No backoff of its own: the pause holds it in the queue.
        this.retryOrFail(pending, error, 'rate_limited', 0);
        return;
      }
      case 'server_error':
      case 'timeout':
      case 'network': {
        const delayMs = fullJitterBackoffMs(pending.retriesUsed, this.options.backoff.initialMs, this.options.backoff.maxMs, this.options.random);
        this.retryOrFail(pending, error, error.kind, delayMs);
        return;
      }
      case 'unauthorized':
      case 'plan_required':
        this.enterAuthFailure(flight, error.kind, error, now);
        this.fail(pending, error);
        return;
      case 'bad_request':
      case 'not_found':
      case 'invalid_response':
        // The key was accepted: these prove it as well as a success does.
        this.clearAuthFailureIfProven(flight);
        this.fail(pending, error);
        return;
    }
  }

  private pauseKey(flight: Flight, error: UpstreamError, now: number): void {
    // A 429 for an attempt that started before the current episode began is an echo of
    // that episode: it may lengthen the pause but does not lower the rate again.
    const newEpisode = flight.attemptNo >= this.episodeFirstAttempt;
    if (newEpisode) {
      this.consecutiveRateLimitEpisodes++;
      this.episodeFirstAttempt = this.totals.attempts;
      this.totals.pauses++;
    }
    const retryAfter = error instanceof RateLimitedError ? error.retryAfter : undefined;
    const pauseMs =
      parseRetryAfter(retryAfter, now, this.options.retryAfterCapMs) ??
      fullJitterBackoffMs(this.consecutiveRateLimitEpisodes - 1, this.options.backoff.initialMs, this.options.backoff.maxMs, this.options.random);

    this.settlePauseAccounting(now, false);
    const until = Math.max(now + pauseMs, this.pausedUntilMs ?? now);
    if (this.pausedSinceMs === null) this.pausedSinceMs = now;
    this.pausedUntilMs = until;
    this.bucket.pauseUntil(now, until, newEpisode);
    this.emit({
      type: 'paused',
      account: this.name,
      untilMs: until,
      pauseMs: until - now,
      retryAfter,
      effectiveRatePerSecond: this.bucket.ratePerSecondAt(until),
    });
  }

  private retryOrFail(pending: Pending, error: UpstreamError, reason: RetryReason, delayMs: number): void {
    if (pending.retriesUsed >= this.options.maxRetries) {
      this.fail(pending, error);
      return;
    }
    pending.retriesUsed++;
    this.totals.retries[reason]++;
    if (delayMs <= 0) {
      this.admit(pending);
      return;
    }
    const handle = this.options.clock.setTimeout(() => {
      this.waitingToRetry.delete(pending);
      this.admit(pending);
      this.pump();
    }, delayMs);
    this.waitingToRetry.set(pending, handle);
  }

  private enterAuthFailure(flight: Flight, kind: AuthFailure['kind'], error: UpstreamError, now: number): void {
    const current = this.authFailure;
    // Attempts started before the key was marked failed echo the same news; only a probe
    // or a first failure (re)starts the fail-fast window.
    if (current && !flight.isProbe && flight.attemptNo < current.firstAttemptAfter) return;
    this.authFailure = { kind, sinceMs: now, firstAttemptAfter: this.totals.attempts, error };
    for (const pending of this.queue.drain()) {
      this.totals.failedFast++;
      this.fail(pending, failFastError(error, pending.endpoint));
    }
    this.emit({ type: 'auth_failed', account: this.name, kind, retryAtMs: now + this.options.authRetryMs });
  }

  private clearAuthFailureIfProven(flight: Flight): void {
    const current = this.authFailure;
    if (!current || flight.attemptNo < current.firstAttemptAfter) return;
    this.authFailure = null;
    this.emit({ type: 'auth_recovered', account: this.name });
  }

  private scheduleWake(): void {
    this.clearWake();
    if (this.closed || this.queue.size() === 0 || this.inFlight.size >= this.options.concurrency) return;
    const now = this.options.clock.now();
    const auth = this.authFailure;
    if (auth && (this.probeInFlight || now < auth.sinceMs + this.options.authRetryMs)) return;
    const pauseLeft = this.pausedUntilMs !== null ? this.pausedUntilMs - now : 0;
    // Waiting for a save to extend the lease: its renewal wakes the budget.
    if (this.lease && now >= this.leaseUntil && pauseLeft <= 0 && this.bucket.msUntilToken(now) === 0) return;
    const waitMs = Math.max(1, pauseLeft, this.bucket.msUntilToken(now));
    this.wakeTimer = this.options.clock.setTimeout(() => {
      this.wakeTimer = null;
      this.pump();
    }, waitMs);
  }

  private clearWake(): void {
    if (this.wakeTimer !== null) {
      this.options.clock.clearTimeout(this.wakeTimer);
      this.wakeTimer = null;
    }
  }

  /** Moves a finished pause into the paused-time total; with `truncate`, ends the current one now. */
  private settlePauseAccounting(now: number, truncate: boolean): void {
    if (this.pausedSinceMs === null || this.pausedUntilMs === null) return;
    if (now < this.pausedUntilMs && !truncate) return;
    this.pausedMsCompleted += Math.max(0, Math.min(now, this.pausedUntilMs) - this.pausedSinceMs);
    this.pausedSinceMs = null;
    this.pausedUntilMs = null;
  }

  private fail(pending: Pending, error: unknown): void {
    this.totals.failed++;
    pending.reject(error);
  }

  private closedError(pending: Pending): BudgetClosedError {
    return new BudgetClosedError(this.name, pending.endpoint);
  }

  private emit(event: BudgetEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A failing listener (a logger) must not break request flow.
    }
  }
}

/** Creates the budget of one API key; throws BudgetOptionsError naming every bad option. */
export function createRequestBudget(options: RequestBudgetOptions): RequestBudget {
  return new RequestBudget(options);
}

/**
 * The stored 401/403, re-addressed to the request it now refuses, so an error report names
 * the endpoint that was not called rather than the one that failed first.
 */
function failFastError(error: UpstreamError, endpoint: string): UpstreamError {
  if (error.context.endpoint === endpoint) return error;
  const context = { api: error.context.api, endpoint };
  const detail = `${error.message.slice(`${error.context.api} ${error.context.endpoint}: `.length)} (not sent: the key failed on ${error.context.endpoint})`;
  if (error instanceof PlanRequiredError) return new PlanRequiredError(context, detail, error.upgradeUrl);
  if (error instanceof UnauthorizedError) return new UnauthorizedError(context, detail, error.status);
  return error;
}
