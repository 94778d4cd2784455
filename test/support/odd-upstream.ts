import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A Monitoring API written by hand for issue 17, independent of the simulator and of the
 * exporter's decoders: where the API document says a body is "not shown", it answers in
 * layouts no other upstream of the project uses (camelCase, values under `result`,
 * `subscription`, `window24h` and `timing` objects, lists grouped by role, ISO 8601 periods,
 * a rate limit as a count and a window, a paused flag, rule scopes as host id lists,
 * abbreviations such as `ver` and `ts`). The documented bodies (hosts, series, events) follow
 * the document. The data is fixed, so a test knows the truth of every field.
 */

export const ODD_KEY = 'odd-key-3fa9c1';
export const ODD_HOSTS = ['a1b2c3d4e5f60718293a4b5c6d7e8f90', 'f0e1d2c3b4a5968778695a4b3c2d1e0f'] as const;
const NOW = '2026-11-22T12:00:00Z';

/** What each body says, for the test to compare against. */
export const ODD_TRUTH = {
  plan: 'business',
  hostLimit: 50,
  websiteLimit: 20,
  retentionDays: 90,
  ratePerMinute: 120,
  burst: 30,
  websites: [
    { id: 40001, name: 'shop.odd', url: 'https://shop.odd/', paused: false, intervalSeconds: 60, up: true, statusCode: 200, checks24h: 1440, failures24h: 3, uptime24h: 0.995, ttfbAvg: 0.1824, ttfbP95: 0.42 },
    { id: 40002, name: 'blog.odd', url: 'https://blog.odd/', paused: true, intervalSeconds: 300, up: true, statusCode: 200, checks24h: 0, failures24h: 0, uptime24h: 1, ttfbAvg: 0.2, ttfbP95: 0.3 },
  ],
  summary: { uptime7d: 0.991, uptime30d: 0.985, certExpires: '2027-01-02T08:00:00Z', issuer: 'R3', tls: 'TLSv1.3' },
  rule: { id: '9', name: 'cpu high', metric: 'system.cpu.user', operator: '>', threshold: 90, hosts: [...ODD_HOSTS] },
  checks: [
    { id: 9001, at: '2026-11-22T11:58:00Z', success: true, statusCode: 200, ttfb: 0.12 },
    { id: 9002, at: '2026-11-22T11:59:00Z', success: false, statusCode: 503, ttfb: 0.9 },
  ],
} as const;

function account(): unknown {
  return {
    result: {
      subscription: {
        tier: ODD_TRUTH.plan,
        quota: { maxHosts: String(ODD_TRUTH.hostLimit), maxSites: ODD_TRUTH.websiteLimit },
        api: { limit: { count: ODD_TRUTH.ratePerMinute * 60, window: '1h' }, burstSize: ODD_TRUTH.burst },
        retentionPeriod: `P${ODD_TRUTH.retentionDays}D`,
      },
      usage: { hostCount: 2, siteCount: 2 },
    },
  };
}

function host(uuid: string, n: number) {
  return {
    uuid,
    hostname: `odd-${n}`,
    type: 'vm',
    agent_version: '1.8.11-1',
    last_seen: NOW,
    online: true,
    allowed: true,
    server_kinds: ['web-server'],
    tags: ['env:prod'],
    created_at: '2025-01-01T00:00:00Z',
  };
}

function websites(): unknown {
  return {
    monitors: {
      items: ODD_TRUTH.websites.map((w) => ({
        monitorId: String(w.id),
        displayName: w.name,
        target: { url: w.url },
        isPaused: w.paused,
        intervalSec: String(w.intervalSeconds),
        lastResult: { ok: w.up, httpCode: w.statusCode, ts: Date.parse(NOW) / 1000 },
        window24h: {
          availabilityPercent: String(w.uptime24h * 100),
          checksTotal: w.checks24h,
          checksFailed: w.failures24h,
          firstByteMs: { mean: w.ttfbAvg * 1000, p95: w.ttfbP95 * 1000 },
        },
      })),
      pageInfo: { hasMore: false },
    },
  };
}

function summary(): unknown {
  const s = ODD_TRUTH.summary;
  return {
    site: { monitorId: '40001', displayName: 'shop.odd' },
    availability: { last7Days: s.uptime7d, last30Days: s.uptime30d },
    certificate: { validTo: s.certExpires, issuerName: s.issuer, daysLeft: 41 },
    protocol: s.tls,
  };
}

function checks(): unknown {
  return {
    page: {
      checks: ODD_TRUTH.checks.map((c) => ({
        checkId: c.id,
        at: c.at,
        result: c.success ? 'passed' : 'failed',
        http: { code: c.statusCode, version: 'h2' },
        timing: { firstByteMs: c.ttfb * 1000, dnsMs: 5, tlsMs: 30 },
        tls: { protocol: 'TLSv1.3', certDaysLeft: 41 },
        score: 80,
        headers: { strictTransportSecurity: true, contentSecurityPolicy: false },
        edge: { cacheStatus: 'HIT', pop: 'FRA' },
      })),
      cursor: null,
    },
  };
}

function components(): unknown {
  return {
    detected: {
      web: [{ software: 'nginx', ver: '1.27.3', title: 'nginx @ odd-1' }],
      db: [{ software: 'mariadb', ver: '10.11.10', title: 'db @ odd-1' }],
    },
  };
}

function rules(): unknown {
  const r = ODD_TRUTH.rule;
  return {
    rules: [
      {
        ruleId: r.id,
        title: r.name,
        watch: { metric: r.metric, comparator: 'above', threshold: String(r.threshold) },
        sustainSeconds: 300,
        muted: false,
        appliesTo: { hostIds: r.hosts },
      },
    ],
  };
}

function series(url: URL): unknown {
  const names = (url.searchParams.get('names') ?? '').split(',').filter((n) => n !== '');
  const points = Array.from({ length: 10 }, (_, i) => ({ timestamp: new Date(Date.parse(NOW) - (10 - i) * 60_000).toISOString().replace('.000Z', 'Z'), value: 10 + i }));
  return { host_uuid: url.pathname.split('/')[4], since: points[0]?.timestamp, interval: 60, series: Object.fromEntries(names.map((n) => [n, points])) };
}

const OPENAPI = { openapi: '3.0.3', info: { title: 'Odd Monitoring API', version: '2.0.0' }, paths: { '/hosts': {}, '/websites': {} } };

function route(url: URL): unknown {
  const path = url.pathname.replace(/^\/api\/v2/, '');
  const parts = path.split('/').filter((p) => p !== '');
  if (path === '/account') return account();
  if (path === '/openapi.json') return OPENAPI;
  if (path === '/hosts') return { hosts: ODD_HOSTS.map((uuid, n) => host(uuid, n + 1)), total: ODD_HOSTS.length };
  if (parts[0] === 'hosts' && parts.length === 2) return host(parts[1] ?? '', 1);
  if (parts[0] === 'hosts' && parts[2] === 'metrics' && parts.length === 3) return { host_uuid: parts[1], metrics: { system: ['system.cpu.user'] } };
  if (parts[0] === 'hosts' && parts[2] === 'metrics' && parts[3] === 'series') return series(url);
  if (parts[0] === 'hosts' && parts[2] === 'metrics' && parts[4] === 'latest') return { reading: { value: 19, timestamp: new Date(Date.parse(NOW) - 60_000).toISOString() } };
  if (parts[0] === 'hosts' && parts[2] === 'components') return components();
  if (path === '/alerts') return rules();
  if (path === '/alerts/recent') return { alerts: [] };
  if (path === '/websites') return websites();
  if (parts[0] === 'websites' && parts.length === 2) return summary();
  if (parts[0] === 'websites' && parts[2] === 'checks') return checks();
  return undefined;
}

export interface OddUpstream {
  readonly baseUrl: string;
  /** Request paths served, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

export async function startOddUpstream(): Promise<OddUpstream> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://odd');
    requests.push(url.pathname);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${ODD_KEY}`) return send(401, { error: 'unauthorized' });
    const body = route(url);
    if (body === undefined) send(404, { error: 'not found' });
    else send(200, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v2`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
