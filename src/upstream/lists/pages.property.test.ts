import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordingGate } from '../../../test/support/test-server.js';
import { monitoringCalls } from '../../../test/support/monitoring-calls.js';
import type { Transport } from '../http/transport.js';
import { MonitoringClient } from '../monitoring/client.js';

/**
 * Issue 27's promise about pages, as a property: a list cut into pages of random sizes, in a
 * random envelope, its pages announcing the next in a random one of the common ways, is read
 * whole: every item once, in order, no page asked twice, and not said to be short. The ways
 * are written here from the public conventions (RFC 8288, HAL, JSON:API, cursors, page numbers).
 */

const BASE = 'http://paged.test/api/v2';
const ENVELOPES = ['named', 'hal', 'jsonapi', 'result', 'bare-items'] as const;
const NEXTS = ['link-header', 'hal-link', 'jsonapi-link', 'meta-url', 'cursor', 'page-of-pages', 'next-page-number', 'token'] as const;
type Envelope = (typeof ENVELOPES)[number];
type Next = (typeof NEXTS)[number];

const site = (id: number) => ({ id, name: `site-${id}`, url: `https://s${id}.example.com`, uptime_pct_24h: 99.5 });

function pageBody(items: readonly unknown[], envelope: Envelope, total: number): Record<string, unknown> {
  switch (envelope) {
    case 'named':
      return { websites: items, total };
    case 'hal':
      return { _embedded: { websites: items }, _links: { self: { href: '/api/v2/websites' } }, total };
    case 'jsonapi':
      return { data: items.map((item) => ({ id: String((item as { id: number }).id), type: 'websites', attributes: item })), meta: { total } };
    case 'result':
      return { success: true, errors: [], messages: [], result: items, result_info: { total_count: total } };
    case 'bare-items':
      return { items };
  }
}

/** The page with its next announced; `index` is 0-based, `key` is how the next page is asked for. */
function announce(body: Record<string, unknown>, next: Next, index: number, last: boolean): { body: Record<string, unknown>; headers: Record<string, string> } {
  const nextPage = index + 2;
  const url = `/api/v2/websites?page=${nextPage}`;
  if (last) return next === 'page-of-pages' ? { body: { ...body, meta: { ...(body.meta as object), page: index + 1, total_pages: index + 1 } }, headers: {} } : { body, headers: {} };
  switch (next) {
    case 'link-header':
      return { body, headers: { link: `<${BASE}/websites?page=${nextPage}>; rel="next", <${BASE}/websites?page=1>; rel="first"` } };
    case 'hal-link':
      return { body: { ...body, _links: { next: { href: url } } }, headers: {} };
    case 'jsonapi-link':
      return { body: { ...body, links: { next: `${BASE}/websites?page=${nextPage}` } }, headers: {} };
    case 'meta-url':
      return { body: { ...body, pagination: { next_url: url } }, headers: {} };
    case 'cursor':
      return { body: { ...body, next_cursor: `c${nextPage}`, has_more: true }, headers: {} };
    case 'page-of-pages':
      return { body: { ...body, meta: { ...(body.meta as object), page: index + 1, total_pages: 99 } }, headers: {} };
    case 'next-page-number':
      return { body: { ...body, next_page: nextPage }, headers: {} };
    case 'token':
      return { body: { ...body, paging: { nextPageToken: `t${nextPage}` } }, headers: {} };
  }
}

/** Which page a request asks for, whichever way it was announced. */
function pageAsked(url: URL): number {
  const token = url.searchParams.get('cursor') ?? url.searchParams.get('pageToken');
  return token === null ? Number(url.searchParams.get('page') ?? '1') : Number(token.slice(1));
}

describe('a list cut into random pages, in a random envelope, announced in random ways', () => {
  it('is read whole, every item once and in order, and not said to be short', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(...ENVELOPES),
        fc.constantFrom(...NEXTS),
        async (sizes, envelope, next) => {
          const all = Array.from({ length: sizes.reduce((a, b) => a + b, 0) }, (_, i) => site(i + 1));
          const pages: { items: unknown[] }[] = [];
          let from = 0;
          for (const size of sizes) {
            pages.push({ items: all.slice(from, from + size) });
            from += size;
          }
          const asked: number[] = [];
          const transport: Transport = {
            get(raw) {
              const index = pageAsked(new URL(raw)) - 1;
              asked.push(index + 1);
              const { body, headers } = announce(pageBody(pages[index]?.items ?? [], envelope, all.length), next, index, index === pages.length - 1);
              return Promise.resolve({ status: 200, headers: { 'content-type': 'application/json', ...headers }, body: Buffer.from(JSON.stringify(body)) });
            },
          };
          const monitoring = monitoringCalls(new MonitoringClient({ baseUrl: BASE, apiKey: 'k', transport, gate: recordingGate() }), {});
          const decoded = await monitoring.websites();
          expect(decoded.value.websites.map((w) => w.id)).toEqual(all.map((s) => s.id));
          expect(asked).toEqual(pages.map((_, i) => i + 1));
          expect(decoded.fields?.list?.incomplete).toBeUndefined();
          expect(decoded.fields?.list?.pages ?? 1).toBe(pages.length);
        },
      ),
      { numRuns: 150 },
    );
  });
});
