import { describe, expect, it } from 'vitest';
import { LayoutController, parseLayoutFlag, parseLayoutRequest } from './layout.js';
import { decodeCursor, encodeCursor, pageOf, parsePageRequest, type Page } from './paging.js';

const page = (query: Record<string, unknown>, total: number, size = 3): Page => {
  const request = parsePageRequest('websites', query, size);
  if (!request.ok) throw new Error(request.message);
  const result = pageOf(request.value, total);
  if (!result.ok) throw new Error(result.message);
  return result.value;
};

const refused = (query: Record<string, unknown>, total = 10): string => {
  const request = parsePageRequest('websites', query, 3);
  if (!request.ok) return request.message;
  const result = pageOf(request.value, total);
  return result.ok ? 'accepted' : result.message;
};

describe('pages', () => {
  it('walking by next offsets meets every item once, whatever the total and size', () => {
    for (const total of [0, 1, 2, 3, 4, 7, 12]) {
      for (const size of [1, 2, 3, 5]) {
        const seen: number[] = [];
        let query: Record<string, unknown> = {};
        for (let guard = 0; guard < 20; guard++) {
          const p = page(query, total, size);
          for (let i = p.offset; i < Math.min(total, p.offset + size); i++) seen.push(i);
          if (p.nextOffset === null) break;
          query = { cursor: encodeCursor('websites', p.nextOffset) };
        }
        expect(seen, `${total}/${size}`).toEqual([...Array(total).keys()]);
      }
    }
  });

  it('page numbers: page P starts at (P-1)·size; the count is at least 1; past the last is refused', () => {
    expect(page({ page: '2' }, 12)).toMatchObject({ offset: 3, number: 2, pageCount: 4, nextOffset: 6, prevOffset: 0 });
    expect(page({ page: '4' }, 12)).toMatchObject({ offset: 9, number: 4, nextOffset: null });
    expect(page({}, 0)).toMatchObject({ offset: 0, number: 1, pageCount: 1, nextOffset: null, prevOffset: null });
    expect(page({ page: '1', per_page: '5' }, 12)).toMatchObject({ size: 5, pageCount: 3, nextOffset: 5 });
    expect(refused({ page: '5' }, 12)).toContain("'page' is beyond the last page, 4");
  });

  it.each<[Record<string, unknown>, string]>([
    [{ page: '0' }, "'page'"],
    [{ page: 'two' }, "'page'"],
    [{ page: '1.5' }, "'page'"],
    [{ page: ['1', '2'] }, "'page'"],
    [{ per_page: '0' }, "'per_page'"],
    [{ per_page: '501' }, "'per_page' must be at most 500"],
    [{ cursor: 'garbage!' }, "'cursor' is not a cursor this API gave out"],
    [{ cursor: 'eyJsIjoid2Vic2l0ZXMiLCJvIjotMX0' }, "'cursor'"],
    [{ cursor: encodeCursor('hosts', 3) }, "'cursor' belongs to another list (hosts)"],
    [{ cursor: encodeCursor('websites', 3), page: '2' }, "'page' and 'cursor' exclude each other"],
    [{ cursor: [encodeCursor('websites', 3), encodeCursor('websites', 3)] }, "'cursor' must be given at most once"],
  ])('%j is refused naming %s', (query, text) => {
    expect(refused(query)).toContain(text);
  });

  it('a cursor is opaque text that decodes only as written: another encoding of the same offset is refused', () => {
    const cursor = encodeCursor('websites', 6);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor('websites', cursor)).toEqual({ ok: true, value: 6 });
    const spaced = Buffer.from(JSON.stringify({ o: 6, l: 'websites' })).toString('base64url');
    expect(decodeCursor('websites', spaced).ok).toBe(false);
  });

  it('a cursor past the end of a list that shrank reads an empty last page', () => {
    expect(page({ cursor: encodeCursor('websites', 9) }, 4)).toMatchObject({ offset: 4, nextOffset: null });
  });
});

describe('layout settings', () => {
  it('--layout takes an envelope and/or paged, comma-joined; two envelopes or an unknown word are errors', () => {
    expect(parseLayoutFlag('hal,paged')).toEqual({ ok: true, value: { envelope: 'hal', paged: true } });
    expect(parseLayoutFlag('paged')).toEqual({ ok: true, value: { paged: true } });
    expect(parseLayoutFlag('none')).toEqual({ ok: true, value: { envelope: 'none' } });
    expect(parseLayoutFlag('hal,jsonapi')).toMatchObject({ ok: false, message: expect.stringContaining('two envelopes') as unknown });
    expect(parseLayoutFlag('xml')).toMatchObject({ ok: false, message: expect.stringContaining("got 'xml'") as unknown });
  });

  it('the control accepts a query string or a JSON body, the body winning; bad fields are named', () => {
    expect(parseLayoutRequest({ envelope: 'jsonapi', paged: 'true', pageSize: '2', pageFailAfter: 'none' }, undefined)).toEqual({
      ok: true,
      value: { envelope: 'jsonapi', paged: true, pageSize: 2, pageFailAfter: null },
    });
    expect(parseLayoutRequest({ envelope: 'hal' }, { envelope: 'envelope' })).toEqual({ ok: true, value: { envelope: 'envelope' } });
    for (const [query, body, field] of [
      [{ envelope: 'xml' }, undefined, 'envelope'],
      [{ pageSize: '0' }, undefined, 'pageSize'],
      [{}, { pageFailAfter: 0 }, 'pageFailAfter'],
      [{}, { page_size: 2 }, 'page_size'],
      [{ paged: 'yes' }, undefined, 'paged'],
    ] as const) {
      const parsed = parseLayoutRequest(query, body);
      expect(parsed.ok, field).toBe(false);
      if (!parsed.ok) expect(parsed.message).toContain(field);
    }
  });

  it('the controller changes only the fields named, resets to off, and says how each list announces its next page', () => {
    const layout = new LayoutController();
    expect(layout.view().next).toEqual({ hosts: 'unpaged', websites: 'unpaged', 'alert-rules': 'unpaged', components: 'unpaged', metrics: 'unpaged' });
    layout.set({ paged: true });
    expect(layout.view().next).toEqual({ hosts: 'link-header', websites: 'next-cursor', 'alert-rules': 'next-cursor', components: 'link-header', metrics: 'link-header' });
    layout.set({ envelope: 'hal', pageSize: 5 });
    expect(layout.settings()).toEqual({ envelope: 'hal', paged: true, pageSize: 5, pageFailAfter: null });
    expect(layout.next('websites')).toBe('hal-links-next');
    expect(() => layout.set({ pageSize: 0 })).toThrow(/pageSize/);
    layout.reset();
    expect(layout.settings()).toEqual({ envelope: 'none', paged: false, pageSize: 3, pageFailAfter: null });
  });
});
