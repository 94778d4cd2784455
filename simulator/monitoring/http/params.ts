/**
 * Query and path parameter rules of the Monitoring API, as pure functions. Each returns
 * either a value or a message naming the parameter and what is wrong with it, which the
 * server sends as a 400 `bad_request`.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const WINDOW_PATTERN = /^([1-9][0-9]*)([mhdw])$/;
const POSITIVE_INTEGER = /^[1-9][0-9]*$/;
const INTEGER = /^-?[0-9]+$/;

/** The single string value of a query parameter, or an error if it is repeated or not a string. */
export function singleValue(name: string, raw: unknown): Parsed<string | undefined> {
  if (raw === undefined) return { ok: true, value: undefined };
  if (typeof raw === 'string') return { ok: true, value: raw };
  if (Array.isArray(raw)) return { ok: false, message: `query parameter '${name}' must be given at most once` };
  return { ok: false, message: `query parameter '${name}' must be a plain value` };
}

/**
 * A relative window: an integer N ≥ 1 immediately followed by one of m, h, d, w.
 * Anything else (`0h`, `1.5h`, `h`, `1y`, `-1h`, ` 1h`, `01h`) is refused.
 */
export function parseWindow(name: string, raw: string): Parsed<number> {
  const match = WINDOW_PATTERN.exec(raw);
  if (!match) {
    return {
      ok: false,
      message: `query parameter '${name}' must be a relative window: an integer of at least 1 followed by one of m, h, d, w (for example 1h or 7d); got '${printable(raw)}'`,
    };
  }
  const count = Number(match[1]);
  const unit = match[2] as keyof typeof UNIT_MS;
  // A window too large for a double still means "longer than retention", which the caller clamps.
  return { ok: true, value: Math.min(count * UNIT_MS[unit], Number.MAX_SAFE_INTEGER) };
}

/** A positive integer, optionally at most `max`. */
export function parsePositiveInteger(name: string, raw: string, max?: number): Parsed<number> {
  if (!POSITIVE_INTEGER.test(raw)) {
    return { ok: false, message: `query parameter '${name}' must be a positive integer; got '${printable(raw)}'` };
  }
  const value = Number(raw);
  if (max !== undefined && value > max) {
    return { ok: false, message: `query parameter '${name}' must be at most ${max}; got ${raw}` };
  }
  return { ok: true, value };
}

/** The `{id}` of a website path: an integer. */
export function parseWebsiteId(raw: string): Parsed<number> {
  if (!INTEGER.test(raw) || !Number.isSafeInteger(Number(raw))) {
    return { ok: false, message: `path parameter 'id' must be an integer website id; got '${printable(raw)}'` };
  }
  return { ok: true, value: Number(raw) };
}

/**
 * The series `names` parameter: a comma-separated list of metric names, each known for the
 * host. Repeated names are answered once, in first-seen order. Names are not trimmed: a
 * space is part of the name and makes it unknown.
 */
export function parseMetricNames(raw: string | undefined, known: ReadonlySet<string>): Parsed<string[]> {
  if (raw === undefined) {
    return { ok: false, message: "query parameter 'names' is required: a comma-separated list of metric names" };
  }
  if (raw === '') {
    return { ok: false, message: "query parameter 'names' must not be empty: give a comma-separated list of metric names" };
  }
  const names: string[] = [];
  const seen = new Set<string>();
  for (const name of raw.split(',')) {
    if (name === '') {
      return { ok: false, message: "query parameter 'names' contains an empty name (two commas in a row, or a leading or trailing comma)" };
    }
    if (!known.has(name)) {
      return { ok: false, message: `query parameter 'names' contains '${printable(name)}', which is not a metric of this host` };
    }
    if (!seen.has(name)) {
      seen.add(name);
      names.push(name);
    }
  }
  return { ok: true, value: names };
}

/**
 * The sampling interval of a series window, by the seed's table: 60 s up to 4 h inclusive,
 * 120 s up to 1 day, 300 s up to 2 days, 900 s up to 1 week, 3600 s beyond.
 */
export function seriesIntervalSeconds(windowMs: number): number {
  if (windowMs <= 4 * UNIT_MS.h) return 60;
  if (windowMs <= UNIT_MS.d) return 120;
  if (windowMs <= 2 * UNIT_MS.d) return 300;
  if (windowMs <= UNIT_MS.w) return 900;
  return 3600;
}

/** RFC 3339 UTC to the second: `YYYY-MM-DDTHH:MM:SSZ`. */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Quotes user input in messages safely: short, without control characters. */
function printable(raw: string): string {
  const cleaned = raw.replace(/[\p{Cc}]/gu, '?');
  return cleaned.length > 80 ? `${cleaned.slice(0, 77)}...` : cleaned;
}
