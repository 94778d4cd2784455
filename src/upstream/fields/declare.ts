/**
 * What a source says about a field it reads: what it means (a semantic name and a sentence),
 * what kind of value it is and in which unit the source wants it, whether the source is
 * useless without it, and the words that identify it on a key path. The finder
 * (resolve.ts) looks for those words along every path of an item, so a field is found
 * whatever the nesting, order or separator (`uptime_24h`, `uptime.24h`, `last_24h.uptime`,
 * `stats.lastDay.uptime_pct` are one field).
 */

/**
 * How a value is read, and what the source gets:
 * - `ratio`: 0-1; from a percentage (the words say `pct`, or a value above 1) or a ratio;
 * - `duration`: seconds; the unit from the words (`ms`, `seconds`, `minutes`, `days`), from the
 *   value (`"30s"`, `"PT5M"`), else the field's `unit`;
 * - `rate`: per second; a count with a period (`{requests: 120, period: "1m"}`,
 *   `requests_per_minute`), else the field's `period`;
 * - `timestamp`: ISO 8601 UTC, from RFC 3339 text or a Unix time in seconds or milliseconds;
 * - `state`: true or false, from a boolean, or from words such as `active` and `paused`
 *   (a key whose words say the opposite, `paused: true`, is turned round);
 * - `integer`, `count` (0 or more), `number`, `string`, `id` (a number or a string, as text),
 *   `strings` (a list, or a comma-separated string).
 */
export type FieldKind = 'ratio' | 'duration' | 'rate' | 'timestamp' | 'state' | 'integer' | 'count' | 'number' | 'string' | 'id' | 'strings';

/** What a field's value is, in the kind's terms. */
export interface FieldValues {
  ratio: number;
  duration: number;
  rate: number;
  timestamp: string;
  state: boolean;
  integer: number;
  count: number;
  number: number;
  string: string;
  id: string;
  strings: string[];
}

export type TimeUnit = 'ms' | 'seconds' | 'minutes' | 'hours' | 'days';

export interface FieldDecl<K extends FieldKind = FieldKind> {
  readonly kind: K;
  /** What the field means, for /status, the probe and the docs. */
  readonly about: string;
  /**
   * The words that identify it, canonical (see words.ts): any one of these sets, every word
   * of the set somewhere on the path. `[['uptime']]`, `[['cert', 'expires'], ['tls', 'expires']]`.
   */
  readonly words: readonly (readonly string[])[];
  /** The period the field is about (`24h`, `7d`, `30d`): a path naming another period is never it. */
  readonly period?: string;
  /** A path naming no period is it too (the list's aggregates are over 24 hours). */
  readonly periodOptional?: boolean;
  /** The statistic the field is (`avg`, `p95`, `max`): a path naming another one is never it. */
  readonly stat?: string;
  /** A path naming no statistic is it too (`ttfb_ms` is the average). */
  readonly statOptional?: boolean;
  /** Words that rule a path out (`failures` for the count of all checks). */
  readonly not?: readonly string[];
  /** Every item needs it (an id): an item without it is dropped, a response whose items all lack it is a shape failure. */
  readonly essential?: boolean;
  /** One of the fields the source is polled for: a response that carries none of them is a shape failure. */
  readonly useful?: boolean;
  /** Read when there, never reported missing: a figure another source's answer usually gives, which this one only fills in (the summary's p95). */
  readonly fillsGap?: boolean;
  /** Fields that say the same in another form (an expression for metric and threshold): with one of them found, this one is not missing. */
  readonly alternatives?: readonly string[];
  /** A duration's unit when neither its words nor its value say. */
  readonly unit?: TimeUnit;
  /** For `ratio`: a number is a percentage (0-100) unless the words say `ratio` (a score the document gives out of 100). */
  readonly percent?: boolean;
  /** A rate's period, in seconds, when neither its words nor its value say. */
  readonly periodSeconds?: number;
  /** For `state`: the words (in the key or in a string value) that mean false. */
  readonly falseWords?: readonly string[];
  /** For `state`: the string values that mean true. */
  readonly trueWords?: readonly string[];
  /** Null at the field's path is its value (a gap in a series), never a reason to read another path. */
  readonly nullIsValue?: boolean;
  /** For `id`: text only, a number is refused (a host uuid sent as a number is no uuid). */
  readonly textOnly?: boolean;
  /** For `string`: values that say this is not the field (a grouping such as `web_server` where a software name is wanted). */
  readonly notValues?: readonly string[];
  /** For `strings`: an object of key to value is the list too, read whole as `key:value` items (tags as `{env: "prod"}`). */
  readonly pairs?: boolean;
}

/** A source's fields, by semantic name. */
export type FieldDecls = Readonly<Record<string, FieldDecl>>;

/** The value a declaration gives. */
export type ValueOf<D extends FieldDecl> = FieldValues[D['kind']];

/** What a set of declarations gives for one item: each field's value, or undefined when the item lacks it. */
export type FieldRecord<D extends FieldDecls> = { readonly [K in keyof D]: ValueOf<D[K]> | undefined };

/** Declares a source's fields, keeping each one's kind for the values it gives. */
export function declareFields<const D extends FieldDecls>(decls: D): D {
  return decls;
}

/** The same declarations, each one also marked (`{ useful: true }`). */
export function marked<const D extends FieldDecls>(decls: D, mark: Pick<FieldDecl, 'useful'>): D {
  // Each entry keeps its kind; only the mark is added.
  return Object.fromEntries(Object.entries(decls).map(([name, decl]) => [name, { ...decl, ...mark }])) as D;
}
