/**
 * How old a release answer may be. The free endpoint caches each answer for 2 hours, so an
 * answer fetched now may describe the world of up to 2 hours ago; the marketplace has no
 * forced cache. HTTP caching headers narrow it down when the service sends them.
 */

export type FreshnessBasis = 'age_header' | 'date_header' | 'no_cache' | 'last_modified' | 'worst_case' | 'fetch_time';

export interface AnswerTime {
  /** When the answer was (at the earliest) computed upstream, Unix ms. */
  readonly producedAtMs: number;
  /** Which header (or assumption) gave it. */
  readonly basis: FreshnessBasis;
}

/** Date headers more than this before receipt are taken as a replayed (cached) response, not clock skew. */
const DATE_SKEW_TOLERANCE_MS = 5_000;

/**
 * The time an answer was produced, from its response headers (lower-case names), the time
 * it arrived, and the longest the service may cache it (`cacheMs`, 0 for no forced cache):
 * 1. `Age: n`: arrived − n seconds.
 * 2. `Date` clearly before arrival but within the cache time (a cache replaying the original
 *    response; further back it is taken for clock skew): that date.
 * 3. `Cache-Control: no-store`, `no-cache` or `max-age=0`: just produced (arrival).
 * 4. With a forced cache: the worst case, arrival − cacheMs, but never before
 *    `Last-Modified` (the answer cannot predate the data it describes).
 * 5. Without one: arrival.
 */
export function answerTime(headers: Readonly<Record<string, string | undefined>>, receivedMs: number, cacheMs: number): AnswerTime {
  const age = headers.age === undefined ? undefined : Number(headers.age.trim());
  if (age !== undefined && Number.isFinite(age) && age >= 0) return { producedAtMs: receivedMs - age * 1000, basis: 'age_header' };
  const date = headers.date === undefined ? NaN : Date.parse(headers.date);
  if (Number.isFinite(date) && date < receivedMs - DATE_SKEW_TOLERANCE_MS && receivedMs - date <= Math.max(cacheMs, DATE_SKEW_TOLERANCE_MS)) {
    return { producedAtMs: date, basis: 'date_header' };
  }
  const cacheControl = (headers['cache-control'] ?? '').toLowerCase();
  if (/(^|[,\s])(no-store|no-cache|max-age=0)\b/.test(cacheControl)) return { producedAtMs: receivedMs, basis: 'no_cache' };
  if (cacheMs <= 0) return { producedAtMs: receivedMs, basis: 'fetch_time' };
  const worst = receivedMs - cacheMs;
  const modified = headers['last-modified'] === undefined ? NaN : Date.parse(headers['last-modified']);
  if (Number.isFinite(modified) && modified > worst && modified <= receivedMs) return { producedAtMs: modified, basis: 'last_modified' };
  return { producedAtMs: worst, basis: 'worst_case' };
}
