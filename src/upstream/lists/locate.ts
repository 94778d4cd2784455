import { isRecord } from '../tolerant/values.js';

/**
 * Where the list of a body sits when the API document does not show it, beyond what
 * `findList` (tolerant/body.ts) reads by name: the lists of every conventional envelope
 * (HAL `_embedded`, JSON:API `data`, result wrappers), chosen by the declared fields their
 * items carry when several could be the one; the related resources a JSON:API body ships in
 * `included` put in place of their identifiers; and key/value pair lists and lists of
 * windows read as the objects they stand for.
 */

/** Lists beside the one of items in common envelopes: never the list itself. */
const NOT_ITEM_LISTS = new Set(['errors', 'messages', 'warnings', 'included', '_links', 'links', 'notices', 'info']);
/** How deep the search for candidate lists goes (`{result: {page: {items: [...]}}}`). */
const CANDIDATE_DEPTH = 3;

export interface ListCandidate {
  readonly items: readonly unknown[];
  /** Dotted path of the list; `''` for the body itself. */
  readonly path: string;
  /** The objects that held the list, outermost first, merged (paging fields, totals). */
  readonly envelope: Readonly<Record<string, unknown>>;
}

/** Every list of objects in a body, to the depth envelopes go, outermost first. */
export function listCandidates(raw: unknown): ListCandidate[] {
  if (Array.isArray(raw)) return [{ items: raw, path: '', envelope: {} }];
  const found: ListCandidate[] = [];
  const walk = (record: Readonly<Record<string, unknown>>, path: readonly string[], envelope: Readonly<Record<string, unknown>>, depth: number) => {
    const merged = { ...envelope, ...record };
    for (const [key, value] of Object.entries(record)) {
      if (NOT_ITEM_LISTS.has(key)) continue;
      if (Array.isArray(value) && value.length > 0 && value.every(isRecord)) found.push({ items: value, path: [...path, key].join('.'), envelope: merged });
      else if (isRecord(value) && depth < CANDIDATE_DEPTH) walk(value, [...path, key], merged, depth + 1);
    }
  };
  if (isRecord(raw)) walk(raw, [], {}, 1);
  return found;
}

/** The list at a dotted path the operator named (`fields: {<source>: {_list: _embedded.sites}}`), with its envelope. */
export function listAtPath(raw: unknown, dotted: string): ListCandidate | undefined {
  if (dotted === '' || dotted === '.') return Array.isArray(raw) ? { items: raw, path: '', envelope: {} } : undefined;
  let current = raw;
  let envelope: Record<string, unknown> = {};
  for (const key of dotted.split('.')) {
    if (!isRecord(current) || !Object.hasOwn(current, key)) return undefined;
    envelope = { ...envelope, ...current };
    current = current[key];
  }
  if (current === null) return { items: [], path: dotted, envelope };
  return Array.isArray(current) ? { items: current, path: dotted, envelope } : undefined;
}

/** The body with the list at `path` replaced by `items` (the pages of a list joined into the first). */
export function withListAt(raw: unknown, path: string, items: readonly unknown[]): unknown {
  if (path === '') return items;
  const [key = '', ...rest] = path.split('.');
  if (!isRecord(raw)) return raw;
  return { ...raw, [key]: rest.length === 0 ? items : withListAt(raw[key], rest.join('.'), items) };
}

/**
 * JSON:API ships related resources once, in `included`, and refers to them by `{type, id}`
 * in each resource's `relationships`: each identifier found there is given the resource's
 * own id and attributes, so a field of the related resource (the plan's name) is found
 * beside the relation's name. The body is returned as it is when it has no `included`.
 */
export function resolveIncluded(raw: unknown): unknown {
  if (!isRecord(raw) || !Array.isArray(raw.included) || raw.included.length === 0) return raw;
  const byKey = new Map<string, Readonly<Record<string, unknown>>>();
  for (const resource of raw.included) {
    if (isRecord(resource) && (typeof resource.id === 'string' || typeof resource.id === 'number') && typeof resource.type === 'string') {
      byKey.set(`${resource.type}\u0000${String(resource.id)}`, resource);
    }
  }
  const resolveIdentifier = (identifier: unknown): unknown => {
    if (!isRecord(identifier) || typeof identifier.type !== 'string') return identifier;
    const resource = byKey.get(`${identifier.type}\u0000${String(identifier.id)}`);
    if (resource === undefined) return identifier;
    return { id: identifier.id, ...(isRecord(resource.attributes) ? resource.attributes : {}) };
  };
  const resolveResource = (resource: unknown): unknown => {
    if (!isRecord(resource) || !isRecord(resource.relationships)) return resource;
    const relationships: Record<string, unknown> = {};
    for (const [name, relation] of Object.entries(resource.relationships)) {
      if (!isRecord(relation) || !('data' in relation)) {
        relationships[name] = relation;
        continue;
      }
      const data = relation.data;
      relationships[name] = { ...relation, data: Array.isArray(data) ? data.map(resolveIdentifier) : resolveIdentifier(data) };
    }
    return { ...resource, relationships };
  };
  const data = raw.data;
  return { ...raw, data: Array.isArray(data) ? data.map(resolveResource) : resolveResource(data) };
}

const PAIR_KEYS = ['key', 'name', 'k'];
const PAIR_VALUES = ['value', 'v', 'val'];
/** Keys of an item of a list of windows that say which window it is about. */
const WINDOW_KEYS = ['window', 'period', 'range', 'timeframe', 'span'];
/** Period words (words.ts) by their length, for a window written `P7D` or `604800`. */
const PERIOD_BY_SECONDS: Readonly<Record<number, string>> = { 3_600: '1h', 86_400: '24h', 604_800: '7d', 2_592_000: '30d' };

function pairOf(item: Readonly<Record<string, unknown>>): [string, unknown] | undefined {
  const keys = Object.keys(item);
  if (keys.length !== 2) return undefined;
  const name = PAIR_KEYS.find((k) => typeof item[k] === 'string');
  const value = PAIR_VALUES.find((k) => k in item);
  if (name === undefined || value === undefined) return undefined;
  return [item[name] as string, item[value]];
}

function windowOf(item: Readonly<Record<string, unknown>>, seconds: (text: string) => number | undefined): [string, Record<string, unknown>] | undefined {
  const key = WINDOW_KEYS.find((k) => typeof item[k] === 'string' || typeof item[k] === 'number');
  // A window and a few figures about it; anything larger is an item of its own (a check).
  if (key === undefined || Object.keys(item).length < 2 || Object.keys(item).length > 4) return undefined;
  const raw = item[key];
  const length = typeof raw === 'number' ? raw : seconds(String(raw));
  if (length === undefined) return undefined;
  const { [key]: _window, ...rest } = item;
  return [PERIOD_BY_SECONDS[length] ?? String(raw), rest];
}

/**
 * An item with its key/value pair lists (`[{key: "plan", value: "business"}]`) read as
 * objects (`{plan: "business"}`) and its lists of windows (`[{window: "P7D", ratio: 0.96}]`)
 * as objects keyed by the window (`{"7d": {ratio: 0.96}}`), at any depth. The item itself is
 * returned when it has neither, so items of the usual shapes cost a walk and no copy.
 */
export function pairsAsObjects(item: unknown, seconds: (text: string) => number | undefined, depth = 0): unknown {
  if (Array.isArray(item)) {
    if (item.length > 0 && item.every(isRecord)) {
      const pairs = item.map(pairOf);
      if (pairs.every((pair) => pair !== undefined)) return Object.fromEntries(pairs.map(([key, value]) => [key, pairsAsObjects(value, seconds, depth + 1)]));
      const windows = item.map((entry) => windowOf(entry, seconds));
      if (windows.every((window) => window !== undefined) && new Set(windows.map(([key]) => key)).size === windows.length) return Object.fromEntries(windows);
    }
    return item;
  }
  if (!isRecord(item) || depth > 5) return item;
  let copy: Record<string, unknown> | undefined;
  for (const key in item) {
    const value = item[key];
    if (value === null || typeof value !== 'object') continue;
    const read = pairsAsObjects(value, seconds, depth + 1);
    if (read !== value) (copy ??= { ...item })[key] = read;
  }
  return copy ?? item;
}
