import { FieldsMissingError, InvalidResponseError, type RequestContext } from '../http/errors.js';
import { listAtPath, listCandidates, pairsAsObjects, resolveIncluded, type ListCandidate } from '../lists/locate.js';
import { findList, GENERIC_LIST_KEYS, refuseWhenNothingUsable, shapeOf, wrappedObjects, type DecodeOptions, type Decoded, type JsonDecoder } from '../tolerant/body.js';
import { describe, isRecord, type DroppedItem } from '../tolerant/values.js';
import type { FieldDecls, FieldRecord } from './declare.js';
import { durationText } from './kinds.js';
import type { FieldReport, FieldFinder } from './resolve.js';

/**
 * Reading a body with declared fields: find the list (or the one object), find every field
 * in every item whatever its shape, drop the items that lack an essential field (counted),
 * and refuse the body when no item carries one (a shape failure, never silent).
 */

/** The key a grouped list's group name is put under, when an item has no such key of its own. */
export const GROUP_KEY = 'group';

export interface FieldListSpec<D extends FieldDecls> {
  /** Words for messages: `website list`. */
  readonly what: string;
  /** Where the list may sit, most specific first, before the generic keys. */
  readonly keys: readonly string[];
  readonly finder: FieldFinder<D>;
  /** Why an item with these fields cannot be used (dropped as `missing_field` of `field`); undefined keeps it. */
  readonly unusable?: (record: FieldRecord<D>) => { readonly field: string; readonly issue: string } | undefined;
}

export interface FieldList<D extends FieldDecls> {
  /** The items kept, with their fields. */
  readonly records: readonly FieldRecord<D>[];
  /** The object around the list (paging, totals). */
  readonly envelope: Readonly<Record<string, unknown>>;
  readonly dropped: DroppedItem[];
  readonly notes: { readonly field: string; readonly issue: string }[];
  /** Per record, the fields it carries whose value could not be read (absent: none). */
  readonly unreadable: readonly (readonly string[] | undefined)[];
  readonly report: FieldReport;
  /** Where the list was (`websites`, `data.items`, `(grouped by key)`), and how long. */
  readonly list: NonNullable<FieldReport['list']>;
}

/**
 * Lists grouped in an object keyed by kind (`{nginx: [...], mysql: [...]}`): the items, each
 * with its group's name under `group` (unless it has one). Undefined when the object is not
 * such a grouping.
 */
export function groupedItems(raw: unknown, keys: readonly string[]): { items: unknown[]; path: string } | undefined {
  if (!isRecord(raw)) return undefined;
  const holders: [string, unknown][] = [['', raw], ...keys.map((key): [string, unknown] => [key, raw[key]])];
  for (const [path, holder] of holders) {
    if (!isRecord(holder)) continue;
    const groups = Object.entries(holder);
    // Under the resource's own name, an empty object is an empty grouping (a host with no components).
    if (groups.length === 0 && path !== '') return { items: [], path: `${path} (grouped by key)` };
    if (groups.length === 0 || !groups.every(([, value]) => Array.isArray(value) && value.every(isRecord))) continue;
    // A body of nothing but empty lists is no grouping anyone can tell from another body: which list is it?
    if (path === '' && groups.every(([, value]) => (value as unknown[]).length === 0)) continue;
    const items = groups.flatMap(([group, list]) => (list as Record<string, unknown>[]).map((item) => (GROUP_KEY in item ? item : { ...item, [GROUP_KEY]: group })));
    return { items, path: path === '' ? '(grouped by key)' : `${path} (grouped by key)` };
  }
  return undefined;
}

/** A list as a field list's reader found it, and how it chose it when several could be the one. */
export interface LocatedList extends ListCandidate {
  /** A grouping by kind, whose items carry their group's name. */
  readonly grouped?: boolean;
  /** Why this list and not another (`_list` configured, or chosen by the declared fields its items carry). */
  readonly how?: string;
}

/** The keys of the item shapes the finder compares lists by: a few items say what a list holds. */
const SAMPLE_ITEMS = 5;

/**
 * Where the list of a body is: at the path the operator named (`_list`), under the
 * resource's names or the generic keys of the common envelopes (HAL, JSON:API, result
 * wrappers), grouped by kind; else, of every list of objects in the body, the one whose items
 * carry the most declared fields (said in `how`). Undefined when there is none.
 */
export function locateFieldList<D extends FieldDecls>(raw: unknown, spec: Pick<FieldListSpec<D>, 'keys' | 'finder'>): LocatedList | undefined {
  const placed = spec.finder.placedList;
  if (placed !== undefined) {
    const at = listAtPath(raw, placed);
    return at && { ...at, how: `${placed || '(the body)'} (configured)` };
  }
  const keys = [...spec.keys, ...GENERIC_LIST_KEYS];
  const found = findList(raw, keys);
  if (found !== undefined) return { items: found.items, path: found.key, envelope: found.envelope ?? {} };
  const grouped = groupedItems(raw, keys);
  if (grouped !== undefined) return { items: grouped.items, path: grouped.path, envelope: {}, grouped: true };
  const scored = listCandidates(raw).map((candidate) => {
    const sample = candidate.items.slice(0, SAMPLE_ITEMS).filter(isRecord);
    return { candidate, fields: Object.keys(spec.finder.read(sample).report.found).length };
  });
  scored.sort((a, b) => b.fields - a.fields);
  const [best, ...others] = scored;
  if (best === undefined || best.fields === 0) return undefined;
  if (others.length === 0) return best.candidate;
  const declared = Object.keys(spec.finder.decls).length;
  const passed = others.map((o) => `${o.candidate.path} (${o.fields})`).join(', ');
  return { ...best.candidate, how: `chosen by the declared fields its items carry: ${best.fields} of ${declared}, over ${passed}` };
}

/** A body as the field engine reads it: related JSON:API resources in place, pair and window lists as objects. */
function prepared(raw: unknown): unknown {
  return resolveIncluded(raw);
}

/** An item as the field engine reads it. */
function preparedItem(item: unknown): unknown {
  return pairsAsObjects(item, durationText);
}

export function readFieldList<D extends FieldDecls>(raw: unknown, context: RequestContext, spec: FieldListSpec<D>): FieldList<D> {
  const located = locateFieldList(prepared(raw), spec);
  if (located === undefined) {
    const placed = spec.finder.placedList;
    const why = placed === undefined ? `no list found in the body (${shapeOf(raw)})` : `no list at ${placed}, the path configured as _list`;
    throw new InvalidResponseError(context, `${spec.what}: ${why}`, ['(root): no list of items']);
  }
  const items = located.items;
  const listPath = located.path || '(the body)';
  // Each dropped item with its place in the list, so they are told in list order.
  const droppedAt: [number, DroppedItem][] = [];
  const objects: Readonly<Record<string, unknown>>[] = [];
  const indexOf: number[] = [];
  items.forEach((raw, index) => {
    const item = preparedItem(raw);
    if (isRecord(item)) {
      objects.push(item);
      indexOf.push(index);
    } else {
      droppedAt.push([index, { path: `${listPath}[${index}]`, reason: 'not_an_object', field: '(item)', issue: `expected an object, got ${describe(item)}` }]);
    }
  });
  const read = spec.finder.read(objects);
  for (const problem of read.problems) {
    const index = indexOf[problem.index] ?? problem.index;
    droppedAt.push([index, { path: `${listPath}[${index}]`, reason: problem.reason, field: problem.field, issue: `${problem.field} ${problem.issue}` }]);
  }
  const records: FieldRecord<D>[] = [];
  const unreadable: (readonly string[] | undefined)[] = [];
  read.records.forEach((record, i) => {
    if (record === undefined) return;
    const problem = spec.unusable?.(record);
    const index = indexOf[i] ?? i;
    if (problem === undefined) {
      records.push(record);
      unreadable.push(read.unreadable[i]);
    } else droppedAt.push([index, { path: `${listPath}[${index}]`, reason: 'missing_field', field: problem.field, issue: `${problem.field}: ${problem.issue}` }]);
  });
  const dropped = droppedAt.sort(([a], [b]) => a - b).map(([, item]) => item);
  const report = { ...read.report, list: { path: listPath, length: items.length, ...(located.how !== undefined && { how: located.how }) } };
  if (objects.length > 0 && report.essentialMissing.length > 0) throw new FieldsMissingError(context, spec.what, report);
  refuseWhenNothingUsable(context, spec.what, records.length, dropped);
  return {
    records,
    envelope: located.envelope,
    dropped,
    notes: [...read.notes],
    unreadable,
    report,
    list: report.list,
  };
}

/**
 * A field list's decoder, with the `list` its client follows the pages of: the same
 * locating as its reading, so pages are joined where the decoder then reads them. A list
 * grouped by kind is read as one page.
 */
export function fieldListDecoder<D extends FieldDecls, T>(
  spec: { readonly keys: readonly string[]; readonly finders: (fieldPaths: Readonly<Record<string, string>> | undefined) => FieldFinder<D> },
  decode: (raw: unknown, context: RequestContext, options?: DecodeOptions) => Decoded<T>,
): JsonDecoder<T> {
  const locate = (raw: unknown, options?: DecodeOptions) => {
    const located = locateFieldList(prepared(raw), { keys: spec.keys, finder: spec.finders(options?.fieldPaths) });
    return located?.grouped === true ? undefined : located;
  };
  return Object.assign(decode, { list: { locate } });
}

export interface FieldObjectSpec<D extends FieldDecls> {
  readonly what: string;
  /** The singular resource name and wrappers the object may sit under. */
  readonly keys: readonly string[];
  readonly finder: FieldFinder<D>;
}

/** Reads a body that is one object; refuses one that is no object or lacks an essential field. */
export function readFieldObject<D extends FieldDecls>(
  raw: unknown,
  context: RequestContext,
  spec: FieldObjectSpec<D>,
): { readonly record: FieldRecord<D>; readonly report: FieldReport; readonly notes: { readonly field: string; readonly issue: string }[] } {
  const body = preparedItem(prepared(raw));
  if (!isRecord(body)) throw new InvalidResponseError(context, `${spec.what}: expected an object, got ${describe(raw)}`, ['(root): not an object']);
  // The object the declared fields are in: the body, or the one under a wrapper or the
  // resource's name; on a tie the inner one, whose fields are the resource's own.
  let best = spec.finder.read([body]);
  for (const candidate of wrappedObjects(body, spec.keys).slice(1)) {
    const read = spec.finder.read([candidate]);
    if (Object.keys(read.report.found).length >= Object.keys(best.report.found).length) best = read;
  }
  const [record] = best.records;
  if (record === undefined || best.report.essentialMissing.length > 0) {
    if (best.report.essentialMissing.length > 0) throw new FieldsMissingError(context, spec.what, best.report);
    const problem = best.problems[0];
    throw new InvalidResponseError(context, `${spec.what}: ${problem?.field ?? ''} ${problem?.issue ?? 'is unreadable'}`, [`${problem?.field ?? ''}: ${problem?.issue ?? ''}`]);
  }
  return { record, report: best.report, notes: [...best.notes] };
}
