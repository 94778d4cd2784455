/**
 * Exponential backoff with full jitter: the n-th retry (0-based) waits a uniformly random
 * time between 0 and min(maxMs, initialMs × 2^n). Full jitter spreads retries of many
 * requests that failed together instead of letting them return in a herd.
 */
export function fullJitterBackoffMs(retryIndex: number, initialMs: number, maxMs: number, random: () => number): number {
  const ceiling = backoffCeilingMs(retryIndex, initialMs, maxMs);
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0.5;
  return Math.round(unit * ceiling);
}

export function backoffCeilingMs(retryIndex: number, initialMs: number, maxMs: number): number {
  // 2^n overflows to Infinity for large n; min() still yields maxMs.
  return Math.min(maxMs, initialMs * 2 ** Math.max(0, retryIndex));
}
