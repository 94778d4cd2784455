import { declareFields } from '../../upstream/fields/declare.js';
import type { FieldReport, FoundField } from '../../upstream/fields/resolve.js';
import { valueAt } from '../../upstream/fields/shape.js';
import { FieldsMissingError, InvalidResponseError, type RequestContext } from '../../upstream/http/errors.js';
import type { ListCandidate } from '../../upstream/lists/locate.js';
import { refuseWhenNothingUsable, type DecodeOptions, type Decoded, type DroppedItem, type JsonDecoder } from '../../upstream/tolerant/body.js';
import { describe, isRecord } from '../../upstream/tolerant/values.js';

/**
 * `/hosts/{uuid}/metrics`: "available metric names, grouped by component". Accepted layouts:
 * - an object of component to names, at the top level or under `metrics` (or `components`,
 *   `data`, ...): `{"system": ["system.cpu.user"], "nginx": [...]}`;
 * - a flat list of names: `["system.cpu.user", ...]`;
 * - a list of `{name, component?}`;
 * - a list of `{component, metrics: [...]}` (or `names`);
 * - an object of component to `{names: [...], count}`.
 * A name's component, when not given, is its first dotted word (the document's
 * `<component>.<path>` form). A name that cannot be requested (empty, or holding a comma or
 * whitespace) is dropped.
 *
 * The layouts are found by structure, not by field words, so the catalogue declares only the
 * one field its items may carry, a metric's name, for the report (and for `fields:`: the path
 * of the name inside an object item). A list of objects none of which has a name is a
 * missing field, said as one.
 */
export interface MetricNames {
  /** Component to metric names. */
  readonly metrics: Readonly<Record<string, readonly string[]>>;
}

const CONTAINER_KEYS = ['metrics', 'components', 'catalogue', 'catalog', 'names', 'available', 'items', 'data', 'results', 'result', 'records', 'entries', 'content', 'objects', 'values', '_embedded'];
const GROUP_LIST_KEYS = ['metrics', 'names', 'items'];
const NAME_KEYS = ['name', 'metric', 'metric_name', 'id', 'key'];

export const METRIC_CATALOGUE_FIELDS = declareFields({
  name: { kind: 'string', about: "a metric's name, <component>.<path> (a name alone, or in an object item)", words: NAME_KEYS.map((key) => [key]), essential: true },
});

const WHAT = 'metric catalogue';
const COMPONENT_KEYS = ['component', 'group', 'type', 'name'];

/**
 * The catalogue as a list, so its pages are joined before it is read: a map of component to
 * names is the list of its groups (`{component, metrics}`), so a map split over pages joins too.
 */
function locateCatalogue(raw: unknown): ListCandidate | undefined {
  const body = container(raw);
  if (body === undefined) return undefined;
  const envelope = isRecord(raw) ? raw : {};
  if (Array.isArray(body.value)) return { items: body.value, path: body.key, envelope };
  const groups = Object.entries(body.value).flatMap(([component, group]) => {
    const names = namesIn(group);
    return names === undefined ? [] : [{ component, metrics: names.list }];
  });
  return { items: groups, path: body.key, envelope };
}

export const decodeMetricNames: JsonDecoder<MetricNames> = Object.assign((raw: unknown, context: RequestContext, options?: DecodeOptions): Decoded<MetricNames> => {
  const namePath = options?.fieldPaths?.name?.split('.');
  const body = container(raw);
  if (body === undefined) {
    throw new InvalidResponseError(context, `${WHAT}: no metric names found in the body (got ${describe(raw)})`, ['(root): no metric names']);
  }
  const groups = new Map<string, Set<string>>();
  const dropped: DroppedItem[] = [];
  let seen = 0;
  let found: FoundField | undefined;
  let firstObject: Readonly<Record<string, unknown>> | undefined;
  let lastGroup: string | undefined;
  let lastSet: Set<string> | undefined;
  // The path is built only for a name that is dropped (a catalogue is hundreds of names a
  // host), from one builder a list and the name's index.
  const add = (item: unknown, component: string | undefined, pathOf: (index: number) => string, index: number) => {
    seen++;
    let name = item;
    let where = '(the name itself)';
    if (isRecord(item)) {
      firstObject ??= item;
      ({ name, where } = nameInObject(resourceView(item), namePath));
    }
    const problem = nameProblem(name);
    if (problem) {
      dropped.push({ path: pathOf(index), ...problem });
      return;
    }
    const text = (name as string).trim();
    found ??= { path: where, sample: text, configured: namePath !== undefined && isRecord(item) };
    let group = component;
    if (group === undefined) {
      const dot = text.indexOf('.');
      group = dot < 0 ? text : text.slice(0, dot);
    }
    let set = group === lastGroup ? lastSet : groups.get(group);
    if (!set) groups.set(group, (set = new Set()));
    lastGroup = group;
    lastSet = set;
    set.add(text);
  };

  if (Array.isArray(body.value)) {
    const itemPath = (index: number) => `${body.key}[${index}]`;
    body.value.forEach((raw, index) => {
      const item = isRecord(raw) ? resourceView(raw) : raw;
      if (!isRecord(item)) return add(item, undefined, itemPath, index);
      const listKey = GROUP_LIST_KEYS.find((key) => Array.isArray(item[key]));
      if (listKey !== undefined) {
        const component = firstString(item, COMPONENT_KEYS);
        const list = item[listKey] as unknown[];
        const listPath = (i: number) => `${itemPath(index)}.${listKey}[${i}]`;
        for (let i = 0; i < list.length; i++) add(list[i], component, listPath, i);
        return;
      }
      add(item, firstString(item, ['component', 'group']), itemPath, index);
    });
  } else {
    for (const [component, group] of Object.entries(body.value)) {
      const names = namesIn(group);
      if (names === undefined) continue;
      const listPath = (i: number) => `${body.key ? `${body.key}.` : ''}${component}${names.key}[${i}]`;
      for (let i = 0; i < names.list.length; i++) add(names.list[i], component, listPath, i);
    }
  }
  const report: FieldReport = {
    found: found === undefined ? {} : { name: found },
    missing: found === undefined && seen > 0 ? ['name'] : [],
    essentialMissing: [],
    items: seen,
    paths: firstObject === undefined ? [] : Object.keys(firstObject),
  };
  if (found === undefined && seen > 0 && dropped.every((item) => item.reason === 'missing_field')) {
    throw new FieldsMissingError(context, WHAT, { ...report, essentialMissing: ['name'] });
  }
  refuseWhenNothingUsable(context, WHAT, seen - dropped.length, dropped);
  const metrics: Record<string, string[]> = {};
  for (const [component, names] of groups) metrics[component] = [...names];
  return { value: { metrics }, dropped, fields: report };
}, { list: { locate: locateCatalogue } });

/** The list or component map in the body. */
function container(raw: unknown): { value: unknown[] | Record<string, unknown>; key: string } | undefined {
  if (Array.isArray(raw)) return { value: raw, key: '' };
  if (!isRecord(raw)) return undefined;
  for (const key of CONTAINER_KEYS) {
    const value = raw[key];
    if (isRecord(value) && key === '_embedded') {
      const inner = container(value);
      if (inner) return { value: inner.value, key: inner.key ? `${key}.${inner.key}` : key };
      continue;
    }
    if (Array.isArray(value) || isRecord(value)) {
      // `{data: {metrics: {...}}}`: look one level further; `{metrics: {}}` is a host without metrics.
      if (isRecord(value) && Object.keys(value).length > 0 && !Object.values(value).some((group) => namesIn(group) !== undefined)) {
        const inner = container(value);
        if (inner) return { value: inner.value, key: inner.key ? `${key}.${inner.key}` : key };
        continue;
      }
      return { value, key };
    }
  }
  if (Object.values(raw).some((group) => namesIn(group) !== undefined)) return { value: raw, key: '' };
  // One list of objects under a name of the upstream's own (`{metric_groups: [...]}`).
  const lists = Object.entries(raw).filter(([, value]) => Array.isArray(value) && value.length > 0 && value.every(isRecord));
  const [only] = lists;
  return lists.length === 1 && only !== undefined ? { value: only[1] as unknown[], key: only[0] } : undefined;
}

/** A JSON:API resource object (`{id, type, attributes}`) as the object it describes: its attributes, with its id beside them. */
function resourceView(item: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  if (!isRecord(item.attributes)) return item;
  return { ...item.attributes, ...(item.attributes.name === undefined && item.id !== undefined && { name: item.id }) };
}

/** A component's names: a list, or an object holding one (`{count: 57, names: [...]}`). */
function namesIn(group: unknown): { list: readonly unknown[]; key: string } | undefined {
  // A list of groups (`[{component, metrics: [...]}]`) holds no names itself.
  if (Array.isArray(group)) return group.length > 0 && group.every((item) => isRecord(item) && GROUP_LIST_KEYS.some((k) => Array.isArray(item[k]))) ? undefined : { list: group, key: '' };
  if (!isRecord(group)) return undefined;
  const key = GROUP_LIST_KEYS.find((k) => Array.isArray(group[k]));
  return key === undefined ? undefined : { list: group[key] as unknown[], key: `.${key}` };
}

/** The name an object item gives (at the path the operator named, else under one of the name keys), and where it was. */
function nameInObject(item: Readonly<Record<string, unknown>>, namePath: readonly string[] | undefined): { name: unknown; where: string } {
  if (namePath !== undefined) return { name: valueAt(item, namePath) ?? item, where: namePath.join('.') };
  const key = NAME_KEYS.find((k) => item[k] !== undefined && item[k] !== null);
  return key === undefined ? { name: item, where: '' } : { name: item[key], where: key };
}

function firstString(item: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = item[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/** Any comma or white space (leading and trailing included, which trimming may still save). */
const UNREQUESTABLE = /[,\s]/;

function nameProblem(name: unknown): Omit<DroppedItem, 'path'> | undefined {
  if (isRecord(name)) return { reason: 'missing_field', field: 'name', issue: 'name: is missing' };
  if (typeof name !== 'string') return { reason: 'wrong_type', field: 'name', issue: `name: expected a string, got ${describe(name)}` };
  if (name !== '' && !UNREQUESTABLE.test(name)) return undefined;
  const text = name.trim();
  if (text === '' || /[,\s]/.test(text)) return { reason: 'invalid_value', field: 'name', issue: `name: ${describe(name)} cannot be requested` };
  return undefined;
}
