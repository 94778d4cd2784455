import type { FieldReport } from '../fields/resolve.js';
import type { ListCandidate } from '../lists/locate.js';
import { InvalidResponseError, type RequestContext } from '../http/errors.js';
import { Fields, ItemProblem, type FieldNote } from './fields.js';
import { describe, isRecord, type DroppedItem } from './values.js';

/**
 * Finding the list (or the one object) in a response body whose layout the API document
 * does not show, and reading it item by item. A body is refused only when no list can be
 * found at all, or when it held items and not one of them was usable (publishing nothing
 * would retract what is known; refusing keeps it and says why).
 */

export type { DroppedItem } from './values.js';

export interface Decoded<T> {
  readonly value: T;
  readonly dropped: readonly DroppedItem[];
  /** Optional fields that were present but unusable and were ignored. */
  readonly notes?: readonly FieldNote[];
  /** Where the declared fields were found, and which no item carries (decoders that declare fields). */
  readonly fields?: FieldReport;
}

export interface DecodeOptions {
  /** Paths the operator named for fields (`fields:` in the configuration), by field name. */
  readonly fieldPaths?: Readonly<Record<string, string>>;
}

/** A decoder turns parsed JSON into a typed value, or throws InvalidResponseError. */
export interface JsonDecoder<T> {
  (raw: unknown, context: RequestContext, options?: DecodeOptions): Decoded<T>;
  /**
   * Reads a body in the endpoint's documented form straight from its bytes, giving what
   * `JSON.parse` gives, only sooner; undefined for any other body, which `JSON.parse` then reads.
   */
  readonly fromBytes?: (body: Buffer) => unknown;
  /**
   * For a body that is a list, where its decoder reads the list, so that the pages of a list
   * split over several are joined there (upstream/lists/follow.ts) before it is decoded.
   */
  readonly list?: { readonly locate: (raw: unknown, options?: DecodeOptions) => ListCandidate | undefined };
}

/** Keys under which a wrapped body or list commonly sits (`{"data": [...]}`, `{"result": {...}}`). */
const WRAPPERS = ['data', 'result', 'response', 'payload', '_embedded'] as const;
/** Keys a list commonly sits under, after the resource's own plural name. */
export const GENERIC_LIST_KEYS = ['items', 'data', 'results', 'result', 'records', 'entries', 'content', 'objects', 'values', 'list'] as const;

export interface FoundList {
  readonly items: readonly unknown[];
  /** The key path of the list, `''` when the body is the list itself. */
  readonly key: string;
  /** The object that held the list (paging fields, totals), when there was one. */
  readonly envelope: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The list in a body: the body itself; the first of `keys` holding a list (a null there is
 * an empty list); the same inside a wrapper such as `data`; or else the one field of the
 * object whose value is a list. Undefined when there is none, or several and none named.
 */
export function findList(raw: unknown, keys: readonly string[], named = false): FoundList | undefined {
  if (Array.isArray(raw)) return { items: raw, key: '', envelope: undefined };
  if (!isRecord(raw)) return undefined;
  for (const key of keys) {
    const value = raw[key];
    if (Array.isArray(value)) return { items: value, key, envelope: raw };
    if (value === null) return { items: [], key, envelope: raw };
  }
  for (const wrapper of WRAPPERS) {
    const inner = raw[wrapper];
    if (!isRecord(inner)) continue;
    const found = findList(inner, keys, named);
    if (found) return { ...found, key: found.key === '' ? wrapper : `${wrapper}.${found.key}`, envelope: { ...raw, ...inner } };
  }
  // Under the resource's name, with paging beside it (`{monitors: {items: [...], pageInfo}}`):
  // only a list under a known key counts there, so a grouping by kind is not taken for one list.
  for (const key of keys) {
    const inner = raw[key];
    if (!isRecord(inner)) continue;
    const found = findList(inner, keys, true);
    if (found) return { ...found, key: `${key}.${found.key}`, envelope: { ...raw, ...inner } };
  }
  if (named) return undefined;
  const lists = Object.entries(raw).filter(([, value]) => Array.isArray(value));
  const [only] = lists;
  if (lists.length === 1 && only !== undefined) return { items: only[1] as unknown[], key: only[0], envelope: raw };
  // One object and nothing else (`{page: {checks: [...], cursor}}`): an envelope of another name.
  const entries = Object.entries(raw);
  const [single] = entries;
  if (lists.length === 0 && entries.length === 1 && single !== undefined && isRecord(single[1])) {
    const found = findList(single[1], keys, true);
    if (found) return { ...found, key: `${single[0]}.${found.key}`, envelope: { ...raw, ...single[1] } };
  }
  return undefined;
}

/**
 * The one object of a body: the body itself when it carries one of `signature` (fields the
 * resource is known by), else the object under a wrapper or one of `keys` (the singular
 * resource name) that does, else the body itself. Undefined when the body is no object.
 */
export function findObject(raw: unknown, keys: readonly string[], signature: readonly string[]): Record<string, unknown> | undefined {
  if (!isRecord(raw)) return undefined;
  return wrappedObjects(raw, keys).find((candidate) => signature.some((field) => candidate[field] !== undefined)) ?? raw;
}

/** The body and the objects under its wrappers or the resource's name (`data.website`), outermost first. */
export function wrappedObjects(raw: Record<string, unknown>, keys: readonly string[]): Record<string, unknown>[] {
  const candidates: Record<string, unknown>[] = [raw];
  for (const key of [...keys, ...WRAPPERS]) {
    const inner = raw[key];
    if (isRecord(inner)) {
      candidates.push(inner);
      for (const nested of keys) if (isRecord(inner[nested])) candidates.push(inner[nested]);
    }
  }
  return candidates;
}

export interface ListSpec<T> {
  /** Words for messages: `website list`. */
  readonly what: string;
  /** Where the list may sit, most specific first (`websites`), before the generic keys. */
  readonly keys: readonly string[];
  /** Reads one item; throws ItemProblem to drop it. */
  readonly read: (item: Fields, index: number) => T;
}

export interface ListBody<T> {
  readonly items: T[];
  /** The object around the list (paging, totals, a host uuid), with the same notes. */
  readonly envelope: Fields;
  readonly dropped: DroppedItem[];
  readonly notes: FieldNote[];
}

/** Finds the list and reads every item; see the module comment for when it refuses. */
export function readList<T>(raw: unknown, context: RequestContext, spec: ListSpec<T>): ListBody<T> {
  const found = findList(raw, [...spec.keys, ...GENERIC_LIST_KEYS]);
  if (found === undefined) {
    throw new InvalidResponseError(context, `${spec.what}: no list found in the body (${shapeOf(raw)})`, [`(root): no list of items`]);
  }
  const notes: FieldNote[] = [];
  const items: T[] = [];
  const dropped: DroppedItem[] = [];
  found.items.forEach((item, index) => {
    const path = `${found.key}[${index}]`;
    const read = readItem(item, notes, (fields) => spec.read(fields, index));
    if (read.ok) items.push(read.value);
    else dropped.push({ path, ...read.problem });
  });
  refuseWhenNothingUsable(context, spec.what, items.length, dropped);
  return { items, envelope: new Fields(found.envelope ?? {}, notes), dropped, notes };
}

/** Reads a body that is one object; refuses a body that is no object or lacks a required field. */
export function readObject<T>(
  raw: unknown,
  context: RequestContext,
  spec: { readonly what: string; readonly keys: readonly string[]; readonly signature: readonly string[]; readonly read: (fields: Fields) => T },
): { value: T; notes: FieldNote[] } {
  const object = findObject(raw, spec.keys, spec.signature);
  if (object === undefined) {
    throw new InvalidResponseError(context, `${spec.what}: expected an object, got ${describe(raw)}`, ['(root): not an object']);
  }
  const notes: FieldNote[] = [];
  try {
    return { value: spec.read(new Fields(object, notes)), notes };
  } catch (error) {
    if (error instanceof ItemProblem) {
      throw new InvalidResponseError(context, `${spec.what}: ${error.message}`, [error.message]);
    }
    throw error;
  }
}

type ItemRead<T> = { ok: true; value: T } | { ok: false; problem: Omit<DroppedItem, 'path'> };

export function readItem<T>(item: unknown, notes: FieldNote[], read: (fields: Fields) => T): ItemRead<T> {
  if (!isRecord(item)) {
    return { ok: false, problem: { reason: 'not_an_object', field: '(item)', issue: `expected an object, got ${describe(item)}` } };
  }
  try {
    return { ok: true, value: read(new Fields(item, notes)) };
  } catch (error) {
    if (error instanceof ItemProblem) return { ok: false, problem: { reason: error.reason, field: error.field, issue: error.message } };
    throw error;
  }
}

/**
 * Items were sent and none could be read: the response is refused (the source keeps what it
 * knew and reports decode_error) rather than published as empty. The drops ride on the error
 * so they are still counted.
 */
export function refuseWhenNothingUsable(context: RequestContext, what: string, kept: number, dropped: readonly DroppedItem[]): void {
  const [first] = dropped;
  if (kept > 0 || first === undefined) return;
  throw new InvalidResponseError(
    context,
    `${what}: none of its ${dropped.length} item(s) could be read (first: ${first.path} ${first.issue})`,
    dropped.slice(0, 20).map((d) => `${d.path}: ${d.issue}`),
    undefined,
    dropped,
  );
}

/** What a body that holds no list is, for the message that says so. */
export function shapeOf(raw: unknown): string {
  if (!isRecord(raw)) return `got ${describe(raw)}`;
  const keys = Object.keys(raw);
  if (keys.length === 0) return 'an empty object';
  // Key names are upstream text: only their count and the first few, clipped, are shown.
  const shown = keys.slice(0, 6).map((key) => (key.length > 30 ? `${key.slice(0, 30)}…` : key));
  return `an object with ${keys.length} field(s): ${shown.join(', ')}${keys.length > 6 ? ', …' : ''}; none holds a list`;
}
