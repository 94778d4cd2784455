import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monitoringDecoders } from '../../test/support/decoders.js';
import type { RequestContext } from '../upstream/http/errors.js';

/**
 * For every endpoint: whatever reasonable liberty a service takes (optional fields left
 * out or null, fields we do not know, ids as numeric strings, the list bare or under any
 * plausible key, paging fields or none), a page of well-formed items is never refused and
 * every item survives; malformed items among them are dropped one by one.
 */

const context: RequestContext = { api: 'monitoring', endpoint: '/property' };
const RUNS = { numRuns: 150 };

type Json = Record<string, unknown>;

const time = fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/);
const id = fc.integer({ min: 1, max: 2 ** 31 });
const hex32 = fc.stringMatching(/^[0-9a-f]{32}$/);
/** Keys no decoder knows: never a synonym, never `<abbr>_cache_status`. */
const extraFields = fc.dictionary(word.map((w) => `x_extra_${w}`), fc.jsonValue(), { maxKeys: 3 });

/** An optional field as a service may send it: as is, left out, or null. */
type Presence = 'keep' | 'drop' | 'null';
const presence = fc.constantFrom<Presence>('keep', 'drop', 'null');

interface ItemSpec {
  /** Fields every well-formed item has (never left out). */
  readonly required: Readonly<Record<string, fc.Arbitrary<unknown>>>;
  readonly optional: Readonly<Record<string, fc.Arbitrary<unknown>>>;
  /** Required numeric ids a service may send as strings. */
  readonly numericIds: readonly string[];
  /** Optional fields that can stand in for the required ones (a component named by its id): a malformed item lacks these too. */
  readonly standIns?: readonly string[];
}

/** One well-formed item with random liberties taken. */
function item(spec: ItemSpec): fc.Arbitrary<Json> {
  return fc
    .record({
      required: fc.record(spec.required),
      optional: fc.record(spec.optional),
      presence: fc.dictionary(fc.constantFrom(...Object.keys(spec.optional)), presence),
      idsAsText: fc.boolean(),
      extra: extraFields,
    })
    .map(({ required, optional, presence: choice, idsAsText, extra }) => {
      const out: Json = { ...extra, ...required };
      for (const [key, value] of Object.entries(optional)) {
        const how = choice[key] ?? 'keep';
        if (how === 'keep') out[key] = value;
        else if (how === 'null') out[key] = null;
      }
      if (idsAsText) for (const key of spec.numericIds) out[key] = String(out[key]);
      return out;
    });
}

/** The list as a service may lay it out. */
function wrapped(plural: string, items: Json[]): fc.Arbitrary<unknown> {
  return fc.record({ layout: fc.integer({ min: 0, max: 6 }), total: fc.boolean(), page: fc.boolean() }).map(({ layout, total, page }) => {
    const paging: Json = { ...(total && { total: items.length }), ...(page && { page: 1, per_page: 50 }) };
    switch (layout) {
      case 0:
        return items;
      case 1:
        return { [plural]: items, ...paging };
      case 2:
        return { items, ...paging };
      case 3:
        return { data: items, ...paging };
      case 4:
        return { data: { [plural]: items }, meta: paging };
      case 5:
        return { results: items, ...paging };
      default:
        return { ...paging, [`all_${plural}`]: items };
    }
  });
}

interface ListEndpoint {
  readonly name: keyof typeof monitoringDecoders;
  readonly plural: string;
  readonly spec: ItemSpec;
  /** The decoded items, in order. */
  readonly items: (value: unknown) => readonly Json[];
  /** What identifies an item, as sent and as decoded. */
  readonly identity: (raw: Json) => unknown;
  readonly decodedIdentity: (decoded: Json) => unknown;
}

const listEndpoints: readonly ListEndpoint[] = [
  {
    name: 'hosts',
    plural: 'hosts',
    spec: {
      required: { uuid: hex32 },
      optional: {
        hostname: word,
        type: word,
        agent_version: fc.constantFrom('1.8.11-1', '1.9.0-2'),
        last_seen: time,
        online: fc.boolean(),
        allowed: fc.boolean(),
        server_kinds: fc.array(fc.constantFrom('web-server', 'database', 'cache')),
        tags: fc.array(fc.constantFrom('env:prod', 'canary', 'team:a')),
        created_at: time,
      },
      numericIds: [],
    },
    items: (value) => (value as { hosts: Json[] }).hosts,
    identity: (raw) => raw.uuid,
    decodedIdentity: (host) => host.uuid,
  },
  {
    name: 'components',
    plural: 'components',
    spec: {
      required: { display_name: word.map((w) => `${w} @ web-1`) },
      optional: { type: fc.constantFrom('nginx', 'phpfpm', 'mysql', 'varnish'), local_id: hex32, host_uuid: hex32, version: word, pid: id, name: word },
      numericIds: [],
      standIns: ['local_id', 'name'],
    },
    items: (value) => (value as { components: Json[] }).components,
    identity: (raw) => raw.display_name,
    decodedIdentity: (component) => component.display_name,
  },
  {
    name: 'alertRules',
    plural: 'rules',
    spec: {
      required: { id },
      optional: {
        name: word,
        metric: fc.constantFrom('system.cpu.user', 'nginx.http.status.5xx'),
        operator: fc.constantFrom('>', '<', '>=', 'gt'),
        threshold: fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        duration_seconds: fc.integer({ min: 0, max: 86_400 }),
        enabled: fc.boolean(),
        host_uuid: hex32,
      },
      numericIds: ['id'],
    },
    items: (value) => value as Json[],
    identity: (raw) => String(raw.id),
    decodedIdentity: (rule) => rule.id,
  },
  {
    name: 'recentAlerts',
    plural: 'alerts',
    spec: {
      required: { type: fc.constantFrom('website_down', 'host_alert'), id },
      optional: { source_id: id, source_name: word, host_uuid: hex32, message: word, occurred_at: time },
      numericIds: ['id'],
    },
    items: (value) => value as Json[],
    identity: (raw) => `${String(raw.type)} ${Number(raw.id)}`,
    decodedIdentity: (event) => `${String(event.type)} ${Number(event.id)}`,
  },
  {
    name: 'websites',
    plural: 'websites',
    spec: {
      required: { id },
      optional: {
        name: word,
        url: word.map((w) => `https://${w}.example/`),
        enabled: fc.boolean(),
        check_interval_seconds: fc.integer({ min: 30, max: 3600 }),
        up: fc.boolean(),
        last_checked_at: time,
        last_status_code: fc.integer({ min: 100, max: 599 }),
        checks_24h: fc.nat(),
        failures_24h: fc.nat(),
        uptime_pct_24h: fc.double({ min: 0, max: 100, noNaN: true }),
        avg_ttfb_ms_24h: fc.double({ min: 0, max: 30_000, noNaN: true }),
        p95_ttfb_ms_24h: fc.double({ min: 0, max: 30_000, noNaN: true }),
      },
      numericIds: ['id'],
    },
    items: (value) => (value as { websites: Json[] }).websites,
    identity: (raw) => Number(raw.id),
    decodedIdentity: (site) => site.id,
  },
  {
    name: 'checks',
    plural: 'checks',
    spec: {
      // A check always says whether it succeeded: a list none of whose checks carries success, status or TTFB is a shape failure.
      required: { id, checked_at: time, success: fc.boolean() },
      optional: {
        status_code: fc.integer({ min: 100, max: 599 }),
        ttfb_ms: fc.nat({ max: 30_000 }),
        http_version: fc.constantFrom('HTTP/1.1', 'HTTP/2'),
        tls_version: fc.constantFrom('TLSv1.2', 'TLSv1.3'),
        cert_days_remaining: fc.integer({ min: -10, max: 400 }),
        dns_lookup: fc.nat({ max: 2000 }),
        tls_handshake: fc.nat({ max: 2000 }),
        security_score: fc.integer({ min: 0, max: 100 }),
        has_hsts: fc.boolean(),
        has_csp: fc.boolean(),
        cf_cache_status: fc.constantFrom('HIT', 'MISS'),
        cf_datacenter: fc.constantFrom('FRA', 'AMS'),
      },
      numericIds: ['id'],
    },
    items: (value) => (value as { checks: Json[] }).checks,
    identity: (raw) => Number(raw.id),
    decodedIdentity: (check) => check.id,
  },
];

describe.each(listEndpoints)('$name: any reasonable page', ({ name, plural, spec, items, identity, decodedIdentity }) => {
  it('is never refused, and every well-formed item survives in order', () => {
    fc.assert(
      fc.property(
        fc.array(item(spec), { maxLength: 8 }).chain((list) => wrapped(plural, list).map((body) => ({ list, body }))),
        ({ list, body }) => {
          const { value, dropped } = monitoringDecoders[name](JSON.parse(JSON.stringify(body)), context);
          expect(dropped).toEqual([]);
          expect(items(value).map(decodedIdentity)).toEqual(list.map(identity));
        },
      ),
      RUNS,
    );
  });

  it('drops malformed items one by one and keeps the rest', () => {
    const malformed = fc.oneof(
      fc.constantFrom<unknown>('text', 42, null, [1, 2], true),
      item(spec).map((good) => Object.fromEntries(Object.entries(good).filter(([key]) => !(key in spec.required) && !spec.standIns?.includes(key)))),
    );
    fc.assert(
      fc.property(
        fc.array(item(spec), { minLength: 1, maxLength: 6 }),
        fc.array(malformed, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
        (good, bad, slots) => {
          const mixed: unknown[] = [...good];
          bad.forEach((b, i) => mixed.splice((slots[i] ?? 0) % (mixed.length + 1), 0, b));
          const { value, dropped } = monitoringDecoders[name]({ [plural]: mixed }, context);
          expect(dropped).toHaveLength(bad.length);
          expect(items(value).map(decodedIdentity)).toEqual(good.map(identity));
        },
      ),
      RUNS,
    );
  });
});

describe('metric catalogue: any of the four layouts', () => {
  const names = fc.uniqueArray(
    fc.tuple(fc.constantFrom('system', 'nginx', 'mysql'), word).map(([component, rest]) => `${component}.${rest}`),
    { minLength: 1, maxLength: 12 },
  );
  it('gives every name, grouped by its component', () => {
    fc.assert(
      fc.property(names, fc.integer({ min: 0, max: 4 }), fc.boolean(), (list, layout, wrap) => {
        const group = (n: string) => n.split('.', 1)[0] ?? n;
        const grouped: Record<string, string[]> = {};
        for (const n of list) (grouped[group(n)] ??= []).push(n);
        const bodies: unknown[] = [
          grouped,
          list,
          list.map((n) => ({ name: n, component: group(n) })),
          Object.entries(grouped).map(([component, metrics]) => ({ component, metrics })),
          list.map((n) => ({ metric: n })),
        ];
        const inner = bodies[layout];
        const body = wrap ? { host_uuid: 'h', metrics: inner } : inner;
        const { value, dropped } = monitoringDecoders.metricCatalogue(body, context);
        expect(dropped).toEqual([]);
        expect(Object.values(value.metrics).flat().sort()).toEqual([...list].sort());
        for (const [component, members] of Object.entries(value.metrics)) for (const n of members) expect(group(n)).toBe(component);
      }),
      RUNS,
    );
  });
});

describe('single objects: any reasonable body', () => {
  const wrap = (key: string, body: Json) =>
    fc.constantFrom<unknown>(body, { data: body }, { [key]: body }, { data: { [key]: body }, request_id: 'r-1' });

  it('/account with a plan is never refused and keeps the rate limit it states', () => {
    const account = item({
      required: { plan: fc.constantFrom('pro', 'business') },
      optional: {
        limits: fc.record({ hosts: fc.nat(), websites: fc.nat() }),
        usage: fc.record({ hosts: fc.nat() }),
        rate_limit: fc.record({ per_minute: fc.integer({ min: 1, max: 10_000 }), burst: fc.integer({ min: 1, max: 100 }) }),
      },
      numericIds: [],
    });
    fc.assert(
      fc.property(account.chain((body) => wrap('account', body).map((wrapped) => ({ body, wrapped }))), ({ body, wrapped }) => {
        const { value } = monitoringDecoders.account(JSON.parse(JSON.stringify(wrapped)), context);
        const stated = (body.rate_limit as { per_minute?: number } | null | undefined)?.per_minute;
        expect(value.rate_limit.requests_per_minute).toBe(stated);
      }),
      RUNS,
    );
  });

  it('/websites/{id} with a figure is never refused and keeps each uptime window it states', () => {
    const summary = item({
      required: { id, uptime_pct_7d: fc.double({ min: 0, max: 100, noNaN: true }) },
      optional: {
        name: word,
        uptime_pct_24h: fc.double({ min: 0, max: 100, noNaN: true }),
        avg_ttfb_ms_24h: fc.nat(),
        tls: fc.record({ version: fc.constantFrom('TLSv1.3'), cert_expires_at: time }, { requiredKeys: [] }),
        recent_checks: fc.array(fc.record({ id, checked_at: time })),
      },
      numericIds: ['id'],
    });
    fc.assert(
      fc.property(summary.chain((body) => wrap('website', body).map((wrapped) => ({ body, wrapped }))), ({ body, wrapped }) => {
        const { value, dropped } = monitoringDecoders.websiteSummary(JSON.parse(JSON.stringify(wrapped)), context);
        expect(dropped).toEqual([]);
        expect(value.id).toBe(Number(body.id));
        expect(value.uptime['7d']).toBeCloseTo(Number(body.uptime_pct_7d) / 100, 12);
      }),
      RUNS,
    );
  });

  it('/hosts/{uuid}/metrics/{name}/latest is never refused when it has a value', () => {
    const point = fc.record({ value: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null)), timestamp: time });
    fc.assert(
      fc.property(point, fc.constantFrom('point', 'data', 'latest', ''), extraFields, (p, key, extra) => {
        const body = key === '' ? { ...extra, ...p } : { ...extra, [key]: p };
        expect(monitoringDecoders.latest(body, context).value).toEqual(p);
      }),
      RUNS,
    );
  });

  it('/hosts/{uuid}/metrics/series keeps every point, values as numbers or numeric strings', () => {
    const points = fc.array(fc.record({ timestamp: time, value: fc.oneof(fc.integer(), fc.constant(null)) }), { maxLength: 10 });
    fc.assert(
      fc.property(fc.dictionary(word.map((w) => `system.${w}`), points, { minKeys: 1, maxKeys: 5 }), fc.boolean(), (series, asText) => {
        const sent = Object.fromEntries(
          Object.entries(series).map(([n, ps]) => [n, ps.map((p) => ({ ...p, value: asText && p.value !== null ? String(p.value) : p.value }))]),
        );
        const { value, dropped } = monitoringDecoders.series({ interval: 60, series: sent }, context);
        expect(dropped).toEqual([]);
        expect(value.series).toEqual(series);
      }),
      RUNS,
    );
  });
});
