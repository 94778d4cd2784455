import { boolean, describe, integer, isRecord, number, string, stringList, text, timestamp, type Read } from '../tolerant/values.js';
import type { FieldDecl, FieldKind, FieldValues } from './declare.js';
import { isPeriod, keyWords, WORD_SECONDS } from './words.js';

/**
 * Reading a found value as its declared kind, in the unit the source wants, and saying where
 * the unit came from (the words of the path, the value itself, the range of the values, or
 * the declaration): the probe and /status show it, so a guess is never passed off as fact.
 */

export interface KindRead<T> {
  readonly read: Read<T>;
  /** The unit the value was taken in and why, e.g. `percent (pct in the name)`. */
  readonly unit?: string;
}

/** What is known of all the values at one path in one response (a percentage shows in its largest). */
export interface PathFacts {
  readonly max: number | undefined;
  /** A state field's path holds numbers other than 0 and 1 in some item: codes, not states. */
  readonly codes?: boolean;
}

const ok = <T>(value: T): Read<T> => ({ ok: true, value });
const invalid = (detail: string): Read<never> => ({ ok: false, reason: 'invalid_value', detail });

const TIME_UNITS = ['ms', 'seconds', 'minutes', 'hours', 'days', 'weeks'];

/** The time unit the words name, when one. */
function unitFromWords(words: readonly string[]): string | undefined {
  return words.find((w) => TIME_UNITS.includes(w));
}

const DURATION_TEXT = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$/i;
const ISO_DURATION = /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;
const COMPOUND = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)/gi;
const SHORT_UNITS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 };

/** Seconds in a duration written as text: `30s`, `5m`, `1h30m`, `250ms`, `PT5M`, `2 days`, `minute`. */
export function durationText(text: string): number | undefined {
  const iso = ISO_DURATION.exec(text.trim());
  if (iso && iso[0] !== 'P' && iso[0] !== 'PT') {
    const [, d, h, m, s] = iso;
    return Number(d ?? 0) * 86_400 + Number(h ?? 0) * 3_600 + Number(m ?? 0) * 60 + Number(s ?? 0);
  }
  const compact = text.trim().toLowerCase();
  if (/^(\d+(?:\.\d+)?\s*(ms|s|m|h|d|w))+$/.test(compact.replace(/\s+/g, ''))) {
    let total = 0;
    for (const match of compact.replace(/\s+/g, '').matchAll(COMPOUND)) total += Number(match[1]) * (SHORT_UNITS[match[2] ?? 's'] ?? 1);
    return total;
  }
  const single = DURATION_TEXT.exec(compact);
  if (single) {
    const [, amount, unit] = single;
    if (unit === undefined) return undefined;
    const seconds = unitSeconds(unit);
    return seconds === undefined ? undefined : Number(amount) * seconds;
  }
  // A bare unit word: `minute`, `hour`, `day`, `min`.
  return unitSeconds(compact);
}

/** Abbreviations that are units in a duration's text but words of their own in keys (`min` is also "minimum"). */
const TEXT_UNITS: Readonly<Record<string, number>> = { min: 60, mins: 60, hr: 3_600, h: 3_600, m: 60, d: 86_400, w: 604_800 };

function unitSeconds(unit: string): number | undefined {
  const short = TEXT_UNITS[unit];
  if (short !== undefined) return short;
  const words = keyWords(unit);
  return words.length === 1 ? WORD_SECONDS[words[0] ?? ''] : undefined;
}

/** A value converted to another unit, rounded to 15 digits so 99.9 % reads 0.999, not 0.9990000000000001. */
export function scaled(value: number, factor: number): number {
  return factor === 1 ? value : Number.parseFloat((value * factor).toPrecision(15));
}

function readRatio(raw: unknown, words: readonly string[], facts: PathFacts, declaredPercent: boolean): KindRead<number> {
  let text = typeof raw === 'string' ? raw.trim() : undefined;
  const percentSign = text?.endsWith('%') ?? false;
  if (percentSign) text = text?.slice(0, -1);
  const read = number(text ?? raw);
  if (!read.ok) return { read };
  let unit: string;
  let value: number;
  if (percentSign || words.includes('pct')) {
    unit = percentSign ? 'percent (% in the value)' : 'percent (pct in the name)';
    value = scaled(read.value, 0.01);
  } else if (declaredPercent && !words.includes('ratio')) {
    unit = 'percent (the declared scale)';
    value = scaled(read.value, 0.01);
  } else if (words.includes('ratio')) {
    unit = 'ratio (ratio in the name)';
    value = read.value;
  } else if ((facts.max ?? read.value) > 1) {
    unit = 'percent (values above 1)';
    value = scaled(read.value, 0.01);
  } else {
    unit = 'ratio (values within 0-1)';
    value = read.value;
  }
  if (value < 0 || value > 1) return { read: invalid(`${describe(raw)} is outside 0-100 %`), unit };
  return { read: ok(value), unit };
}

function readDuration(raw: unknown, words: readonly string[], decl: FieldDecl): KindRead<number> {
  if (typeof raw === 'string' && !/^\s*[+-]?\d+(\.\d+)?\s*$/.test(raw)) {
    const seconds = durationText(raw);
    return seconds === undefined ? { read: invalid(`${describe(raw)} is not a duration`) } : { read: ok(seconds), unit: 'seconds (unit in the value)' };
  }
  const read = number(raw);
  if (!read.ok) return { read };
  const named = unitFromWords(words);
  const unit = named ?? decl.unit ?? 'seconds';
  const factor = WORD_SECONDS[unit] ?? 1;
  return { read: ok(scaled(read.value, factor)), unit: `${unit} (${named !== undefined ? `${unit} in the name` : 'the declared unit'})` };
}

const COUNT_WORDS = ['requests', 'count', 'limit', 'rate', 'max', 'value'];
/** Keys beside a rate's count that are about something else (`burst`, `remaining`). */
const NOT_COUNT_WORDS = ['burst', 'remaining', 'reset', 'usage', 'retry'];
/** Keys that hold a rate's period beside its count. */
export const PERIOD_KEY_WORDS = ['period', 'per', 'window', 'interval', 'unit', 'duration', 'every', 'timeframe', 'time'];

/**
 * What a key inside a rate's object holds: its period (`period`, `window_seconds`, `per`),
 * its count (`requests`, `limit`, `per_minute`, which names its period too), or neither
 * (`burst`, `remaining`: other fields' keys).
 */
export function rateKeyRole(key: string): 'period' | 'count' | undefined {
  const keyed = keyWords(key);
  if (keyed.some((w) => NOT_COUNT_WORDS.includes(w))) return undefined;
  const namesPeriod = keyed.some(isPeriod);
  if (!namesPeriod && !keyed.some((w) => COUNT_WORDS.includes(w)) && keyed.some((w) => PERIOD_KEY_WORDS.includes(w))) return 'period';
  if (namesPeriod || keyed.some((w) => COUNT_WORDS.includes(w)) || keyed.length === 0) return 'count';
  return undefined;
}

/** The period a path names: `requests_per_minute` → 60; undefined when none. */
function periodFromWords(words: readonly string[]): number | undefined {
  const per = words.lastIndexOf('per');
  const candidates = per >= 0 ? words.slice(per + 1) : words;
  for (const word of candidates) {
    const seconds = WORD_SECONDS[word];
    if (seconds !== undefined && word !== 'ms') return seconds;
  }
  return undefined;
}

/** A period's length in seconds: `"1m"`, `"minute"`, or a number in the key's unit (`window_minutes: 5`). */
function periodSeconds(key: string, value: unknown): number | undefined {
  if (typeof value === 'string') return durationText(value) ?? durationText(`1${value.trim()}`);
  const read = number(value);
  if (!read.ok) return undefined;
  const unit = unitFromWords(keyWords(key));
  return read.value * (unit === undefined ? 1 : (WORD_SECONDS[unit] ?? 1));
}

function readRate(raw: unknown, words: readonly string[], decl: FieldDecl): KindRead<number> {
  if (isRecord(raw)) {
    let count: number | undefined;
    let period: number | undefined;
    let periodFrom = '';
    for (const [key, value] of Object.entries(raw)) {
      const role = rateKeyRole(key);
      if (role === 'period' && period === undefined) {
        const seconds = periodSeconds(key, value);
        if (seconds !== undefined && seconds > 0) {
          period = seconds;
          periodFrom = `${key} in the value`;
        }
      } else if (role === 'count' && count === undefined) {
        const read = number(value);
        if (!read.ok) continue;
        count = read.value;
        const inKey = periodFromWords(keyWords(key));
        if (inKey !== undefined && period === undefined) {
          period = inKey;
          periodFrom = `${key} in the name`;
        }
      }
    }
    if (count === undefined) return { read: invalid('names no count of requests') };
    if (period === undefined) {
      if (decl.periodSeconds === undefined) return { read: invalid('names no period for its count') };
      return { read: ok(count / decl.periodSeconds), unit: `per ${decl.periodSeconds} s (the declared period)` };
    }
    return { read: ok(count / period), unit: `per ${period} s (${periodFrom})` };
  }
  if (typeof raw === 'string') {
    const match = /^\s*(\d+(?:\.\d+)?)\s*(?:\/|per|every)\s*(.+)$/i.exec(raw);
    if (match) {
      const seconds = durationText(match[2] ?? '') ?? durationText(`1${match[2] ?? ''}`);
      if (seconds !== undefined && seconds > 0) return { read: ok(Number(match[1]) / seconds), unit: `per ${seconds} s (in the value)` };
    }
  }
  const read = number(raw);
  if (!read.ok) return { read };
  const named = periodFromWords(words);
  if (named !== undefined) return { read: ok(read.value / named), unit: `per ${named} s (in the name)` };
  if (decl.periodSeconds === undefined) return { read: invalid(`${describe(raw)} names no period`) };
  return { read: ok(read.value / decl.periodSeconds), unit: `per ${decl.periodSeconds} s (the declared period)` };
}

const FALSE_STATES = ['false', 'no', 'off', 'disabled', 'inactive', 'paused', 'stopped', 'suspended', 'down', 'offline', 'failing', 'error'];
const TRUE_STATES = ['true', 'yes', 'on', 'enabled', 'active', 'running', 'up', 'online', 'ok', 'healthy'];

function readState(raw: unknown, words: readonly string[], decl: FieldDecl, facts: PathFacts): KindRead<boolean> {
  if (facts.codes === true && (typeof raw === 'number' || (typeof raw === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(raw)))) {
    return { read: invalid(`${describe(raw)} is one of several codes at this path (numbers other than 0 and 1), not a state`) };
  }
  const falseWords = decl.falseWords ?? [];
  // A key that names the opposite (`paused: true` for "enabled") is read the other way round.
  const inverted = words.some((w) => falseWords.includes(w));
  let read: Read<boolean>;
  if (typeof raw === 'string') {
    const word = raw.trim().toLowerCase();
    // A field with its own words reads only those: `paused` is no answer to "did the check succeed".
    if ((decl.trueWords ?? TRUE_STATES).includes(word)) read = ok(true);
    else if ((decl.falseWords ?? FALSE_STATES).includes(word)) read = ok(false);
    else read = boolean(raw);
    // A word value says the state itself, whatever the key: `status: "paused"`.
    if (read.ok && !['true', 'false', 'yes', 'no', 'on', 'off', '1', '0'].includes(word)) return { read };
  } else {
    read = boolean(raw);
  }
  if (!read.ok) return { read };
  return { read: ok(inverted ? !read.value : read.value), unit: inverted ? 'inverted (the name says the opposite)' : undefined };
}

/** `{env: "prod", tier: 2}` → `["env:prod", "tier:2"]`; a value that is no scalar is left out. */
const pairs = (raw: Readonly<Record<string, unknown>>): Read<string[]> =>
  ok(
    Object.entries(raw)
      .filter(([, value]) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      .map(([key, value]) => `${key}:${String(value)}`),
  );

/** Keys of an object in a list of ids that hold its id, best first (HAL links give an `href` whose last segment is it). */
const ID_KEYS = ['uuid', 'id', 'key', 'name', 'value', 'href'];

/** The id an object in a list of ids stands for (`{type: "hosts", id: "ab12"}`), or undefined. */
function idOfObject(item: Readonly<Record<string, unknown>>): string | undefined {
  for (const key of ID_KEYS) {
    const value = item[key];
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    if (typeof value !== 'string' || value.trim() === '') continue;
    if (key !== 'href') return value;
    const segment = new URL(value, 'http://relative.invalid').pathname.split('/').filter((s) => s !== '').pop();
    if (segment !== undefined) return decodeURIComponent(segment);
  }
  return undefined;
}

/**
 * A list of strings as sent: a list, a comma-separated string, or a list of objects that
 * each stand for one (an id, or with `pairs` a `key:value`). An item that is none of these
 * makes the whole value unreadable: a list read short would say something else (a rule's
 * scope of two hosts read as none means every host).
 */
function strings(raw: unknown, withPairs: boolean): Read<string[]> {
  if (!Array.isArray(raw)) return stringList(raw);
  const out: string[] = [];
  for (const item of raw) {
    if (typeof item === 'string') out.push(item);
    else if (typeof item === 'number' && Number.isFinite(item)) out.push(String(item));
    else if (isRecord(item)) {
      const pair = withPairs && typeof item.key === 'string' && 'value' in item ? `${item.key}:${String(item.value)}` : undefined;
      const id = pair ?? idOfObject(item);
      if (id === undefined) return invalid(`holds ${describe(item)}, which names no id`);
      out.push(id);
    } else return invalid(`holds ${describe(item)}, which is no string`);
  }
  return ok(out);
}

/** A string that is one of the words that say the field is not here (a grouping where a software name is wanted). */
function notOneOf(read: Read<string>, words: readonly string[] | undefined): Read<string> {
  if (!read.ok || words === undefined) return read;
  const word = read.value.trim().toLowerCase().replace(/[\s-]+/g, '_');
  return words.includes(word) ? invalid(`${describe(read.value)} names a group, not the value itself`) : read;
}

const count = (raw: unknown): Read<number> => {
  const read = integer(raw);
  if (!read.ok) return read;
  return read.value < 0 ? invalid(`${read.value} is negative`) : read;
};

const id = (raw: unknown): Read<string> => {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) ? ok(String(raw)) : invalid(`${raw} is not an id`);
  const read = string(raw);
  if (!read.ok) return read;
  return read.value.trim() === '' ? invalid('is empty') : read;
};

/** Reads one value as its declared kind. */
export function readKind<K extends FieldKind>(decl: FieldDecl<K>, raw: unknown, words: readonly string[], facts: PathFacts): KindRead<FieldValues[K]> {
  // Each branch returns the kind's own value type; TypeScript cannot narrow K through the switch.
  switch (decl.kind) {
    case 'ratio':
      return readRatio(raw, words, facts, decl.percent === true) as KindRead<FieldValues[K]>;
    case 'duration':
      return readDuration(raw, words, decl) as KindRead<FieldValues[K]>;
    case 'rate':
      return readRate(raw, words, decl) as KindRead<FieldValues[K]>;
    case 'state':
      return readState(raw, words, decl, facts) as KindRead<FieldValues[K]>;
    case 'timestamp':
      return { read: timestamp(raw) } as KindRead<FieldValues[K]>;
    case 'integer':
      return { read: integer(raw) } as KindRead<FieldValues[K]>;
    case 'count':
      return { read: count(raw) } as KindRead<FieldValues[K]>;
    case 'number':
      // A threshold written as upstream shows it (`"90 %"`) is the number it shows.
      return { read: number(typeof raw === 'string' ? raw.replace(/\s*%\s*$/, '') : raw) } as KindRead<FieldValues[K]>;
    case 'string':
      return { read: notOneOf(string(raw), decl.notValues) } as KindRead<FieldValues[K]>;
    case 'id':
      return { read: decl.textOnly === true ? text(raw) : id(raw) } as KindRead<FieldValues[K]>;
    case 'strings':
      return { read: decl.pairs === true && isRecord(raw) ? pairs(raw) : strings(raw, decl.pairs === true) } as KindRead<FieldValues[K]>;
    default:
      return { read: invalid(`unknown kind ${String(decl.kind)}`) };
  }
}
