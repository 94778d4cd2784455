import { MAX_PAGE_SIZE, PAGED_LISTS, type Parsed, type PagedList } from './layout.js';

/**
 * Pages of a list: which slice a request asks for (`page` + `per_page`, or an opaque
 * `cursor`), and the cursors the simulator gives out. A cursor holds the offset of the next
 * item, not a time or an id, so it stays valid while the clock moves and a client walking
 * the pages meets every item of the list exactly once.
 */

export interface PageRequest {
  /** Index of the page's first item. */
  readonly offset: number;
  readonly size: number;
  /** `per_page` as the client sent it, carried into the next link. */
  readonly perPage: number | undefined;
  /** `page` as the client sent it; checked against the total by `pageOf`. */
  readonly page: number | undefined;
}

export interface Page {
  readonly offset: number;
  readonly size: number;
  /** 1-based: the page the offset falls in. */
  readonly number: number;
  readonly total: number;
  /** At least 1: an empty list has one empty page. */
  readonly pageCount: number;
  readonly nextOffset: number | null;
  readonly prevOffset: number | null;
}

const POSITIVE_INTEGER = /^[1-9][0-9]*$/;

function single(name: string, raw: unknown): Parsed<string | undefined> {
  if (raw === undefined) return { ok: true, value: undefined };
  if (typeof raw === 'string') return { ok: true, value: raw };
  return { ok: false, message: `query parameter '${name}' must be given at most once` };
}

function positive(name: string, raw: string, max?: number): Parsed<number> {
  if (!POSITIVE_INTEGER.test(raw) || !Number.isSafeInteger(Number(raw))) {
    return { ok: false, message: `query parameter '${name}' must be a positive integer; got '${raw.slice(0, 40)}'` };
  }
  if (max !== undefined && Number(raw) > max) return { ok: false, message: `query parameter '${name}' must be at most ${max}; got ${raw}` };
  return { ok: true, value: Number(raw) };
}

/** The slice a request asks for: `cursor` or `page` (not both), and `per_page` (default `defaultSize`). */
export function parsePageRequest(list: PagedList, query: Record<string, unknown>, defaultSize: number): Parsed<PageRequest> {
  const pageRaw = single('page', query.page);
  if (!pageRaw.ok) return pageRaw;
  const perPageRaw = single('per_page', query.per_page);
  if (!perPageRaw.ok) return perPageRaw;
  const cursorRaw = single('cursor', query.cursor);
  if (!cursorRaw.ok) return cursorRaw;

  let perPage: number | undefined;
  if (perPageRaw.value !== undefined) {
    const parsed = positive('per_page', perPageRaw.value, MAX_PAGE_SIZE);
    if (!parsed.ok) return parsed;
    perPage = parsed.value;
  }
  const size = perPage ?? defaultSize;
  if (pageRaw.value !== undefined && cursorRaw.value !== undefined) {
    return { ok: false, message: "query parameters 'page' and 'cursor' exclude each other: give one" };
  }
  if (cursorRaw.value !== undefined) {
    const offset = decodeCursor(list, cursorRaw.value);
    if (!offset.ok) return offset;
    return { ok: true, value: { offset: offset.value, size, perPage, page: undefined } };
  }
  if (pageRaw.value !== undefined) {
    const page = positive('page', pageRaw.value);
    if (!page.ok) return page;
    return { ok: true, value: { offset: (page.value - 1) * size, size, perPage, page: page.value } };
  }
  return { ok: true, value: { offset: 0, size, perPage, page: undefined } };
}

/** The page a request gets from a list of `total` items; a `page` past the last one is an error. */
export function pageOf(request: PageRequest, total: number): Parsed<Page> {
  const { size } = request;
  const pageCount = Math.max(1, Math.ceil(total / size));
  if (request.page !== undefined && request.page > pageCount) {
    return { ok: false, message: `query parameter 'page' is beyond the last page, ${pageCount} (${total} items, ${size} a page); got ${request.page}` };
  }
  // A cursor past the end (the list shrank since it was given out) reads an empty last page.
  const offset = Math.min(request.offset, total);
  return {
    ok: true,
    value: {
      offset,
      size,
      number: Math.floor(offset / size) + 1,
      total,
      pageCount,
      nextOffset: offset + size < total ? offset + size : null,
      prevOffset: offset > 0 ? Math.max(0, offset - size) : null,
    },
  };
}

/** The whole list as one page, for a layout without paging. */
export function wholeList(total: number): Page {
  return { offset: 0, size: total, number: 1, total, pageCount: 1, nextOffset: null, prevOffset: null };
}

/** An opaque cursor: base64url of `{"l": <list>, "o": <offset>}`. */
export function encodeCursor(list: PagedList, offset: number): string {
  return Buffer.from(JSON.stringify({ l: list, o: offset })).toString('base64url');
}

export function decodeCursor(list: PagedList, raw: string): Parsed<number> {
  const bad = { ok: false as const, message: `query parameter 'cursor' is not a cursor this API gave out; got '${raw.slice(0, 60)}'. Start again without it` };
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(raw)) return bad;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return bad;
  }
  if (typeof decoded !== 'object' || decoded === null) return bad;
  const { l, o } = decoded as { l?: unknown; o?: unknown };
  if (typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0 || !(PAGED_LISTS as readonly unknown[]).includes(l)) return bad;
  // Only the exact text the simulator wrote: a cursor edited by hand is not one it gave out.
  if (encodeCursor(l as PagedList, o) !== raw) return bad;
  if (l !== list) return { ok: false, message: `query parameter 'cursor' belongs to another list (${String(l)}), not to ${list}` };
  return { ok: true, value: o };
}
