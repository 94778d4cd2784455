import { describe, expect, it } from 'vitest';
import { followPages, type FollowOptions } from './follow.js';
import { listCandidates, pairsAsObjects, resolveIncluded, withListAt } from './locate.js';
import { announcedTotal, linkHeaderNext, nextPageOf, type PageView } from './pages.js';
import { durationText } from '../fields/kinds.js';

const URL0 = 'https://api.example.com/api/v2/websites';
const page = (body: unknown, headers: Record<string, string> = {}, url = URL0): PageView => ({ body, headers, url });

describe('linkHeaderNext', () => {
  it.each<[string, string | undefined, string | undefined]>([
    ['one next link', '<https://api.example.com/api/v2/websites?page=2>; rel="next"', 'https://api.example.com/api/v2/websites?page=2'],
    ['next among others, unquoted rel', '<https://x/p1>; rel=prev, <https://x/p3>; rel=next, <https://x/p9>; rel="last"', 'https://x/p3'],
    ['several relation types in one rel', '<https://x/p2>; title="more"; rel="next last"', 'https://x/p2'],
    ['no next', '<https://x/p1>; rel="prev"', undefined],
    ['no header', undefined, undefined],
  ])('%s', (_name, header, want) => {
    expect(linkHeaderNext(header)).toBe(want);
  });
});

describe('nextPageOf', () => {
  it.each<[string, PageView, string | undefined]>([
    ['Link header', page({ websites: [] }, { link: '</api/v2/websites?page=2>; rel="next"' }), 'https://api.example.com/api/v2/websites?page=2'],
    ['HAL _links.next.href', page({ _embedded: { websites: [] }, _links: { next: { href: '/api/v2/websites?page=2' } } }), 'https://api.example.com/api/v2/websites?page=2'],
    ['JSON:API links.next', page({ data: [], links: { next: 'https://api.example.com/api/v2/websites?page[number]=2' } }), 'https://api.example.com/api/v2/websites?page[number]=2'],
    ['next_url in meta', page({ items: [], meta: { next_url: '/api/v2/websites?offset=50' } }), 'https://api.example.com/api/v2/websites?offset=50'],
    ['cursor beside the list', page({ items: [], next_cursor: 'abc', has_more: true }), 'https://api.example.com/api/v2/websites?cursor=abc'],
    ['page token under pagination', page({ items: [], pagination: { next_page_token: 't2' } }), 'https://api.example.com/api/v2/websites?page_token=t2'],
    ['page of total_pages in result_info', page({ result: [], result_info: { page: 1, per_page: 3, total_pages: 4 } }), 'https://api.example.com/api/v2/websites?page=2'],
    ['GraphQL-like pageInfo', page({ nodes: [], pageInfo: { endCursor: 'Y3Vy', hasNextPage: true } }), 'https://api.example.com/api/v2/websites?after=Y3Vy'],
  ])('%s', (_name, view, want) => {
    const next = nextPageOf(view);
    expect(next.kind).toBe('url');
    expect(next.kind === 'url' ? next.url : undefined).toBe(want);
  });

  it.each<[string, PageView, string]>([
    ['the last page of result_info', page({ result: [], result_info: { page: 4, total_pages: 4 } }), 'none'],
    ['a cursor with has_more false', page({ items: [], next_cursor: 'abc', has_more: false }), 'none'],
    ['JSON:API links.next null', page({ data: [], links: { self: '/x', next: null } }), 'none'],
    ['has_more with no way on', page({ items: [], has_more: true }), 'more'],
    ['a plain list', page({ websites: [], total: 0 }), 'none'],
  ])('%s: %s', (_name, view, want) => {
    expect(nextPageOf(view).kind).toBe(want);
  });

  it('reads the next link, cursor or page number at the path the operator named', () => {
    const body = { things: [], paging: { token: 'z9' }, nav: { forward: '/api/v2/websites?p=2' }, at: { n: 2 } };
    const at = (path: string) => {
      const next = nextPageOf(page(body), path);
      return next.kind === 'url' ? next.url : next.kind;
    };
    expect(at('paging.token')).toBe(`${URL0}?cursor=z9`);
    expect(at('nav.forward')).toBe(`${URL0}?p=2`);
    expect(at('at.n')).toBe(`${URL0}?page=2`);
    expect(at('nowhere')).toBe('none');
  });

  it('finds the total announced', () => {
    expect(announcedTotal({ hosts: [], total: 12 })).toBe(12);
    expect(announcedTotal({ data: [], meta: { total: '7' } })).toBe(7);
    expect(announcedTotal({ result: [], result_info: { count: 3, total_count: 9 } })).toBe(9);
    expect(announcedTotal({ items: [] })).toBeUndefined();
  });
});

describe('locating lists', () => {
  it('lists every list of objects, skipping the envelope lists', () => {
    const body = { success: true, errors: [{ code: 1 }], messages: [], result: { page: { items: [{ id: 1 }] } }, other: [{ id: 2 }] };
    expect(listCandidates(body).map((c) => c.path)).toEqual(['result.page.items', 'other']);
  });

  it('puts the page items back where the list was', () => {
    expect(withListAt({ _embedded: { sites: [1] }, total: 3 }, '_embedded.sites', [1, 2, 3])).toEqual({ _embedded: { sites: [1, 2, 3] }, total: 3 });
    expect(withListAt([1], '', [1, 2])).toEqual([1, 2]);
  });

  it('puts JSON:API included resources in place of their identifiers', () => {
    const body = {
      data: [{ id: '1', type: 'accounts', relationships: { plan: { data: { type: 'plans', id: 'b' } }, hosts: { data: [{ type: 'hosts', id: 'h1' }, { type: 'hosts', id: 'h9' }] } } }],
      included: [
        { type: 'plans', id: 'b', attributes: { name: 'business' } },
        { type: 'hosts', id: 'h1', attributes: { hostname: 'web-1' } },
      ],
    };
    const resolved = resolveIncluded(body) as { data: { relationships: Record<string, { data: unknown }> }[] };
    expect(resolved.data[0]?.relationships.plan?.data).toEqual({ id: 'b', name: 'business' });
    expect(resolved.data[0]?.relationships.hosts?.data).toEqual([{ id: 'h1', hostname: 'web-1' }, { type: 'hosts', id: 'h9' }]);
  });

  it.each<[string, unknown, unknown]>([
    ['key/value pairs', { settings: [{ key: 'plan', value: 'business' }, { key: 'hosts', value: 10 }] }, { settings: { plan: 'business', hosts: 10 } }],
    ['name/value pairs at the top', [{ name: 'plan', value: 'pro' }], { plan: 'pro' }],
    ['windows', { uptime: [{ window: 'P7D', ratio: 0.96 }, { window: '30d', ratio: 0.9 }, { window: 'PT24H', ratio: 1 }] }, { uptime: { '7d': { ratio: 0.96 }, '30d': { ratio: 0.9 }, '24h': { ratio: 1 } } }],
    ['a list of items is left alone', { checks: [{ id: 1, success: true, status_code: 200 }] }, { checks: [{ id: 1, success: true, status_code: 200 }] }],
    ['windows named twice are left alone', { uptime: [{ window: '7d', ratio: 1 }, { window: '7d', ratio: 0 }] }, { uptime: [{ window: '7d', ratio: 1 }, { window: '7d', ratio: 0 }] }],
  ])('reads %s as objects', (_name, item, want) => {
    expect(pairsAsObjects(item, durationText)).toEqual(want);
  });

  it('returns an item without pair lists as it is, uncopied', () => {
    const item = { id: 1, tags: ['a'], stats: { day: { uptime: 1 } } };
    expect(pairsAsObjects(item, durationText)).toBe(item);
  });
});

describe('followPages', () => {
  const ORIGIN = 'https://api.example.com';
  /** Pages of `{items, next}` served from a table by URL; every fetch is recorded. */
  function site(pages: Record<string, unknown>, failing: readonly string[] = []) {
    const asked: string[] = [];
    const options = (overrides: Partial<FollowOptions> = {}): FollowOptions => ({
      locate: (body) => listCandidates(body)[0],
      fetch: (url) => {
        asked.push(url);
        if (failing.includes(url)) return Promise.reject(new Error('HTTP 503'));
        const body = pages[url];
        return body === undefined ? Promise.reject(new Error(`no page ${url}`)) : Promise.resolve(page(body, {}, url));
      },
      origin: ORIGIN,
      maxPages: 50,
      failure: (error) => (error instanceof Error ? error.message : undefined),
      ...overrides,
    });
    return { asked, options };
  }
  const p = (n: number) => `${URL0}?page=${n}`;

  it('joins every page into the first and says how it went on', async () => {
    const { asked, options } = site({ [p(2)]: { items: [{ id: 3 }, { id: 4 }], next: p(3) }, [p(3)]: { items: [{ id: 5 }] } });
    const read = await followPages(page({ items: [{ id: 1 }, { id: 2 }], next: p(2), total: 5 }), options());
    expect(read.body).toEqual({ items: [1, 2, 3, 4, 5].map((id) => ({ id })), next: p(2), total: 5 });
    expect(read).toMatchObject({ pages: 3, items: 5, announced: 5, via: 'next', incomplete: undefined });
    expect(asked).toEqual([p(2), p(3)]);
  });

  it('never follows a link to another origin', async () => {
    const { asked, options } = site({});
    const read = await followPages(page({ items: [{ id: 1 }], next: 'https://evil.example.net/api/v2/websites?page=2' }), options());
    expect(asked).toEqual([]);
    expect(read.incomplete).toMatch(/another origin, https:\/\/evil\.example\.net/);
    expect(read.items).toBe(1);
  });

  it('stops at a link it has seen, and at the page cap, and says so', async () => {
    const loop = site({ [p(2)]: { items: [{ id: 2 }], next: p(2) } });
    const looped = await followPages(page({ items: [{ id: 1 }], next: p(2) }), loop.options());
    expect(looped.incomplete).toMatch(/repeats a page/);
    expect(loop.asked).toEqual([p(2)]);

    const endless = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [p(i + 2), { items: [{ id: i + 2 }], next: p(i + 3) }]));
    const capped = site(endless);
    const read = await followPages(page({ items: [{ id: 1 }], next: p(2) }), capped.options({ maxPages: 4 }));
    expect(read).toMatchObject({ pages: 4, items: 4 });
    expect(read.incomplete).toMatch(/cap of 4 pages/);
  });

  it('keeps what was read when a later page fails, and says which', async () => {
    const { options } = site({ [p(2)]: { items: [{ id: 2 }], next: p(3) } }, [p(3)]);
    const read = await followPages(page({ items: [{ id: 1 }], next: p(2) }), options());
    expect(read).toMatchObject({ pages: 2, items: 2, incomplete: 'page 3 failed: HTTP 503' });
  });

  it('rethrows a failure the caller does not turn into a short list (an abort)', async () => {
    const { options } = site({}, [p(2)]);
    await expect(followPages(page({ items: [{ id: 1 }], next: p(2) }), options({ failure: () => undefined }))).rejects.toThrow('HTTP 503');
  });

  it('says a list is short when it has fewer items than announced, or more with no way to them', async () => {
    const { options } = site({});
    expect((await followPages(page({ hosts: [{ id: 1 }], total: 3 }), options())).incomplete).toBe('1 of the 3 items announced were read');
    expect((await followPages(page({ hosts: [{ id: 1 }], meta: { has_more: true } }), options())).incomplete).toMatch(/says there is more \(meta\.has_more\)/);
    expect((await followPages(page({ hosts: [{ id: 1 }], total: 1 }), options())).incomplete).toBeUndefined();
  });
});
