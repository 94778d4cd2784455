import type { Clock } from '../../src/lib/clock.js';

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Milliseconds until the current window ends and the count starts again. */
  readonly resetInMs: number;
}

/**
 * A fixed one-minute window per client: the window opens with the client's first request,
 * admits `limit` requests, and refuses the rest until it ends. Simple to reason about in
 * tests ("the 61st request inside a minute is 429") and close to what gateways do.
 */
export class WindowRateLimiter {
  private readonly windows = new Map<string, { startMs: number; count: number }>();

  constructor(
    private readonly clock: Clock,
    readonly limit: number,
    private readonly windowMs = 60_000,
  ) {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`ratePerMinute must be a positive integer, got ${String(limit)}`);
    }
  }

  take(client: string): RateDecision {
    const now = this.clock.now();
    let window = this.windows.get(client);
    if (!window || now >= window.startMs + this.windowMs) {
      if (this.windows.size > 10_000) this.dropExpired(now);
      window = { startMs: now, count: 0 };
      this.windows.set(client, window);
    }
    const allowed = window.count < this.limit;
    if (allowed) window.count++;
    return {
      allowed,
      limit: this.limit,
      remaining: this.limit - window.count,
      resetInMs: window.startMs + this.windowMs - now,
    };
  }

  private dropExpired(now: number): void {
    for (const [client, window] of this.windows) {
      if (now >= window.startMs + this.windowMs) this.windows.delete(client);
    }
  }
}
