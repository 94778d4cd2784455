/**
 * Reads a `Retry-After` header (RFC 9110 §10.2.3) into milliseconds to wait.
 *
 * Accepted: delay-seconds (`120`; a fractional `1.5` is tolerated and rounded up to the
 * millisecond) and the three HTTP-date forms (IMF-fixdate, RFC 850, asctime), read against
 * `nowMs`. A date in the past means "now" (0). A huge value (an epoch timestamp sent as
 * seconds, a date decades ahead) is capped at `capMs` instead of being obeyed: one
 * exporter turned such a header into a 55-year wait.
 *
 * Returns undefined for anything else (absent, empty, negative, `Infinity`, `1e3`,
 * `soon`, an impossible date), so the caller falls back to its own backoff.
 *
 * @example parseRetryAfter('30', clock.now(), 300_000) // 30_000
 */
export function parseRetryAfter(value: string | undefined, nowMs: number, capMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;

  let waitMs: number | undefined;
  if (/^\d+(\.\d+)?$/.test(text)) {
    waitMs = Math.ceil(Number(text) * 1000);
  } else {
    const dateMs = parseHttpDate(text, nowMs);
    if (dateMs !== undefined) waitMs = Math.max(0, dateMs - nowMs);
  }
  if (waitMs === undefined || !Number.isFinite(waitMs)) {
    // Digits so long they overflow to Infinity are still "a very long time", not garbage.
    return waitMs === Infinity ? Math.max(0, capMs) : undefined;
  }
  return Math.min(waitMs, Math.max(0, capMs));
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(?:mon|tue|wed|thu|fri|sat|sun)';
const LONG_DAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const MONTH = '(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

// Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`, 'i');
// Sunday, 06-Nov-94 08:49:37 GMT
const RFC_850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`, 'i');
// Sun Nov  6 08:49:37 1994
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`, 'i');

/**
 * Parses an HTTP-date by hand (`nowMs` only resolves RFC 850's two-digit year): `Date.parse` accepts far too much (`Date.parse('1')` is a
 * date in 2001), which would turn garbage into a wait.
 */
export function parseHttpDate(text: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(Number(m[3]), m[2], Number(m[1]), m[4], m[5], m[6]);
  m = RFC_850.exec(text);
  if (m) {
    // RFC 9110: a two-digit year more than 50 years ahead is in the past century.
    const twoDigit = Number(m[3]);
    const currentYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(currentYear / 100) * 100 + twoDigit;
    if (year > currentYear + 50) year -= 100;
    return utc(year, m[2], Number(m[1]), m[4], m[5], m[6]);
  }
  m = ASCTIME.exec(text);
  if (m) return utc(Number(m[6]), m[1], Number((m[2] ?? '').trim()), m[3], m[4], m[5]);
  return undefined;
}

function utc(
  year: number,
  monthName: string | undefined,
  day: number,
  hours: string | undefined,
  minutes: string | undefined,
  seconds: string | undefined,
): number | undefined {
  const month = MONTHS.indexOf((monthName ?? '').toLowerCase());
  const h = Number(hours);
  const min = Number(minutes);
  const s = Number(seconds);
  if (month < 0 || day < 1 || day > 31 || h > 23 || min > 59 || s > 60) return undefined;
  const ms = Date.UTC(year, month, day, h, min, Math.min(s, 59));
  // Reject 31 Feb and the like rather than letting Date roll them into March.
  if (new Date(ms).getUTCDate() !== day) return undefined;
  return ms;
}
