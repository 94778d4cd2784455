import { describe, expect, it } from 'vitest';
import { InvalidResponseError, type RequestContext } from '../http/errors.js';
import { findList, findObject, readList } from './body.js';
import { Fields } from './fields.js';
import { integer, nonEmptyString, number } from './values.js';

const context: RequestContext = { api: 'monitoring', endpoint: '/things' };
const A = { id: 1 };
const B = { id: 2 };

describe('findList', () => {
  it.each<[string, unknown, string, unknown[]]>([
    ['the body itself', [A, B], '', [A, B]],
    ['under the resource name', { things: [A], total: 1 }, 'things', [A]],
    ['under items', { items: [A], page: 1 }, 'items', [A]],
    ['under data', { data: [A] }, 'data', [A]],
    ['under results', { results: [A] }, 'results', [A]],
    ['inside a data wrapper', { data: { things: [A, B] }, meta: {} }, 'data.things', [A, B]],
    ['inside a result wrapper', { result: [A] }, 'result', [A]],
    ['the one list-valued field', { widgets: [A], count: 1 }, 'widgets', [A]],
    ['null under a known key: empty', { things: null }, 'things', []],
    ['the resource name before a generic key', { items: [B], things: [A] }, 'things', [A]],
  ])('%s', (_name, raw, key, items) => {
    const found = findList(raw, ['things', 'items', 'data', 'results']);
    expect(found?.key).toBe(key);
    expect(found?.items).toEqual(items);
  });

  it.each<[string, unknown]>([
    ['no list at all', { total: 3 }],
    ['two unnamed lists', { a: [A], b: [B] }],
    ['a string', 'nope'],
  ])('finds none in %s', (_name, raw) => {
    expect(findList(raw, ['things'])).toBeUndefined();
  });
});

describe('findObject', () => {
  it.each<[string, unknown, unknown]>([
    ['the body itself', { plan: 'pro' }, { plan: 'pro' }],
    ['under the singular name', { account: { plan: 'pro' }, request_id: 'x' }, { plan: 'pro' }],
    ['under data', { data: { plan: 'pro' } }, { plan: 'pro' }],
    ['under data and the name', { data: { account: { plan: 'pro' } } }, { plan: 'pro' }],
    ['nothing recognised: the body', { other: 1 }, { other: 1 }],
  ])('%s', (_name, raw, want) => {
    expect(findObject(raw, ['account'], ['plan'])).toEqual(want);
  });

  it('finds none in a list', () => {
    expect(findObject([{ plan: 'pro' }], ['account'], ['plan'])).toBeUndefined();
  });
});

describe('readList', () => {
  const spec = { what: 'thing list', keys: ['things'], read: (f: Fields) => ({ id: f.required('id', integer), size: f.optional('size', number) }) };

  it('keeps the good items, drops and describes the bad ones, and notes unreadable optional fields', () => {
    const body = readList({ things: [{ id: 1, size: 'big' }, { size: 2 }, 'x', { id: '3' }, { id: 1.5 }], total: 5 }, context, spec);
    expect(body.items).toEqual([{ id: 1, size: undefined }, { id: 3, size: undefined }]);
    expect(body.dropped).toEqual([
      { path: 'things[1]', reason: 'missing_field', field: 'id', issue: 'id: is missing' },
      { path: 'things[2]', reason: 'not_an_object', field: '(item)', issue: 'expected an object, got "x"' },
      { path: 'things[4]', reason: 'invalid_value', field: 'id', issue: 'id: 1.5 is not a whole number' },
    ]);
    expect(body.notes).toEqual([{ field: 'size', issue: '"big" is not a number' }]);
    expect(body.envelope.optional('total', integer)).toBe(5);
  });

  it('says a null required field is null, not missing', () => {
    expect(readList([{ id: 1 }, { id: null }], context, spec).dropped[0]?.issue).toBe('id: is null');
  });

  it('refuses a body with no list, describing what came instead', () => {
    const error = (() => {
      try {
        readList({ total: 3, page: 1 }, context, spec);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as Error).message).toBe('monitoring /things: thing list: no list found in the body (an object with 2 field(s): total, page; none holds a list)');
  });

  it('refuses a page whose every item is malformed, carrying the drops', () => {
    try {
      readList({ things: [{}, { id: 'x' }] }, context, spec);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect((error as InvalidResponseError).dropped.map((d) => d.reason)).toEqual(['missing_field', 'invalid_value']);
    }
  });

  it('accepts an empty list', () => {
    expect(readList({ things: [] }, context, spec).items).toEqual([]);
  });
});

describe('Fields', () => {
  it('reads the first synonym that reads, dotted paths included', () => {
    const f = new Fields({ plan: { name: 'Business' }, rate_limit: { per_minute: '60' } });
    expect(f.optional(['plan', 'plan.name'], nonEmptyString)).toBe('Business');
    expect(f.optional(['rate_limit.requests_per_minute', 'rate_limit.per_minute'], number)).toBe(60);
    expect(f.notes).toEqual([]);
  });

  it('notes an optional field none of whose names reads, under its canonical name', () => {
    const f = new Fields({ rate: { limit: 'lots' } });
    expect(f.object('rate')?.optional(['limit', 'max'], number)).toBeUndefined();
    expect(f.notes).toEqual([{ field: 'rate.limit', issue: '"lots" is not a number' }]);
  });

  it('lists the keys matching a pattern', () => {
    expect(new Fields({ cf_cache_status: 'HIT', ak_cache_status: null, other: 1 }).matching(/_cache_status$/)).toEqual([{ name: 'cf_cache_status', value: 'HIT' }]);
  });
});
