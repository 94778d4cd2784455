import { FieldsMissingError, InvalidResponseError, type RequestContext } from '../http/errors.js';
import { findList, GENERIC_LIST_KEYS, refuseWhenNothingUsable, wrappedObjects } from '../tolerant/body.js';
import { describe, isRecord, type DroppedItem } from '../tolerant/values.js';
import type { FieldDecls, FieldRecord } from './declare.js';
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
  readonly report: FieldReport;
  /** Where the list was (`websites`, `data.items`, `(grouped by key)`), and how long. */
  readonly list: { readonly path: string; readonly length: number };
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
    const items = groups.flatMap(([group, list]) => (list as Record<string, unknown>[]).map((item) => (GROUP_KEY in item ? item : { ...item, [GROUP_KEY]: group })));
    return { items, path: path === '' ? '(grouped by key)' : `${path} (grouped by key)` };
  }
  return undefined;
}

export function readFieldList<D extends FieldDecls>(raw: unknown, context: RequestContext, spec: FieldListSpec<D>): FieldList<D> {
  const keys = [...spec.keys, ...GENERIC_LIST_KEYS];
  const found = findList(raw, keys);
  const grouped = found === undefined ? groupedItems(raw, keys) : undefined;
  const items = found?.items ?? grouped?.items;
  if (items === undefined) {
    throw new InvalidResponseError(context, `${spec.what}: no list found in the body (${describe(raw)})`, ['(root): no list of items']);
  }
  const listPath = found !== undefined ? found.key || '(the body)' : (grouped?.path ?? '');
  const dropped: DroppedItem[] = [];
  const objects: Readonly<Record<string, unknown>>[] = [];
  const indexOf: number[] = [];
  items.forEach((item, index) => {
    if (isRecord(item)) {
      objects.push(item);
      indexOf.push(index);
    } else {
      dropped.push({ path: `${listPath}[${index}]`, reason: 'not_an_object', field: '(item)', issue: `expected an object, got ${describe(item)}` });
    }
  });
  const read = spec.finder.read(objects);
  for (const problem of read.problems) {
    dropped.push({ path: `${listPath}[${indexOf[problem.index] ?? problem.index}]`, reason: problem.reason, field: problem.field, issue: `${problem.field} ${problem.issue}` });
  }
  const records: FieldRecord<D>[] = [];
  read.records.forEach((record, index) => {
    if (record === undefined) return;
    const problem = spec.unusable?.(record);
    if (problem === undefined) records.push(record);
    else dropped.push({ path: `${listPath}[${indexOf[index] ?? index}]`, reason: 'missing_field', field: problem.field, issue: `${problem.field}: ${problem.issue}` });
  });
  const report = { ...read.report, list: { path: listPath, length: items.length } };
  if (objects.length > 0 && report.essentialMissing.length > 0) throw new FieldsMissingError(context, spec.what, report);
  refuseWhenNothingUsable(context, spec.what, records.length, dropped);
  return {
    records,
    envelope: found?.envelope ?? {},
    dropped,
    notes: [...read.notes],
    report,
    list: report.list,
  };
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
  if (!isRecord(raw)) throw new InvalidResponseError(context, `${spec.what}: expected an object, got ${describe(raw)}`, ['(root): not an object']);
  // The object the declared fields are in: the body, or the one under a wrapper or the
  // resource's name; on a tie the inner one, whose fields are the resource's own.
  let best = spec.finder.read([raw]);
  for (const candidate of wrappedObjects(raw, spec.keys).slice(1)) {
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
