import { describe, expect, it } from 'vitest';
import { declareFields } from './declare.js';
import { durationText } from './kinds.js';
import { FieldFinder } from './resolve.js';
import { keyWords } from './words.js';

const UPTIME = declareFields({
  uptime_24h: { kind: 'ratio', about: 'uptime over 24 hours', words: [['uptime'], ['availability']], period: '24h', periodOptional: true },
  uptime_7d: { kind: 'ratio', about: 'uptime over 7 days', words: [['uptime'], ['availability']], period: '7d' },
  uptime_30d: { kind: 'ratio', about: 'uptime over 30 days', words: [['uptime'], ['availability']], period: '30d' },
});

const readOne = <D extends Parameters<typeof declareFields>[0]>(decls: D, item: Record<string, unknown>) => {
  const result = new FieldFinder(decls).read([item]);
  return { record: result.records[0], report: result.report };
};

describe('words of a key', () => {
  it.each([
    ['uptime_24h', 'uptime 24h'],
    ['uptime.24h', 'uptime 24h'],
    ['last_24h', '24h'],
    ['uptimePct24h', 'uptime pct 24h'],
    ['lastDay', '24h'],
    ['ttfbP95Ms', 'ttfb p95 ms'],
    ['requests_per_minute', 'requests per 1m'],
    ['last_24_hours', '24h'],
    ['retention_days', 'retention days'],
    ['cert_expires_at', 'cert expires at'],
  ])('%s → %s', (key, words) => {
    expect(keyWords(key).join(' ')).toBe(words);
  });
});

describe('finding a field whatever the shape', () => {
  it.each([
    ['flat with the period last', { uptime_24h: 99.5 }],
    ['dotted', { 'uptime.24h': 99.5 }],
    ['nested under the period', { last_24h: { uptime: 99.5 } }],
    ['with a unit word', { uptime_pct_24h: 99.5 }],
    ['nested two deep', { stats: { last_day: { uptime: 99.5 } } }],
    ['camelCase', { uptimePct24h: 99.5 }],
    ['a number as a string', { uptime_24h: '99.5' }],
    ['a percent sign', { uptime: { '24h': '99.5%' } }],
    ['a ratio', { uptime_ratio_24h: 0.995 }],
    ['no period: the list is over 24 hours', { uptime: 99.5 }],
  ])('%s', (_name, item) => {
    const { record, report } = readOne(UPTIME, item);
    expect(record?.uptime_24h).toBeCloseTo(0.995, 9);
    expect(report.found.uptime_24h?.unit).toMatch(/^(percent|ratio)/);
    expect(record?.uptime_7d).toBeUndefined();
  });

  it('tells the periods apart, and reports the ones no item carries', () => {
    const { record, report } = readOne(UPTIME, { uptime: { '24h': 99.9, '7d': 99.5 } });
    expect(record?.uptime_24h).toBeCloseTo(0.999, 9);
    expect(record?.uptime_7d).toBeCloseTo(0.995, 9);
    expect(record?.uptime_30d).toBeUndefined();
    expect(report.missing).toEqual(['uptime_30d']);
    expect(report.found.uptime_7d?.path).toBe('uptime.7d');
  });

  it('never takes another period for its own', () => {
    const { record, report } = readOne(UPTIME, { uptime_7d: 99.5, uptime_30d: 99.1 });
    expect(record?.uptime_24h).toBeUndefined();
    expect(report.missing).toEqual(['uptime_24h']);
  });

  it('decides percent or ratio by the largest value of the response when the name does not say', () => {
    const finder = new FieldFinder(UPTIME);
    const { records } = finder.read([{ uptime: 100 }, { uptime: 0.5 }]);
    expect(records.map((r) => r?.uptime_24h)).toEqual([1, 0.005]);
  });

  it('takes a path the operator named over its own search', () => {
    const finder = new FieldFinder(UPTIME, { uptime_24h: 'weird.place' });
    const { records, report } = finder.read([{ uptime: 50, weird: { place: 99 } }]);
    expect(records[0]?.uptime_24h).toBeCloseTo(0.99, 9);
    expect(report.found.uptime_24h).toMatchObject({ path: 'weird.place', configured: true });
  });

  it('reports a field missing when the path the operator named is not there, rather than guessing elsewhere', () => {
    const finder = new FieldFinder(UPTIME, { uptime_24h: 'weird.place' });
    const { records, report } = finder.read([{ uptime: 50 }]);
    expect(records[0]?.uptime_24h).toBeUndefined();
    expect(report.missing).toContain('uptime_24h');
  });

  it.each([
    ['a key of the envelope beside the wrapped item', { request_id: 'r-1', data: { website: { id: 7 } } }, 'data.website.id'],
    ['an id with other words loses to a bare id deeper down', { owner_id: 3, site: { id: 7 } }, 'site.id'],
  ])('prefers the key that is the field over a key that only holds its words: %s', (_name, item, path) => {
    const ID = declareFields({ id: { kind: 'integer', about: 'the id', words: [['id']] } });
    expect(readOne(ID, item).report.found.id?.path).toBe(path);
  });

  it('reads the next path with the field\'s words where the chosen one is null in an item', () => {
    const HOSTS = declareFields({ hosts: { kind: 'strings', about: 'bound hosts', words: [['hosts', 'uuid'], ['hosts']] } });
    const finder = new FieldFinder(HOSTS);
    const { records } = finder.read([
      { id: 1, host_uuid: 'a', host_uuids: null },
      { id: 2, host_uuid: null, host_uuids: ['b', 'c'] },
      { id: 3, host_uuid: null, host_uuids: null },
    ]);
    expect(records.map((r) => r?.hosts)).toEqual([['a'], ['b', 'c'], undefined]);
  });

  it('reads no other path where a field whose null is its value is null (a gap stays a gap)', () => {
    const POINT = declareFields({ value: { kind: 'number', about: 'a value, null a gap', words: [['value'], ['v']], nullIsValue: true } });
    const finder = new FieldFinder(POINT);
    const { records, report } = finder.read([{ value: null, meta: { v: 0 } }, { value: 2, meta: { v: 0 } }]);
    expect(records.map((r) => r?.value)).toEqual([undefined, 2]);
    expect(report.found.value?.path).toBe('value');
  });

  it('never takes a list for a number', () => {
    const COUNT = declareFields({ checks: { kind: 'count', about: 'checks run', words: [['checks']] } });
    const { report } = readOne(COUNT, { recent_checks: [{ id: 1 }], checks_total: 3 });
    expect(report.found.checks?.path).toBe('checks_total');
  });
});

describe('rates, durations and states', () => {
  const RATE = declareFields({ rate: { kind: 'rate', about: 'requests allowed per second', words: [['requests'], ['rate', 'limit']], periodSeconds: 60 } });
  it.each([
    ['per minute in the name', { rate_limit: { requests_per_minute: 120 } }, 2],
    ['a count and a period', { rate_limit: { requests: 120, period: '1m' } }, 2],
    ['a count and a period in seconds', { rate_limit: { limit: 10, window_seconds: 5 } }, 2],
    ['per second', { requests_per_second: 2 }, 2],
    ['text', { rate_limit: '120/min' }, 2],
    ['an hour', { rate_limit: { requests: 7200, per: 'hour' } }, 2],
  ])('%s', (_name, item, perSecond) => {
    expect(readOne(RATE, item).record?.rate).toBeCloseTo(perSecond, 9);
  });

  it.each([
    ['30s', 30],
    ['5m', 300],
    ['1h30m', 5400],
    ['250ms', 0.25],
    ['PT5M', 300],
    ['2 days', 172_800],
    ['minute', 60],
  ])('duration text %s is %d s', (text, seconds) => {
    expect(durationText(text)).toBeCloseTo(seconds, 9);
  });

  const ENABLED = declareFields({ enabled: { kind: 'state', about: 'checked upstream', words: [['enabled'], ['active'], ['paused'], ['disabled'], ['status']], falseWords: ['paused', 'disabled'] } });
  it.each([
    [{ enabled: false }, false],
    [{ paused: true }, false],
    [{ paused: 'false' }, true],
    [{ status: 'paused' }, false],
    [{ status: 'active' }, true],
    [{ settings: { monitoring: { disabled: 1 } } }, false],
  ])('%j is enabled=%s', (item, enabled) => {
    expect(readOne(ENABLED, item).record?.enabled).toBe(enabled);
  });
});

describe('one path serves one field', () => {
  const CHECKS = declareFields({
    checks: { kind: 'count', about: 'checks in 24 hours', words: [['checks']], not: ['failures'], period: '24h', periodOptional: true },
    failures: { kind: 'count', about: 'failed checks in 24 hours', words: [['failures']], period: '24h', periodOptional: true },
  });
  it('tells the checks from the failed checks', () => {
    expect(readOne(CHECKS, { stats_24h: { checks: 1440, failed_checks: 3 } }).record).toEqual({ checks: 1440, failures: 3 });
    expect(readOne(CHECKS, { checks_count_24h: 1440, checks_failed_24h: 3 }).record).toEqual({ checks: 1440, failures: 3 });
  });

  const ESSENTIAL = declareFields({ id: { kind: 'id', about: 'the id', words: [['id']], essential: true }, name: { kind: 'string', about: 'the name', words: [['name']] } });
  it('drops an item without an essential field and says which', () => {
    const result = new FieldFinder(ESSENTIAL).read([{ id: 7, name: 'a' }, { name: 'b' }]);
    expect(result.records.map((r) => r?.id)).toEqual(['7', undefined]);
    expect(result.problems).toEqual([{ index: 1, reason: 'missing_field', field: 'id', issue: 'is missing' }]);
    expect(result.report.essentialMissing).toEqual([]);
  });

  it('reports an essential field no item carries, with the paths that were there', () => {
    const result = new FieldFinder(ESSENTIAL).read([{ key: 7, name: 'a' }]);
    expect(result.report.essentialMissing).toEqual(['id']);
    expect(result.report.paths).toEqual(['key', 'name']);
  });
});

describe('lists of strings written as objects, and empty lists', () => {
  const TAGS = declareFields({
    tags: { kind: 'strings', about: 'tags', words: [['tags'], ['labels']], pairs: true },
    env: { kind: 'string', about: 'an environment', words: [['env']] },
  });
  it.each([
    ['a list', { tags: ['env:prod', 'canary'] }, ['env:prod', 'canary']],
    ['a comma string', { tags: 'env:prod,canary' }, ['env:prod', 'canary']],
    ['an object of key to value', { labels: { tier: 2, nested: { x: 1 } } }, ['tier:2']],
  ])('reads tags as %s', (_name, item, tags) => {
    const { record, report } = readOne(TAGS, item);
    expect(record?.tags).toEqual(tags);
    expect(report.found.tags?.path).toBe(Object.keys(item)[0]);
  });

  it('reads the object whole: a key inside it is one of its items, not another field', () => {
    const { record } = readOne(TAGS, { tags: { env: 'prod' } });
    expect(record).toEqual({ tags: ['env:prod'], env: undefined });
  });

  it('reports no field missing from an empty list: it says nothing of its items', () => {
    const result = new FieldFinder(TAGS).read([]);
    expect(result.report.missing).toEqual([]);
    expect(result.report.essentialMissing).toEqual([]);
    expect(new FieldFinder(TAGS).read([{ name: 'x' }]).report.missing).toEqual(['tags', 'env']);
  });
});

describe('identity fields', () => {
  const HOSTS = declareFields({
    uuid: { kind: 'id', about: 'the host uuid', words: [['uuid']], essential: true, textOnly: true },
    online: { kind: 'state', about: 'online', words: [['online'], ['status']] },
  });

  it('refuses a number where only text is an id, and drops that item alone', () => {
    const result = new FieldFinder(HOSTS).read([{ uuid: 3 }, { uuid: 'b' }]);
    expect(result.records.map((r) => r?.uuid)).toEqual([undefined, 'b']);
    expect(result.problems).toMatchObject([{ index: 0, reason: 'wrong_type', field: 'uuid' }]);
  });

  it('never lets one bad id decide the shape for the items after it, in this body or the next', () => {
    const finder = new FieldFinder(HOSTS);
    expect(finder.read([{ uuid: '' }, { uuid: 'b' }]).records.map((r) => r?.uuid)).toEqual([undefined, 'b']);
    const next = finder.read([{ uuid: 'c' }]);
    expect(next.records.map((r) => r?.uuid)).toEqual(['c']);
    expect(next.report.essentialMissing).toEqual([]);
  });

  it('reads a field nowhere but at a path whose value it can be', () => {
    expect(readOne(HOSTS, { uuid: 'a', status: 'maintenance' }).report.missing).toEqual(['online']);
  });

  it('never lets one item\'s bad value lose a field for the items after it', () => {
    const finder = new FieldFinder(HOSTS);
    const first = finder.read([{ uuid: 'a', online: 'maybe' }, { uuid: 'b', online: true }]);
    expect(first.records.map((r) => r?.online)).toEqual([undefined, true]);
    expect(first.notes).toEqual([{ field: 'online', issue: 'online: "maybe" is not true or false' }]);
    expect(finder.read([{ uuid: 'c', online: false }]).records.map((r) => r?.online)).toEqual([false]);
  });

  it('reads no path whose value does not fit where the field\'s own is null: a gap stays a gap', () => {
    const POINT = declareFields({ value: { kind: 'number', about: 'a value', words: [['value'], ['v']] } });
    const { record, report } = readOne(POINT, { meta: { v: '' }, value: null });
    expect(record?.value).toBeUndefined();
    expect(report.found.value).toMatchObject({ path: 'value', sample: 'null' });
  });

  it('leaves a path to the field its value fits, before another whose words it also has', () => {
    const SITE = declareFields({
      up: { kind: 'state', about: 'the latest check succeeded', words: [['up'], ['status'], ['state']], trueWords: ['up'], falseWords: ['down'] },
      enabled: { kind: 'state', about: 'checked upstream', words: [['enabled'], ['status']], trueWords: ['active'], falseWords: ['paused'] },
    });
    expect(readOne(SITE, { status: 'paused', last_check: { state: 'up' } }).record).toEqual({ up: true, enabled: false });
  });
});
