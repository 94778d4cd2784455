import { isRecord } from '../tolerant/values.js';

/**
 * How a page of a list says there is another one, in the ways REST APIs commonly do: an RFC
 * 8288 `Link` header with `rel="next"`, HAL's `_links.next.href`, JSON:API's `links.next`,
 * or fields in the body or under `meta`/`pagination`/`paging`/`page_info`/`result_info` that
 * carry a next URL, a cursor, or a page number with the number of pages. Also what a page
 * says of the whole list (its total, `has_more`), so that a list read short is known to be.
 */

export type NextPage =
  /** Where the next page is: an absolute URL, or relative to the page's own. */
  | { readonly kind: 'url'; readonly url: string; readonly via: string }
  /** The page says there is more, but not how to get it. */
  | { readonly kind: 'more'; readonly via: string }
  | { readonly kind: 'none' };

/** Objects that carry paging fields beside the list. */
const HOLDERS = ['', 'meta', 'pagination', 'paging', 'page_info', 'pageInfo', 'result_info', 'resultInfo', 'links', '_links', 'cursor', 'page'];
const NEXT_URL_KEYS = ['next', 'next_url', 'nextUrl', 'next_page_url', 'nextPageUrl', 'next_link', 'nextLink', '@odata.nextLink', 'next_href', 'nextHref'];
/** Cursor keys, each with the query parameter the next request carries it in. */
const CURSOR_KEYS: readonly (readonly [string, string])[] = [
  ['next_cursor', 'cursor'],
  ['nextCursor', 'cursor'],
  ['next_page_token', 'page_token'],
  ['nextPageToken', 'pageToken'],
  ['next_token', 'next_token'],
  ['nextToken', 'nextToken'],
  ['continuation', 'continuation'],
  ['continuation_token', 'continuation_token'],
  ['endCursor', 'after'],
  ['after', 'after'],
];
const MORE_KEYS = ['has_more', 'hasMore', 'has_next', 'hasNext', 'hasNextPage', 'has_next_page', 'more'];
const PAGE_KEYS = ['page', 'current_page', 'currentPage', 'page_number', 'pageNumber', 'number'];
const PAGES_KEYS = ['total_pages', 'totalPages', 'pages', 'last_page', 'lastPage', 'page_count', 'pageCount'];
const NEXT_PAGE_KEYS = ['next_page', 'nextPage'];
const TOTAL_KEYS = ['total', 'total_count', 'totalCount', 'total_items', 'totalItems', 'total_results', 'totalResults', 'totalElements', 'total_entries', 'totalEntries', 'count_total'];

export interface PageView {
  readonly body: unknown;
  /** Response headers, lower-case names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The URL the page was asked at. */
  readonly url: string;
}

/** The `rel="next"` target of an RFC 8288 Link header, if any. */
export function linkHeaderNext(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const match of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+(?:=(?:"[^"]*"|[^;,]*))?)*)/g)) {
    const params = match[2] ?? '';
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/i.exec(params);
    const rels = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (rels.includes('next')) return match[1];
  }
  return undefined;
}

/** Every key a page's body may say something of its paging by: a holder of paging fields, or one of the fields. */
const PAGING_KEYS = new Set([...HOLDERS.filter((key) => key !== ''), ...NEXT_URL_KEYS, ...CURSOR_KEYS.map(([key]) => key), ...MORE_KEYS, ...PAGE_KEYS, ...PAGES_KEYS, ...NEXT_PAGE_KEYS, ...TOTAL_KEYS]);

/** The objects of a page that may hold paging fields, each with the prefix of their paths (`meta.`). */
function holders(body: unknown): (readonly [string, Readonly<Record<string, unknown>>])[] {
  if (!isRecord(body)) return [];
  // Most pages are the whole list and say nothing of paging: one pass over their keys tells,
  // instead of a lookup of every paging key in every holder.
  let paging = false;
  for (const key in body) {
    if (PAGING_KEYS.has(key)) {
      paging = true;
      break;
    }
  }
  if (!paging) return [];
  const found: (readonly [string, Readonly<Record<string, unknown>>])[] = [];
  for (const key of HOLDERS) {
    const holder = key === '' ? body : body[key];
    if (isRecord(holder)) found.push([key === '' ? '' : `${key}.`, holder]);
  }
  return found;
}

const hrefOf = (value: unknown): string | undefined => {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (isRecord(value) && typeof value.href === 'string' && value.href.trim() !== '') return value.href.trim();
  return undefined;
};

const wholeNumber = (value: unknown): number | undefined => {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  return Number.isSafeInteger(number) && number >= 0 ? number : undefined;
};

/** The page's URL with one query parameter set. */
export function withQuery(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set(name, value);
  return parsed.toString();
}

/** The value at a dotted path, in the body or in the object that holds the list. */
function atPath(body: unknown, dotted: string): unknown {
  let current = body;
  for (const key of dotted.split('.')) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** A next link, cursor or page number the operator placed (`fields: {<source>: {_next: paging.cursor}}`). */
function placedNext(page: PageView, dotted: string): NextPage {
  const value = atPath(page.body, dotted);
  const via = `${dotted} (configured)`;
  if (value === undefined || value === null || value === false || value === '') return { kind: 'none' };
  const href = hrefOf(value);
  if (href !== undefined && /^(https?:\/\/|\/|\?)/i.test(href)) return { kind: 'url', url: new URL(href, page.url).toString(), via };
  const number = wholeNumber(value);
  if (number !== undefined && typeof value === 'number') return { kind: 'url', url: withQuery(page.url, 'page', String(number)), via };
  if (href !== undefined) return { kind: 'url', url: withQuery(page.url, 'cursor', href), via };
  return { kind: 'none' };
}

/** Where the page after this one is, and how the page said so. */
export function nextPageOf(page: PageView, placed?: string): NextPage {
  if (placed !== undefined) return placedNext(page, placed);
  const link = linkHeaderNext(page.headers.link);
  if (link !== undefined) return { kind: 'url', url: new URL(link, page.url).toString(), via: 'Link header' };
  const found = holders(page.body);
  for (const [prefix, holder] of found) {
    for (const key of NEXT_URL_KEYS) {
      const href = hrefOf(holder[key]);
      // `next: true` or a page number under `next` is no link: left to the checks below.
      if (href !== undefined && !/^\d+$/.test(href)) return { kind: 'url', url: new URL(href, page.url).toString(), via: `${prefix}${key}` };
    }
  }
  for (const [prefix, holder] of found) {
    for (const [key, parameter] of CURSOR_KEYS) {
      const value = holder[key];
      if ((typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value))) {
        // A cursor beside `has_more: false` (or `hasNextPage: false`) points past the end.
        if (MORE_KEYS.some((more) => holder[more] === false)) return { kind: 'none' };
        return { kind: 'url', url: withQuery(page.url, parameter, String(value)), via: `${prefix}${key}` };
      }
    }
  }
  for (const [prefix, holder] of found) {
    const nextKey = NEXT_PAGE_KEYS.find((key) => wholeNumber(holder[key]) !== undefined);
    const next = nextKey === undefined ? undefined : wholeNumber(holder[nextKey]);
    if (next !== undefined && next > 0) return { kind: 'url', url: withQuery(page.url, 'page', String(next)), via: `${prefix}${nextKey ?? ''}` };
    const current = PAGE_KEYS.map((key) => wholeNumber(holder[key])).find((n) => n !== undefined);
    const pages = PAGES_KEYS.map((key) => wholeNumber(holder[key])).find((n) => n !== undefined);
    if (current !== undefined && pages !== undefined && current < pages) return { kind: 'url', url: withQuery(page.url, 'page', String(current + 1)), via: `${prefix}page of total_pages` };
  }
  for (const [prefix, holder] of found) {
    const more = MORE_KEYS.find((key) => holder[key] === true);
    if (more !== undefined) return { kind: 'more', via: `${prefix}${more}` };
  }
  return { kind: 'none' };
}

/** The number of items the page says the whole list has, when it says. */
export function announcedTotal(body: unknown): number | undefined {
  for (const [, holder] of holders(body)) {
    for (const key of TOTAL_KEYS) {
      const total = wholeNumber(holder[key]);
      if (total !== undefined) return total;
    }
  }
  return undefined;
}
