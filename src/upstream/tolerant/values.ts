/**
 * Reading one JSON value the way a tolerant client must: numbers that arrive as numeric
 * strings, booleans as `"true"` or `1`, timestamps with a space instead of `T`. Each
 * reader says why it refused, in one of the bounded drop reasons.
 */

/** Why an item was dropped: a small fixed set, so it can be a label value. */
export type DropReason = 'not_an_object' | 'missing_field' | 'wrong_type' | 'invalid_value';
export const DROP_REASONS: readonly DropReason[] = ['not_an_object', 'missing_field', 'wrong_type', 'invalid_value'];

export type Read<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: DropReason; readonly detail: string };

/** Turns one raw value into T, or says why not. Never called with undefined or null. */
export type ValueReader<T> = (raw: unknown) => Read<T>;

const ok = <T>(value: T): Read<T> => ({ ok: true, value });
const wrongType = (expected: string, raw: unknown): Read<never> => ({ ok: false, reason: 'wrong_type', detail: `expected ${expected}, got ${describe(raw)}` });
const invalid = (detail: string): Read<never> => ({ ok: false, reason: 'invalid_value', detail });

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short description of a value for messages; upstream strings are clipped. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  return typeof value;
}

const NUMERIC = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A finite number, or a string holding one (`"90"`, `" 1.5 "`). */
export const number: ValueReader<number> = (raw) => {
  if (typeof raw === 'number') return Number.isFinite(raw) ? ok(raw) : invalid(`${raw} is not finite`);
  if (typeof raw === 'string') {
    const text = raw.trim();
    return NUMERIC.test(text) ? ok(Number(text)) : invalid(`${describe(raw)} is not a number`);
  }
  return wrongType('a number', raw);
};

/** A whole number (also as a numeric string); ids and counts. */
export const integer: ValueReader<number> = (raw) => {
  const read = number(raw);
  if (!read.ok) return read;
  return Number.isSafeInteger(read.value) ? read : invalid(`${read.value} is not a whole number`);
};

/** A string; a number is taken as its decimal text (an id or a name sent as a number). */
export const string: ValueReader<string> = (raw) => {
  if (typeof raw === 'string') return ok(raw);
  if (typeof raw === 'number' && Number.isFinite(raw)) return ok(String(raw));
  return wrongType('a string', raw);
};

/** Text only: a number is refused (a host uuid sent as a number is not a uuid). */
export const text: ValueReader<string> = (raw) => {
  if (typeof raw !== 'string') return wrongType('a string', raw);
  return raw.trim() === '' ? invalid('is empty') : ok(raw);
};

/** A string that is not blank. */
export const nonEmptyString: ValueReader<string> = (raw) => {
  const read = string(raw);
  if (!read.ok) return read;
  return read.value.trim() === '' ? invalid('is empty') : read;
};

const TRUE_WORDS = new Set(['true', 'yes', 'on', '1']);
const FALSE_WORDS = new Set(['false', 'no', 'off', '0']);

/** true/false, 1/0, or the words true, false, yes, no, on, off in any case. */
export const boolean: ValueReader<boolean> = (raw) => {
  if (typeof raw === 'boolean') return ok(raw);
  if (raw === 1 || raw === 0) return ok(raw === 1);
  if (typeof raw === 'string') {
    const word = raw.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return ok(true);
    if (FALSE_WORDS.has(word)) return ok(false);
    return invalid(`${describe(raw)} is not true or false`);
  }
  return wrongType('true or false', raw);
};

/** RFC 3339 as the API document writes it (`T`, seconds, `Z` or `+hh:mm`): kept as sent. */
export const PLAIN_RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}:?\d{2})$/i;
/** Before this, a number is taken as seconds since the epoch, after it as milliseconds (year 5138 in seconds). */
const EPOCH_MS_THRESHOLD = 1e11;

/**
 * A point in time, returned as an ISO 8601 UTC string. RFC 3339 (`T` or a space between date
 * and time, `Z` or an offset), or a Unix time in seconds or milliseconds. A time without a
 * zone is refused: guessing the zone would shift it by hours.
 */
export const timestamp: ValueReader<string> = (raw) => {
  if (typeof raw === 'number') {
    const ms = raw < EPOCH_MS_THRESHOLD ? raw * 1000 : raw;
    // Dates end 8.64e15 ms after the epoch; beyond that no Date, and no Unix time, exists.
    if (!Number.isFinite(raw) || raw < 0 || ms > 8.64e15) return invalid(`${raw} is not a Unix time`);
    return ok(new Date(ms).toISOString());
  }
  if (typeof raw !== 'string') return wrongType('a timestamp', raw);
  // As the document writes them: kept as sent.
  if (PLAIN_RFC3339.test(raw) && Number.isFinite(Date.parse(raw))) return ok(raw);
  const match = TIMESTAMP.exec(raw.trim());
  if (!match) return invalid(`${describe(raw)} is not an RFC 3339 timestamp`);
  const [, date = '', time = '', zone = 'Z'] = match;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${date}T${time.length === 5 ? `${time}:00` : time}${offset}`);
  return Number.isFinite(ms) ? ok(new Date(ms).toISOString()) : invalid(`${describe(raw)} is not a valid time`);
};

/**
 * A list of strings: a JSON list (items that are not strings or numbers are skipped), or a
 * comma-separated string as the agent's config writes tags (`foo,bar,env:prod`).
 */
export const stringList: ValueReader<string[]> = (raw) => {
  if (typeof raw === 'string') return ok(splitCommaList(raw));
  if (!Array.isArray(raw)) return wrongType('a list of strings', raw);
  const out: string[] = [];
  for (const item of raw) {
    if (typeof item === 'string') out.push(item);
    else if (typeof item === 'number' && Number.isFinite(item)) out.push(String(item));
  }
  return ok(out);
};

function splitCommaList(text: string): string[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

export interface DroppedItem {
  /** Where the item sat, e.g. `websites[3]` or `series["system.cpu.user"][7]`. */
  readonly path: string;
  readonly reason: DropReason;
  /** The canonical name of the field at fault (one of ours, never upstream text). */
  readonly field: string;
  /** What was wrong, e.g. `checked_at: "yesterday" is not an RFC 3339 timestamp`. */
  readonly issue: string;
}
