import { listAtPath, withListAt, type ListCandidate } from './locate.js';
import { announcedTotal, nextPageOf, type PageView } from './pages.js';

/**
 * Reading a list to its last page: every next page the body or the headers announce is asked
 * for (through the caller's `fetch`, so each page is a request of the budget like any other),
 * its items are joined to the first page's, and whatever stops the reading short (the page
 * cap, a link to another origin, a link seen before, a failed page, "more" with no way to it,
 * fewer items than the total announced) is said, never passed off as the whole list.
 */

export interface FollowOptions {
  /** Where the list is in a page (the decoder's own choice, so the pages join where it reads). */
  readonly locate: (body: unknown) => ListCandidate | undefined;
  readonly fetch: (url: string) => Promise<PageView>;
  /** Next links are followed on this origin only: the key must never travel to another host. */
  readonly origin: string;
  readonly maxPages: number;
  /** The operator's path of the next link or cursor, when named. */
  readonly placedNext?: string | undefined;
  /** What a failed page is said as; undefined rethrows (an abort ends the whole request). */
  readonly failure: (error: unknown) => string | undefined;
}

export interface ListRead {
  /** The first page's body with every page's items in its list. */
  readonly body: unknown;
  readonly pages: number;
  /** Where the list was in the first page (`''` for the body itself); undefined when no list was found. */
  readonly path: string | undefined;
  /** Items read over every page; undefined when no list was found. */
  readonly items: number | undefined;
  /** The total the first page announced, when it did. */
  readonly announced: number | undefined;
  /** How the pages said where the next one was (`Link header`, `_links.next`, `next_cursor`). */
  readonly via: string | undefined;
  /** Why the list is known to be short; undefined when it was read to its end. */
  readonly incomplete: string | undefined;
}

export async function followPages(first: PageView, options: FollowOptions): Promise<ListRead> {
  let next = nextPageOf(first, options.placedNext);
  const announced = announcedTotal(first.body);
  // One page that announces neither more nor a total is the whole list: its decoder finds it (nearly every poll).
  if (next.kind === 'none' && announced === undefined) return { body: first.body, pages: 1, path: undefined, items: undefined, announced, via: undefined, incomplete: undefined };
  const found = options.locate(first.body);
  if (found === undefined) {
    const incomplete = next.kind === 'none' ? undefined : `the body announces more (${next.via}) but holds no list to join the pages to`;
    return { body: first.body, pages: 1, path: undefined, items: undefined, announced, via: next.kind === 'none' ? undefined : next.via, incomplete };
  }
  const items: unknown[] = [...found.items];
  const seen = new Set([first.url]);
  let pages = 1;
  let incomplete: string | undefined;
  let via: string | undefined;
  while (next.kind === 'url') {
    via ??= next.via;
    const url = next.url;
    if (new URL(url).origin !== options.origin) {
      incomplete = `the next page (${next.via}) is on another origin, ${new URL(url).origin}, and is not followed`;
      break;
    }
    if (seen.has(url)) {
      incomplete = `the next page (${next.via}) repeats a page already read`;
      break;
    }
    if (pages >= options.maxPages) {
      incomplete = `stopped at the cap of ${options.maxPages} pages per list (max_pages_per_list)`;
      break;
    }
    seen.add(url);
    let page: PageView;
    try {
      page = await options.fetch(url);
    } catch (error) {
      const said = options.failure(error);
      if (said === undefined) throw error;
      incomplete = `page ${pages + 1} failed: ${said}`;
      break;
    }
    pages++;
    const list = listAtPath(page.body, found.path) ?? options.locate(page.body);
    if (list === undefined) {
      incomplete = `page ${pages} holds no list`;
      break;
    }
    for (const item of list.items) items.push(item);
    next = nextPageOf(page, options.placedNext);
  }
  if (incomplete === undefined && next.kind === 'more') incomplete = `the last page says there is more (${next.via}) but gives no link, cursor or page number`;
  if (incomplete === undefined && announced !== undefined && items.length < announced) incomplete = `${items.length} of the ${announced} items announced were read`;
  return { body: pages === 1 ? first.body : withListAt(first.body, found.path, items), pages, path: found.path, items: items.length, announced, via, incomplete };
}
