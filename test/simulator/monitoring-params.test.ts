import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/lib/clock.js';
import { driftJson, DRIFT_EXTRA_FIELD, malformJson, OPTIONAL_FIELD_NAMES, parseFaultUpdate, truncateJson } from '../../simulator/faults.js';
import {
  parseMetricNames,
  parsePositiveInteger,
  parseWebsiteId,
  parseWindow,
  rfc3339Seconds,
  seriesIntervalSeconds,
  singleValue,
} from '../../simulator/monitoring/http/params.js';
import { TokenBucketLimiter } from '../../simulator/rate-limit.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

describe('relative window (§4 query parameters)', () => {
  it.each([
    ['1m', MIN],
    ['90m', 90 * MIN],
    ['1h', HOUR],
    ['24h', DAY],
    ['2d', 2 * DAY],
    ['1w', WEEK],
    ['13w', 13 * WEEK],
  ])('accepts %s as %d ms', (raw, ms) => {
    expect(parseWindow('since', raw)).toEqual({ ok: true, value: ms });
  });

  it.each(['0h', '1.5h', 'h', '1y', '-1h', ' 1h', '1h ', '1H', '01h', '1hh', '', '1', 'PT1H', '1 h', '+1h'])('refuses %j naming the parameter', (raw) => {
    const parsed = parseWindow('since', raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toContain("'since'");
  });

  it('accepts every N >= 1 with every unit and refuses N = 0', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom('m', 'h', 'd', 'w'), (n, unit) => {
        expect(parseWindow('since', `${n}${unit}`).ok).toBe(n >= 1);
      }),
    );
  });
});

describe('series interval by window (§4 rule 1)', () => {
  it.each([
    [MIN, 60],
    [4 * HOUR, 60],
    [4 * HOUR + 1, 120],
    [DAY, 120],
    [DAY + 1, 300],
    [2 * DAY, 300],
    [2 * DAY + 1, 900],
    [WEEK, 900],
    [WEEK + 1, 3600],
    [90 * DAY, 3600],
  ])('a window of %d ms samples every %d s', (windowMs, interval) => {
    expect(seriesIntervalSeconds(windowMs)).toBe(interval);
  });
});

describe('limit and id parameters', () => {
  it.each([
    ['1', undefined, 1],
    ['500', 500, 500],
    ['42', undefined, 42],
  ])('parsePositiveInteger(%j, max %s) = %d', (raw, max, value) => {
    expect(parsePositiveInteger('limit', raw, max)).toEqual({ ok: true, value });
  });

  it.each([
    ['0', undefined],
    ['-1', undefined],
    ['1.5', undefined],
    ['abc', undefined],
    ['', undefined],
    [' 5', undefined],
    ['5e2', undefined],
    ['501', 500],
  ])('parsePositiveInteger refuses %j (max %s)', (raw, max) => {
    const parsed = parsePositiveInteger('limit', raw, max);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toContain("'limit'");
  });

  it.each([
    ['40001', true],
    ['0', true],
    ['-3', true],
    ['abc', false],
    ['1.5', false],
    ['1e3', false],
    ['99999999999999999999', false],
  ])('website id %j is an integer: %s', (raw, ok) => {
    expect(parseWebsiteId(raw).ok).toBe(ok);
  });

  it('a repeated query parameter is refused', () => {
    expect(singleValue('limit', ['1', '2']).ok).toBe(false);
    expect(singleValue('limit', '1')).toEqual({ ok: true, value: '1' });
    expect(singleValue('limit', undefined)).toEqual({ ok: true, value: undefined });
  });
});

describe('series names', () => {
  const known = new Set(['system.cpu.user', 'system.load.1', 'nginx.http.request.count']);

  it.each([
    ['system.cpu.user', ['system.cpu.user']],
    ['system.cpu.user,system.load.1', ['system.cpu.user', 'system.load.1']],
    ['system.load.1,system.cpu.user,system.load.1', ['system.load.1', 'system.cpu.user']],
  ])('%j gives %j', (raw, names) => {
    expect(parseMetricNames(raw, known)).toEqual({ ok: true, value: names });
  });

  it.each([
    [undefined, 'required'],
    ['', 'must not be empty'],
    ['system.cpu.user,,system.load.1', 'empty name'],
    ['system.cpu.user,', 'empty name'],
    ['system.cpu.user, system.load.1', "' system.load.1'"],
    ['mysql.global.questions', 'not a metric of this host'],
  ])('%j is refused (%s)', (raw, fragment) => {
    const parsed = parseMetricNames(raw, known);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.message).toContain("'names'");
      expect(parsed.message).toContain(fragment);
    }
  });
});

describe('timestamps', () => {
  it.each([
    [Date.UTC(2026, 10, 22, 12, 0, 0), '2026-11-22T12:00:00Z'],
    [Date.UTC(2026, 10, 22, 12, 0, 0) + 999, '2026-11-22T12:00:00Z'],
    [Date.UTC(2024, 1, 29, 23, 59, 59), '2024-02-29T23:59:59Z'],
  ])('%d is written %s', (ms, text) => {
    expect(rfc3339Seconds(ms)).toBe(text);
  });
});

describe('token bucket', () => {
  it('starts with the burst, refuses the next, and refills at perMinute / 60 per second', () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketLimiter({ clock, perMinute: 120, burst: 30 });
    for (let i = 0; i < 30; i++) expect(limiter.take('k').allowed).toBe(true);
    const refused = limiter.take('k');
    expect(refused).toEqual({ allowed: false, remaining: 0, retryAfterMs: 500 });
    clock.advance(499);
    expect(limiter.take('k').allowed).toBe(false);
    clock.advance(1);
    expect(limiter.take('k').allowed).toBe(true);
    expect(limiter.take('k').allowed).toBe(false);
  });

  it('keeps one bucket per key and never holds more than the burst', () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketLimiter({ clock, perMinute: 60, burst: 2 });
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
    expect(limiter.take('b').allowed).toBe(true);
    clock.advance(3_600_000);
    expect(limiter.remaining('a')).toBe(2);
  });

  it.each([
    [0, 30],
    [-1, 30],
    [120, 0],
    [120, 1.5],
  ])('refuses perMinute %d burst %d', (perMinute, burst) => {
    expect(() => new TokenBucketLimiter({ clock: new FakeClock(), perMinute, burst })).toThrow(RangeError);
  });
});

describe('fault helpers', () => {
  it.each([
    ['{"a":1}', `{'a":1}`],
    ['"1.2.3"', `'1.2.3"`],
    ['42', '42}'],
  ])('malformJson(%j) breaks JSON syntax', (text, broken) => {
    expect(malformJson(text)).toBe(broken);
    expect(() => JSON.parse(malformJson(text)) as unknown).toThrow();
  });

  it('truncateJson cuts the body in half so it no longer parses', () => {
    const text = JSON.stringify({ hosts: [{ uuid: 'a'.repeat(32) }], total: 1 });
    expect(truncateJson(text)).toBe(text.slice(0, Math.floor(text.length / 2)));
    expect(() => JSON.parse(truncateJson(text)) as unknown).toThrow();
  });

  it('schema drift adds a field to every object, drops optional fields, and retypes the first leaf', () => {
    const body = { hosts: [{ uuid: 'u1', online: true }], limits: { retention_days: 30 }, total: 1 };
    expect(driftJson(body, { extra: true, missing: false, wrongType: false })).toEqual({
      hosts: [{ uuid: 'u1', online: true, [DRIFT_EXTRA_FIELD]: { note: 'field added by simulated schema drift', level: 1 } }],
      limits: { retention_days: 30, [DRIFT_EXTRA_FIELD]: { note: 'field added by simulated schema drift', level: 1 } },
      total: 1,
      [DRIFT_EXTRA_FIELD]: { note: 'field added by simulated schema drift', level: 1 },
    });
    expect(driftJson(body, { extra: false, missing: true, wrongType: false })).toEqual({ hosts: [{ uuid: 'u1', online: true }], total: 1 });
    expect(driftJson(body, { extra: false, missing: false, wrongType: true })).toEqual({ ...body, hosts: [{ uuid: 2, online: true }] });
  });

  it('optional field names come from the schemas and exclude names required anywhere', () => {
    expect(OPTIONAL_FIELD_NAMES.has('upgrade_url')).toBe(true);
    expect(OPTIONAL_FIELD_NAMES.has('cf_cache_status')).toBe(true);
    for (const required of ['uuid', 'host_uuid', 'since', 'interval', 'version', 'id', 'total']) {
      expect(OPTIONAL_FIELD_NAMES.has(required)).toBe(false);
    }
  });

  it.each([
    [{}, { target: 'all', error_503: 0.5 }, true],
    [{ error_503: '0.25', target: 'monitoring' }, undefined, true],
    [{}, { hang: 1.5 }, false],
    [{}, { latency_ms: -1 }, false],
    [{}, { target: 'everything' }, false],
    [{}, { errors: 1 }, false],
    [{ error_500: 'lots' }, undefined, false],
    [{ hang: ['1', '0'] }, undefined, false],
    [{}, { storm_retry_after: 'soon' }, false],
    [{}, { storm_seconds: 10, storm_retry_after: 'soon' }, true],
    [{}, [1, 2], false],
  ])('parseFaultUpdate(query %j, body %j) ok: %s', (query, body, ok) => {
    const parsed = parseFaultUpdate(query, body);
    expect(parsed.ok).toBe(ok);
    if (!parsed.ok) expect(parsed.message.length).toBeGreaterThan(10);
  });
});
