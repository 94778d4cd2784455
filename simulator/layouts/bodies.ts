import type { Page } from './paging.js';

/**
 * The envelopes of the three layouts, around items the shape set has already encoded:
 * HAL (draft-kelly-json-hal), JSON:API 1.1 and a vendor's result wrapper (`success`,
 * `errors`, `messages`, `result`, `result_info`). Nothing here knows the resources; the
 * lists (lists.ts) say what each item is, its id, its links and its relations.
 */

/** A relation of a resource to others: HAL links and JSON:API relationships. */
export interface Relation {
  /** Type of the related resources (`hosts`, `plans`). */
  readonly type: string;
  /** Empty: no related resource (an account-wide alert rule); the relation is then left out. */
  readonly ids: readonly string[];
  /** To-many (a list of identifiers) or to-one. */
  readonly many: boolean;
  /** Fields of the item that state the relation inline; HAL (when it links) and JSON:API leave them out. */
  readonly replaces: readonly string[];
  /** Paths of the related resources, one per id: the relation is a HAL link too. Absent: HAL keeps the fields inline. */
  readonly halHrefs?: readonly string[];
}

export interface Resource {
  readonly id: string;
  /** The item as the selected shape set encodes it. */
  readonly value: Readonly<Record<string, unknown>>;
  /** The field of `value` that holds the id; JSON:API moves it to `id`. */
  readonly idField?: string;
  /** Path of the resource (HAL `self`). */
  readonly self: string;
  /** More HAL links: relation name to path. */
  readonly links?: Readonly<Record<string, string>>;
  readonly relations?: Readonly<Record<string, Relation>>;
}

export interface ResourceKind {
  /** Plural, snake_case: the HAL `_embedded` key and the JSON:API `type`. */
  readonly type: string;
  /** An attribute named `type` or `id` becomes `<singular>_type` / `<singular>_id` in JSON:API, where both names are reserved. */
  readonly singular: string;
}

export interface JsonApiResource {
  id: string;
  type: string;
  attributes: Record<string, unknown>;
  relationships?: Record<string, { data: { type: string; id: string } | { type: string; id: string }[] }>;
}

export interface ListAnswer {
  readonly kind: ResourceKind;
  /** The items of this page. */
  readonly items: readonly Resource[];
  readonly page: Page;
  /** The request itself: path with query (relative) and absolute URL. */
  readonly self: { readonly path: string; readonly url: string };
  /** The next page's link in the form this layout gives it (relative for HAL, absolute for JSON:API); none on the last page. */
  readonly next: string | undefined;
  /** The JSON:API resource object of a related resource, for `included`; undefined leaves it out. */
  readonly related?: (type: string, id: string) => JsonApiResource | undefined;
}

const href = (path: string): { href: string } => ({ href: path });

function without(value: Readonly<Record<string, unknown>>, fields: ReadonlySet<string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([key]) => !fields.has(key)));
}

export function halItem(resource: Resource): Record<string, unknown> {
  const relations = Object.entries(resource.relations ?? {}).filter(([, r]) => r.halHrefs !== undefined);
  const links: Record<string, unknown> = { self: href(resource.self) };
  for (const [name, path] of Object.entries(resource.links ?? {})) links[name] = href(path);
  for (const [name, relation] of relations) {
    const hrefs = relation.halHrefs ?? [];
    if (hrefs.length === 0) continue;
    links[name] = relation.many ? hrefs.map(href) : href(hrefs[0]!);
  }
  return { ...without(resource.value, new Set(relations.flatMap(([, r]) => r.replaces))), _links: links };
}

export function jsonApiResource(kind: ResourceKind, resource: Resource): JsonApiResource {
  const relations = Object.entries(resource.relations ?? {});
  const dropped = new Set([...(resource.idField ? [resource.idField] : []), ...relations.flatMap(([, r]) => r.replaces)]);
  const attributes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resource.value)) {
    if (dropped.has(key)) continue;
    attributes[key === 'type' || key === 'id' ? `${kind.singular}_${key}` : key] = value;
  }
  const relationships: NonNullable<JsonApiResource['relationships']> = {};
  for (const [name, relation] of relations) {
    if (relation.ids.length === 0) continue;
    const identifiers = relation.ids.map((id) => ({ type: relation.type, id }));
    relationships[name] = { data: relation.many ? identifiers : identifiers[0]! };
  }
  return { id: resource.id, type: kind.type, attributes, ...(Object.keys(relationships).length > 0 ? { relationships } : {}) };
}

/** Related resources of the given resources, each once, in the order first named. */
function included(resources: readonly Resource[], related: ListAnswer['related']): JsonApiResource[] {
  if (!related) return [];
  const seen = new Set<string>();
  const out: JsonApiResource[] = [];
  for (const resource of resources) {
    for (const relation of Object.values(resource.relations ?? {})) {
      for (const id of relation.ids) {
        const key = `${relation.type}/${id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const object = related(relation.type, id);
        if (object) out.push(object);
      }
    }
  }
  return out;
}

export const JSONAPI_VERSION = { version: '1.1' } as const;
export const JSONAPI_MEDIA_TYPE = 'application/vnd.api+json';

/** `{_embedded: {<type>: [...]}, _links: {self, next?}, total, page_size}`. */
export function halList(answer: ListAnswer): Record<string, unknown> {
  return {
    _embedded: { [answer.kind.type]: answer.items.map(halItem) },
    _links: { self: href(answer.self.path), ...(answer.next === undefined ? {} : { next: href(answer.next) }) },
    total: answer.page.total,
    page_size: answer.page.size,
  };
}

/** `{jsonapi, data: [...], links: {self, next?}, meta: {total}, included?}`. */
export function jsonApiList(answer: ListAnswer): Record<string, unknown> {
  const extra = included(answer.items, answer.related);
  return {
    jsonapi: JSONAPI_VERSION,
    data: answer.items.map((item) => jsonApiResource(answer.kind, item)),
    links: { self: answer.self.url, ...(answer.next === undefined ? {} : { next: answer.next }) },
    meta: { total: answer.page.total },
    ...(extra.length > 0 ? { included: extra } : {}),
  };
}

const SUCCESS = () => ({ success: true, errors: [], messages: [] });

/** `{success, errors, messages, result: [...], result_info: {page, per_page, count, total_count, total_pages}}`. */
export function envelopeList(answer: ListAnswer): Record<string, unknown> {
  const { page } = answer;
  return {
    ...SUCCESS(),
    result: answer.items.map((item) => item.value),
    result_info: { page: page.number, per_page: page.size, count: answer.items.length, total_count: page.total, total_pages: page.pageCount },
  };
}

/** One resource: the item with `_links`. */
export function halObject(resource: Resource): Record<string, unknown> {
  return halItem(resource);
}

/** One resource: `{jsonapi, data: {id, type, attributes, relationships?}, included?}`. */
export function jsonApiObject(kind: ResourceKind, resource: Resource, related?: ListAnswer['related']): Record<string, unknown> {
  const extra = included([resource], related);
  return { jsonapi: JSONAPI_VERSION, data: jsonApiResource(kind, resource), ...(extra.length > 0 ? { included: extra } : {}) };
}

/** One resource: `{success, errors, messages, result: {...}}`. */
export function envelopeObject(value: unknown): Record<string, unknown> {
  return { ...SUCCESS(), result: value };
}
