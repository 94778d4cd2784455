import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monitoringDecoders } from '../../test/support/decoders.js';
import type { RequestContext } from '../upstream/http/errors.js';
import type { FieldReport } from '../upstream/fields/resolve.js';

/**
 * Issue 17's promise, as a property: take a valid body, rename its keys (word order, spelling,
 * case, separators), nest them (any prefix of a key's words becomes an object, keys sharing
 * it merge), send numbers as strings, wrap the list anywhere, and every declared field is
 * either read with the right value or reported missing: never a wrong value, never silently
 * absent. The renamings use spellings a service could choose, written here, not the finder's
 * own tables.
 */

const context: RequestContext = { api: 'monitoring', endpoint: '/renamed' };
const RUNS = { numRuns: 200 };

/** Other spellings of a word a service could use. */
const SPELLINGS: Readonly<Record<string, readonly string[]>> = {
  pct: ['pct', 'percent', 'percentage'],
  avg: ['avg', 'mean', 'average'],
  p95: ['p95', 'percentile95'],
  '24h': ['24h', 'day', 'daily', '1d'],
  '7d': ['7d', 'week', 'weekly'],
  '30d': ['30d', 'month', 'monthly'],
  checked: ['checked', 'check'],
  failures: ['failures', 'failed', 'errors'],
  seconds: ['seconds', 'secs', 'sec'],
  cert: ['cert', 'certificate'],
  max: ['max', 'maximum'],
  hosts: ['hosts', 'host'],
  websites: ['websites', 'sites'],
};

/** A leaf of the canonical body: the words of its key, its value, and what the decoder must give for it. */
interface Leaf {
  readonly words: readonly string[];
  readonly value: unknown;
  readonly field: string;
  readonly want: unknown;
  /** Words that must stay first: the finder reads `per` and what follows as a rate's period. */
  readonly fixedOrder?: boolean;
}

type Style = 'snake' | 'camel' | 'kebab' | 'pascal';
const joinWords = (words: readonly string[], style: Style): string => {
  if (style === 'snake') return words.join('_');
  if (style === 'kebab') return words.join('-');
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  return style === 'pascal' ? words.map(cap).join('') : words.map((w, i) => (i === 0 ? w : cap(w))).join('');
};

interface Renaming {
  readonly order: readonly number[][];
  readonly spelling: readonly number[][];
  readonly split: readonly number[];
  readonly style: Style;
  readonly strings: readonly boolean[];
}

/** One random renaming of every leaf of a body of `leaves.length` leaves. */
function renaming(leaves: readonly Leaf[]): fc.Arbitrary<Renaming> {
  return fc.record({
    order: fc.tuple(...leaves.map((l) => (l.fixedOrder ? fc.constant(l.words.map((_, i) => i)) : fc.shuffledSubarray(l.words.map((_, i) => i), { minLength: l.words.length, maxLength: l.words.length })))),
    spelling: fc.tuple(...leaves.map((l) => fc.tuple(...l.words.map((w) => fc.nat({ max: (SPELLINGS[w]?.length ?? 1) - 1 }))))),
    split: fc.tuple(...leaves.map((l) => fc.nat({ max: l.words.length - 1 }))),
    style: fc.constantFrom<Style>('snake', 'camel', 'kebab', 'pascal'),
    strings: fc.tuple(...leaves.map(() => fc.boolean())),
  });
}

/** The renamed item; undefined when two leaves would land on one key (no service sends that). */
function renamed(leaves: readonly Leaf[], r: Renaming): Record<string, unknown> | undefined {
  const item: Record<string, unknown> = {};
  for (const [index, leaf] of leaves.entries()) {
    const words = (r.order[index] ?? []).map((i) => {
      const word = leaf.words[i] ?? '';
      return SPELLINGS[word]?.[r.spelling[index]?.[i] ?? 0] ?? word;
    });
    const split = r.split[index] ?? 0;
    const path = split === 0 ? [joinWords(words, r.style)] : [joinWords(words.slice(0, split), r.style), joinWords(words.slice(split), r.style)];
    const value = typeof leaf.value === 'number' && r.strings[index] ? String(leaf.value) : leaf.value;
    let holder = item;
    for (const key of path.slice(0, -1)) {
      const next = holder[key];
      if (next === undefined) holder[key] = {};
      else if (typeof next !== 'object' || next === null) return undefined;
      holder = holder[key] as Record<string, unknown>;
    }
    const last = path.at(-1) ?? '';
    if (last in holder) return undefined;
    holder[last] = value;
  }
  return item;
}

/** Each field read right, or reported missing; how many were read. */
function checkFields(leaves: readonly Leaf[], record: Readonly<Record<string, unknown>>, report: FieldReport | undefined): number {
  let read = 0;
  for (const leaf of leaves) {
    if (report?.missing.includes(leaf.field)) continue;
    const got = record[leaf.field];
    if (typeof leaf.want === 'number') expect(got, leaf.field).toBeCloseTo(leaf.want, 9);
    else expect(got, leaf.field).toEqual(leaf.want);
    read++;
  }
  return read;
}

const T = '2026-11-22T11:59:00Z';

const WEBSITE: readonly Leaf[] = [
  { words: ['id'], value: 40001, field: 'id', want: 40001 },
  { words: ['name'], value: 'shop.example.com', field: 'name', want: 'shop.example.com' },
  { words: ['url'], value: 'https://shop.example.com/', field: 'url', want: 'https://shop.example.com/' },
  { words: ['enabled'], value: true, field: 'enabled', want: true },
  { words: ['check', 'interval', 'seconds'], value: 300, field: 'check_interval', want: 300 },
  { words: ['last', 'checked', 'at'], value: T, field: 'last_checked_at', want: T },
  { words: ['last', 'status', 'code'], value: 200, field: 'last_status_code', want: 200 },
  { words: ['checks', '24h'], value: 1440, field: 'checks_24h', want: 1440 },
  { words: ['failures', '24h'], value: 3, field: 'failures_24h', want: 3 },
  { words: ['uptime', 'pct', '24h'], value: 99.5, field: 'uptime_24h', want: 0.995 },
  { words: ['avg', 'ttfb', 'ms', '24h'], value: 182.4, field: 'ttfb_avg_24h', want: 0.1824 },
  { words: ['p95', 'ttfb', 'ms', '24h'], value: 420, field: 'ttfb_p95_24h', want: 0.42 },
];

const SUMMARY: readonly Leaf[] = [
  { words: ['id'], value: 40001, field: 'id', want: 40001 },
  { words: ['uptime', 'pct', '7d'], value: 99.1, field: 'uptime_7d', want: 0.991 },
  { words: ['uptime', 'pct', '30d'], value: 98.5, field: 'uptime_30d', want: 0.985 },
  { words: ['tls', 'version'], value: 'TLSv1.3', field: 'tls_version', want: 'TLSv1.3' },
  { words: ['cert', 'expires', 'at'], value: '2027-01-02T08:00:00Z', field: 'cert_expires_at', want: '2027-01-02T08:00:00Z' },
  { words: ['cert', 'issuer'], value: 'R3', field: 'cert_issuer', want: 'R3' },
];

const ACCOUNT: readonly Leaf[] = [
  { words: ['plan'], value: 'business', field: 'plan', want: 'business' },
  { words: ['max', 'hosts'], value: 50, field: 'host_limit', want: 50 },
  { words: ['max', 'websites'], value: 20, field: 'website_limit', want: 20 },
  { words: ['retention', 'days'], value: 90, field: 'retention', want: 90 * 86_400 },
  { words: ['requests', 'per', 'minute'], value: 120, field: 'rate_limit', want: 2, fixedOrder: true },
  { words: ['burst'], value: 30, field: 'burst', want: 30 },
];

const CHECK: readonly Leaf[] = [
  { words: ['id'], value: 9001, field: 'id', want: 9001 },
  { words: ['checked', 'at'], value: T, field: 'checked_at', want: T },
  { words: ['success'], value: true, field: 'success', want: true },
  { words: ['status', 'code'], value: 200, field: 'status_code', want: 200 },
  { words: ['ttfb', 'ms'], value: 120, field: 'ttfb', want: 0.12 },
  { words: ['tls', 'version'], value: 'TLSv1.3', field: 'tls_version', want: 'TLSv1.3' },
  { words: ['cert', 'days', 'remaining'], value: 60, field: 'cert_remaining', want: 60 * 86_400 },
  { words: ['security', 'score'], value: 80, field: 'security_score', want: 0.8 },
];

/** Where a list may sit, as services put it: bare, named, wrapped, and in the common envelopes (HAL, JSON:API, result wrappers). */
const wrap = (items: unknown[], plural: string, firstId = 40001) =>
  fc.constantFrom<unknown>(
    items,
    { [plural]: items },
    { data: items },
    { data: { [plural]: items } },
    { items, total: items.length },
    { results: items },
    { _embedded: { [plural]: items }, _links: { self: { href: `/api/v2/${plural}` } }, total: items.length, page_size: 50 },
    { success: true, errors: [], messages: [], result: items, result_info: { page: 1, per_page: 50, total_count: items.length, total_pages: 1 } },
    { data: items.map((item, i) => ({ id: String(firstId + i), type: plural, attributes: item })), links: { self: `/api/v2/${plural}` }, meta: { total: items.length } },
  );

describe('renamed, nested and re-spelled bodies: every field read right or reported missing', () => {
  it('/websites items', () => {
    let read = 0;
    fc.assert(
      fc.property(
        renaming(WEBSITE).chain((r) => {
          const item = renamed(WEBSITE, r);
          return item === undefined ? fc.constant(undefined) : wrap([item], 'websites');
        }),
        (body) => {
          if (body === undefined) return;
          const { value, fields } = monitoringDecoders.websites(JSON.parse(JSON.stringify(body)), context);
          const [site] = value.websites;
          expect(site).toBeDefined();
          read += checkFields(WEBSITE, site as unknown as Record<string, unknown>, fields);
        },
      ),
      RUNS,
    );
    // Not satisfied by reporting everything missing: most fields are read.
    expect(read).toBeGreaterThan(WEBSITE.length * RUNS.numRuns * 0.8);
  });

  it('/websites/{id} summaries', () => {
    let read = 0;
    fc.assert(
      fc.property(renaming(SUMMARY), fc.constantFrom('website', 'data', ''), (r, under) => {
        const item = renamed(SUMMARY, r);
        if (item === undefined) return;
        const body = under === '' ? item : { [under]: item };
        const { value, fields } = monitoringDecoders.websiteSummary(JSON.parse(JSON.stringify(body)), context);
        const flat = { id: value.id, uptime_7d: value.uptime['7d'], uptime_30d: value.uptime['30d'], tls_version: value.tls?.version, cert_expires_at: value.tls?.cert_expires_at, cert_issuer: value.tls?.issuer };
        read += checkFields(SUMMARY, flat, fields);
      }),
      RUNS,
    );
    expect(read).toBeGreaterThan(SUMMARY.length * RUNS.numRuns * 0.8);
  });

  it('/account', () => {
    let read = 0;
    fc.assert(
      fc.property(renaming(ACCOUNT), fc.constantFrom('account', 'data', ''), (r, under) => {
        const item = renamed(ACCOUNT, r);
        if (item === undefined) return;
        const body = under === '' ? item : { [under]: item };
        const { value, fields } = monitoringDecoders.account(JSON.parse(JSON.stringify(body)), context);
        const perMinute = value.rate_limit.requests_per_minute;
        const flat = {
          plan: value.plan,
          host_limit: value.limits.hosts,
          website_limit: value.limits.websites,
          retention: value.limits.retention_days === undefined ? undefined : value.limits.retention_days * 86_400,
          rate_limit: perMinute === undefined ? undefined : perMinute / 60,
          burst: value.rate_limit.burst,
        };
        read += checkFields(ACCOUNT, flat, fields);
      }),
      RUNS,
    );
    expect(read).toBeGreaterThan(ACCOUNT.length * RUNS.numRuns * 0.8);
  });

  it('/websites/{id}/checks items', () => {
    let read = 0;
    fc.assert(
      fc.property(
        renaming(CHECK).chain((r) => {
          const item = renamed(CHECK, r);
          return item === undefined ? fc.constant(undefined) : wrap([item], 'checks', 9001);
        }),
        (body) => {
          if (body === undefined) return;
          const { value, fields } = monitoringDecoders.checks(JSON.parse(JSON.stringify(body)), context);
          const [check] = value.checks;
          expect(check).toBeDefined();
          read += checkFields(CHECK, check as unknown as Record<string, unknown>, fields);
        },
      ),
      RUNS,
    );
    expect(read).toBeGreaterThan(CHECK.length * RUNS.numRuns * 0.8);
  });

  it('/hosts/{uuid}/components, as a list or grouped by type', () => {
    const component = (type: string, n: number): Leaf[] => [
      { words: ['display', 'name'], value: `${type} @ web-${n}`, field: 'display_name', want: `${type} @ web-${n}` },
      { words: ['version'], value: `1.${n}`, field: 'version', want: `1.${n}` },
    ];
    const TYPES = ['nginx', 'mysql', 'varnish'];
    let read = 0;
    fc.assert(
      fc.property(renaming(component('x', 0)), fc.boolean(), fc.constantFrom('components', 'data', ''), (r, grouped, under) => {
        const items = TYPES.map((type, n) => renamed(component(type, n), r));
        if (items.some((i) => i === undefined)) return;
        const list = grouped ? Object.fromEntries(TYPES.map((type, n) => [type, [items[n]]])) : TYPES.map((type, n) => ({ ...items[n], type }));
        const body = under === '' ? list : { [under]: list };
        const { value, fields } = monitoringDecoders.components(JSON.parse(JSON.stringify(body)), context);
        expect(value.components.map((c) => c.type)).toEqual(TYPES);
        value.components.forEach((c, n) => {
          read += checkFields(component(TYPES[n] ?? '', n), c as unknown as Record<string, unknown>, fields);
        });
      }),
      RUNS,
    );
    expect(read).toBeGreaterThan(2 * TYPES.length * RUNS.numRuns * 0.8);
  });
});
