import type { Clock } from '../src/lib/clock.js';

export interface RateLimitOptions {
  clock: Clock;
  /** Sustained rate: tokens added per minute. */
  perMinute: number;
  /** Bucket size: how many requests may arrive at once after a quiet spell. */
  burst: number;
}

export interface TakeResult {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** When refused: milliseconds until one whole token is available; 0 when allowed. */
  retryAfterMs: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/**
 * A token bucket per key, refilled continuously from the injected clock: a key starts
 * with `burst` tokens, each request takes one, and `perMinute / 60` tokens return every
 * second up to `burst`. Refused requests take nothing, so a client hammering a full
 * limit recovers as soon as it pauses.
 */
export class TokenBucketLimiter {
  readonly perMinute: number;
  readonly burst: number;
  private readonly clock: Clock;
  private readonly buckets = new Map<string, Bucket>();

  constructor(options: RateLimitOptions) {
    if (!Number.isFinite(options.perMinute) || options.perMinute <= 0) {
      throw new RangeError(`rate limit perMinute must be a positive number, got ${options.perMinute}`);
    }
    if (!Number.isInteger(options.burst) || options.burst < 1) {
      throw new RangeError(`rate limit burst must be an integer of at least 1, got ${options.burst}`);
    }
    this.clock = options.clock;
    this.perMinute = options.perMinute;
    this.burst = options.burst;
  }

  /** Takes one token for `key` if one is available. */
  take(key: string): TakeResult {
    const bucket = this.refilled(key);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, remaining: Math.floor(bucket.tokens), retryAfterMs: 0 };
    }
    const msPerToken = 60_000 / this.perMinute;
    return { allowed: false, remaining: 0, retryAfterMs: Math.ceil((1 - bucket.tokens) * msPerToken) };
  }

  /** Whole tokens `key` has now, without taking one. */
  remaining(key: string): number {
    return Math.floor(this.refilled(key).tokens);
  }

  /** Forgets every bucket: all keys start full again. */
  reset(): void {
    this.buckets.clear();
  }

  private refilled(key: string): Bucket {
    const now = this.clock.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.burst, updatedMs: now };
      this.buckets.set(key, bucket);
      return bucket;
    }
    const elapsed = Math.max(0, now - bucket.updatedMs);
    bucket.tokens = Math.min(this.burst, bucket.tokens + (elapsed * this.perMinute) / 60_000);
    bucket.updatedMs = now;
    return bucket;
  }
}
