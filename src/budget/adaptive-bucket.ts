/**
 * A token bucket whose refill rate adapts to 429s (AIMD): a 429 empties the bucket, stops
 * refill until the pause ends, and halves the rate, never below half the configured rate;
 * from then on the rate climbs back linearly (+25% of the configured rate per minute, so
 * from the floor to the configured rate in 2 minutes).
 *
 * Refill is integrated exactly over the piecewise-linear rate, so the bucket never hands
 * out more than `capacity + ∫rate` tokens over any interval, whatever the call pattern.
 */
export interface AdaptiveBucketConfig {
  /** The rate the bucket returns to, tokens per second. */
  ratePerSecond: number;
  capacity: number;
  initialTokens: number;
  nowMs: number;
}

/** Multiplicative decrease applied per 429 episode. */
export const RATE_DECREASE_FACTOR = 0.5;
/**
 * The effective rate never drops below this fraction of the configured rate. The pause, not
 * the rate, is what protects the upstream while it keeps refusing: during a 429 storm every
 * episode costs one request whatever the rate. Compounding halvings there (to 5% after a
 * one-minute storm) only made recovery slow. Half still leaves room for a second exporter
 * on the same key at its own floor (2 × 54 < 120 per minute at the defaults).
 */
export const MIN_RATE_FRACTION = 0.5;
/**
 * Additive increase: this fraction of the configured rate is regained per minute, so the
 * floor climbs back to the configured rate in 2 minutes. Faster would buy little (the
 * average under steady contention is set by the decrease, not by the climb) and cost a 429
 * each time the climb overshoots a co-user's share.
 */
export const RATE_INCREASE_PER_MINUTE = 0.25;

const EPSILON = 1e-9;

export class AdaptiveTokenBucket {
  capacity: number;
  /** Tokens per millisecond. */
  private configuredRate: number;
  /** Rate gained per millisecond, per millisecond. */
  private climbPerMs: number;
  private tokens: number;
  /** Tokens are up to date as of this time; in the future while paused. */
  private refilledAtMs: number;
  private baseRate: number;
  private climbStartMs: number;

  constructor(config: AdaptiveBucketConfig) {
    this.capacity = config.capacity;
    this.configuredRate = config.ratePerSecond / 1000;
    this.climbPerMs = (this.configuredRate * RATE_INCREASE_PER_MINUTE) / 60_000;
    this.tokens = Math.min(config.initialTokens, config.capacity);
    this.refilledAtMs = config.nowMs;
    this.baseRate = this.configuredRate;
    this.climbStartMs = config.nowMs;
  }

  /** Effective refill rate at `nowMs`, tokens per second. */
  ratePerSecondAt(nowMs: number): number {
    return this.rateAt(nowMs) * 1000;
  }

  /** Whole and fractional tokens available at `nowMs`. */
  available(nowMs: number): number {
    this.refill(nowMs);
    return this.tokens;
  }

  /** Takes one token if there is one. */
  tryTake(nowMs: number): boolean {
    this.refill(nowMs);
    if (this.tokens < 1 - EPSILON) return false;
    this.tokens = Math.max(0, this.tokens - 1);
    return true;
  }

  /**
   * Milliseconds until a token is available (0 if one is now). An upper bound: the rate
   * only rises between now and then, so a token may come slightly earlier.
   */
  msUntilToken(nowMs: number): number {
    this.refill(nowMs);
    if (this.tokens >= 1 - EPSILON) return 0;
    const start = Math.max(nowMs, this.refilledAtMs);
    const need = 1 - this.tokens;
    return Math.max(1, Math.ceil(start - nowMs + need / this.rateAt(start)));
  }

  /**
   * The upstream said "too many requests": empty the bucket and refill nothing until
   * `resumeAtMs`. With `decrease`, the rate from then on starts at half the current one.
   * Without it (a second 429 from the same episode), only the resume time moves.
   */
  pauseUntil(nowMs: number, resumeAtMs: number, decrease: boolean): void {
    const current = this.rateAt(nowMs);
    const floor = this.configuredRate * MIN_RATE_FRACTION;
    this.baseRate = decrease ? Math.max(floor, current * RATE_DECREASE_FACTOR) : current;
    this.tokens = 0;
    const resume = Math.max(resumeAtMs, this.refilledAtMs, nowMs);
    this.refilledAtMs = resume;
    this.climbStartMs = resume;
  }

  /**
   * A new configured rate and capacity from `nowMs` on (the upstream stated a lower limit,
   * or restored it). Tokens earned so far are kept up to the new capacity; a rate lowered
   * by a 429 stays lowered in the same proportion and climbs back as before.
   */
  reconfigure(ratePerSecond: number, capacity: number, nowMs: number): void {
    this.refill(nowMs);
    const newRate = ratePerSecond / 1000;
    const ratio = newRate / this.configuredRate;
    if (this.refilledAtMs > nowMs) {
      // Paused after a 429: the climb starts when the pause ends, from a proportional base.
      this.baseRate *= ratio;
    } else {
      this.baseRate = this.rateAt(nowMs) * ratio;
      this.climbStartMs = nowMs;
    }
    this.configuredRate = newRate;
    this.climbPerMs = (newRate * RATE_INCREASE_PER_MINUTE) / 60_000;
    this.capacity = capacity;
    this.tokens = Math.min(this.tokens, capacity);
  }

  /**
   * Takes back a bucket saved by an earlier process: `tokens` as of `asOfMs`, refilled at the
   * configured rate for the time since. An `asOfMs` after `nowMs` (the earlier process may have
   * spent until then) leaves the bucket at `tokens` until that time, refilling only after it.
   */
  restore(tokens: number, asOfMs: number, nowMs: number): void {
    const held = Math.min(this.capacity, Math.max(0, tokens));
    this.baseRate = this.configuredRate;
    if (asOfMs > nowMs) {
      this.tokens = held;
      this.refilledAtMs = asOfMs;
      this.climbStartMs = asOfMs;
      return;
    }
    this.tokens = Math.min(this.capacity, held + this.configuredRate * (nowMs - asOfMs));
    this.refilledAtMs = nowMs;
    this.climbStartMs = nowMs;
  }

  /** The tokens to save: as of now, or as of the end of a pause (or a restored lease) when refill starts later. */
  saved(nowMs: number): { tokens: number; asOfMs: number } {
    if (this.refilledAtMs > nowMs) return { tokens: this.tokens, asOfMs: this.refilledAtMs };
    return { tokens: this.available(nowMs), asOfMs: nowMs };
  }

  private rateAt(nowMs: number): number {
    const t = Math.max(0, nowMs - this.climbStartMs);
    return Math.min(this.configuredRate, this.baseRate + this.climbPerMs * t);
  }

  private refill(nowMs: number): void {
    if (nowMs <= this.refilledAtMs) return;
    this.tokens = Math.min(this.capacity, this.tokens + this.integrate(this.refilledAtMs, nowMs));
    this.refilledAtMs = nowMs;
  }

  /** ∫ rate dt over [from, to], with climbStartMs ≤ from < to. */
  private integrate(from: number, to: number): number {
    const reachesConfiguredAt =
      this.baseRate >= this.configuredRate
        ? this.climbStartMs
        : this.climbStartMs + (this.configuredRate - this.baseRate) / this.climbPerMs;
    const trapezoid = (a: number, b: number) => ((this.rateAt(a) + this.rateAt(b)) / 2) * (b - a);
    if (to <= reachesConfiguredAt) return trapezoid(from, to);
    if (from >= reachesConfiguredAt) return this.configuredRate * (to - from);
    return trapezoid(from, reachesConfiguredAt) + this.configuredRate * (to - reachesConfiguredAt);
  }
}
