import { describe, expect, it } from 'vitest';
import { answerTime } from './freshness.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const HOUR = 3_600_000;
const CACHE = 2 * HOUR;
const http = (ms: number) => new Date(ms).toUTCString();

describe('answerTime', () => {
  it.each<[string, Record<string, string>, number, number, string]>([
    ['Age: arrival minus its seconds', { age: '1800' }, CACHE, NOW - 1_800_000, 'age_header'],
    ['Age 0 with a forced cache: just computed', { age: '0' }, CACHE, NOW, 'age_header'],
    ['a Date replayed by a cache, inside the cache time', { date: http(NOW - HOUR) }, CACHE, NOW - HOUR, 'date_header'],
    ['a Date older than the cache time is clock skew: ignored', { date: http(NOW - 5 * HOUR) }, CACHE, NOW - CACHE, 'worst_case'],
    ['a Date of now says nothing about age', { date: http(NOW) }, CACHE, NOW - CACHE, 'worst_case'],
    ['Cache-Control: no-cache', { 'cache-control': 'public, no-cache' }, CACHE, NOW, 'no_cache'],
    ['Cache-Control: max-age=0', { 'cache-control': 'max-age=0' }, CACHE, NOW, 'no_cache'],
    ['Cache-Control: max-age=7200 is no promise of freshness', { 'cache-control': 'max-age=7200' }, CACHE, NOW - CACHE, 'worst_case'],
    ['Last-Modified inside the cache time bounds the worst case', { 'last-modified': http(NOW - HOUR) }, CACHE, NOW - HOUR, 'last_modified'],
    ['Last-Modified before the cache time: the worst case', { 'last-modified': http(NOW - 10 * HOUR) }, CACHE, NOW - CACHE, 'worst_case'],
    ['nothing: the 2-hour worst case', {}, CACHE, NOW - CACHE, 'worst_case'],
    ['nothing, without a forced cache (marketplace): the arrival', {}, 0, NOW, 'fetch_time'],
    ['an Age that is no number is ignored', { age: 'soon' }, 0, NOW, 'fetch_time'],
  ])('%s', (_name, headers, cacheMs, produced, basis) => {
    expect(answerTime(headers, NOW, cacheMs)).toEqual({ producedAtMs: produced, basis });
  });
});
