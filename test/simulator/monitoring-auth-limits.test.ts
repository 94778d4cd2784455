import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeClock } from '../../src/lib/clock.js';
import type { RunningSimulator } from '../../simulator/index.js';
import {
  SimAccountBody as Account,
  SimErrorBody as ErrorBody,
  SimHostList as HostList,
  SimSeriesResponse as SeriesResponse,
  SimWebsiteCheckList as WebsiteCheckList,
  SimWebsiteList as WebsiteList,
} from '../../simulator/monitoring/schemas.js';
import { call, everyEndpoint, parseWith, startTestSimulator, type Answer } from './monitoring-helpers.js';

const DAY = 86_400_000;

describe('§5 authentication and §7 errors', () => {
  let sim: RunningSimulator;
  let uuid: string;
  let otherUuid: string;
  let websiteId: number;
  let otherWebsiteId: number;
  const get = (path: string, options: Parameters<typeof call>[1] = {}): Promise<Answer> => call(`${sim.monitoringBaseUrl}${path}`, options);

  beforeAll(async () => {
    ({ sim } = await startTestSimulator());
    uuid = parseWith(HostList, (await get('/hosts', { key: sim.keys.pro })).json).hosts[0]!.uuid;
    otherUuid = parseWith(HostList, (await get('/hosts', { key: sim.keys.business })).json).hosts[0]!.uuid;
    websiteId = parseWith(WebsiteList, (await get('/websites', { key: sim.keys.pro })).json).websites[0]!.id;
    otherWebsiteId = parseWith(WebsiteList, (await get('/websites', { key: sim.keys.business })).json).websites[0]!.id;
  });

  afterAll(async () => {
    await sim.close();
  });

  const endpoints = (): string[] => everyEndpoint(uuid, websiteId);

  it('§5 rule 1-2: the account key works as Authorization: Bearer and as X-Api-Key, with identical answers', async () => {
    for (const path of endpoints()) {
      const bearer = await get(path, { key: sim.keys.pro, as: 'bearer' });
      const header = await get(path, { key: sim.keys.pro, as: 'x-api-key' });
      expect(bearer.status, path).toBe(200);
      expect(header.status, path).toBe(200);
      // /account differs only in the remaining-requests figure, which each request lowers.
      const withoutRemaining = (body: unknown): unknown => JSON.stringify(body).replace(/"remaining":\d+/, '');
      expect(withoutRemaining(bearer.json), path).toEqual(withoutRemaining(header.json));
    }
  });

  it('§5 rule 2: both headers may be sent when they carry the same key; different keys are 401', async () => {
    const same = await get('/hosts', { headers: { authorization: `Bearer ${sim.keys.pro}`, 'x-api-key': sim.keys.pro } });
    expect(same.status).toBe(200);
    const different = await get('/hosts', { headers: { authorization: `Bearer ${sim.keys.pro}`, 'x-api-key': sim.keys.business } });
    expect(different.status).toBe(401);
    expect(different.text).not.toContain(sim.keys.pro);
    expect(different.text).not.toContain(sim.keys.business);
  });

  it.each<[string, string]>([
    ['Basic', 'Basic dXNlcjpwYXNz'],
    ['Digest', 'Digest username="ops", realm="proxy"'],
    ['Token', 'Token abc123'],
    ['an empty Bearer', 'Bearer '],
  ])('§5 rule 2: an X-Api-Key beside a %s Authorization header (not a bearer token) authenticates by the key', async (_scheme, authorization) => {
    const answer = await get('/hosts', { headers: { authorization, 'x-api-key': sim.keys.pro } });
    expect(answer.status).toBe(200);
    expect(parseWith(HostList, answer.json).hosts.length).toBeGreaterThan(0);
    const wrongKey = await get('/hosts', { headers: { authorization, 'x-api-key': 'not-a-real-key' } });
    expect(wrongKey.status).toBe(401);
  });

  it.each<[string, Record<string, string>]>([
    ['no key at all', {}],
    ['an unknown key as X-Api-Key', { 'x-api-key': 'not-a-real-key' }],
    ['an unknown key as Bearer', { authorization: 'Bearer not-a-real-key' }],
    ['Basic instead of Bearer', { authorization: 'Basic c2ltLXByby1rZXk6' }],
    ['Bearer without a key', { authorization: 'Bearer ' }],
    ['an empty X-Api-Key', { 'x-api-key': '' }],
    ['the marketplace key, which is not a monitoring key', { 'x-api-key': 'sim-marketplace-key' }],
  ])('§5 rule 3: %s is 401 unauthorized on every endpoint, without echoing the key', async (_case, headers) => {
    for (const path of endpoints()) {
      const answer = await get(path, { headers });
      expect(answer.status, path).toBe(401);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      const body = parseWith(ErrorBody, answer.json);
      expect(body.error).toBe('unauthorized');
      expect(body.message.length).toBeGreaterThan(5);
      for (const value of Object.values(headers)) {
        const secret = value.replace(/^(Bearer|Basic) /, '');
        if (secret.length > 3) expect(answer.text).not.toContain(secret);
      }
    }
  });

  it('§5 rule 4: the Starter key is 403 plan_required with upgrade_url on every endpoint', async () => {
    for (const path of endpoints()) {
      const answer = await get(path, { key: sim.keys.starter });
      expect(answer.status, path).toBe(403);
      const body = parseWith(ErrorBody, answer.json);
      expect(body.error).toBe('plan_required');
      expect(body.upgrade_url).toMatch(/^https:\/\//);
      expect(answer.text).not.toContain(sim.keys.starter);
    }
  });

  it('§5 rule 4: the OpenAPI document is public (no key needed), documented as such', async () => {
    expect((await get('/openapi.json')).status).toBe(200);
    expect((await get('/openapi.json', { key: sim.keys.starter })).status).toBe(200);
  });

  it.each<[string, () => string]>([
    ['an unknown host uuid', () => `/hosts/${'f'.repeat(32)}`],
    ["another account's host", () => `/hosts/${otherUuid}`],
    ["another account's host metrics", () => `/hosts/${otherUuid}/metrics`],
    ["another account's host series", () => `/hosts/${otherUuid}/metrics/series?names=system.cpu.user`],
    ["another account's host latest value", () => `/hosts/${otherUuid}/metrics/system.cpu.user/latest`],
    ["another account's host components", () => `/hosts/${otherUuid}/components`],
    ['an unknown website id', () => '/websites/123456789'],
    ["another account's website", () => `/websites/${otherWebsiteId}`],
    ["another account's website checks", () => `/websites/${otherWebsiteId}/checks`],
    ['an unknown path', () => '/nothing-here'],
  ])('§5 rule 5: %s is 404 not_found', async (_case, path) => {
    const answer = await get(path(), { key: sim.keys.pro });
    expect(answer.status).toBe(404);
    expect(parseWith(ErrorBody, answer.json).error).toBe('not_found');
  });

  it('§7: every error status has its code and a {error, message} JSON body', async () => {
    const cases: [Answer, number, string][] = [
      [await get('/alerts/recent?limit=0', { key: sim.keys.pro }), 400, 'bad_request'],
      [await get('/hosts'), 401, 'unauthorized'],
      [await get('/hosts', { key: sim.keys.starter }), 403, 'plan_required'],
      [await get(`/hosts/${'0'.repeat(32)}`, { key: sim.keys.pro }), 404, 'not_found'],
      [await get('/hosts', { key: sim.keys.pro, method: 'POST' }), 404, 'not_found'],
    ];
    for (const [answer, status, code] of cases) {
      expect(answer.status).toBe(status);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      const body = parseWith(ErrorBody, answer.json);
      expect(body.error).toBe(code);
      expect(typeof body.message).toBe('string');
      expect(Object.keys(body).sort()).toEqual(status === 403 ? ['error', 'message', 'upgrade_url'] : ['error', 'message']);
    }
  });
});

describe('§8 limits', () => {
  let sim: RunningSimulator;
  let clock: FakeClock;
  const get = (path: string, key: string): Promise<Answer> => call(`${sim.monitoringBaseUrl}${path}`, { key });

  beforeAll(async () => {
    ({ sim, clock } = await startTestSimulator({ rateLimitPerMinute: 120, burst: 30 }));
  });

  afterEach(() => {
    sim.limiter.reset();
    clock.advance(60_000);
  });

  afterAll(async () => {
    await sim.close();
  });

  it('§8 request rate: a burst of 30 passes, the 31st is 429 rate_limited stating 120 per minute per key', async () => {
    for (let i = 0; i < 30; i++) expect((await get('/hosts', sim.keys.pro)).status, `request ${i + 1}`).toBe(200);
    const refused = await get('/hosts', sim.keys.pro);
    expect(refused.status).toBe(429);
    const body = parseWith(ErrorBody, refused.json);
    expect(body.error).toBe('rate_limited');
    expect(body.message).toContain('120 requests per minute per API key');
    expect(refused.headers.get('retry-after')).toBe('1');
  });

  it('§7: errors are exactly the seed\'s table: 400 bad_request, 401 unauthorized, 403 plan_required with upgrade_url, 404 not_found, 429 rate_limited stating 120 per minute per key', async () => {
    const expected: Record<number, string> = { 400: 'bad_request', 401: 'unauthorized', 403: 'plan_required', 404: 'not_found', 429: 'rate_limited' };
    const answers: Answer[] = [
      await get('/alerts/recent?limit=x', sim.keys.pro),
      await get('/hosts/nope/metrics/series?since=1y', sim.keys.pro),
      await get('/hosts', 'not-a-key'),
      await get('/account', sim.keys.starter),
      await get('/websites/1', sim.keys.pro),
      await call(`${sim.monitoringBaseUrl}/hosts`, { key: sim.keys.pro, method: 'DELETE' }),
      await call(`${sim.monitoringBaseUrl}/account`, { method: 'PUT' }),
    ];
    sim.limiter.reset();
    for (let i = 0; i < 31; i++) answers.push(await get('/alerts', sim.keys.business));
    const seen = new Set<number>();
    for (const answer of answers.filter((a) => a.status >= 400)) {
      seen.add(answer.status);
      const body = parseWith(ErrorBody, answer.json);
      expect(expected[answer.status], `status ${answer.status}`).toBeDefined();
      expect(body.error).toBe(expected[answer.status]);
      expect(Object.keys(body).sort()).toEqual(answer.status === 403 ? ['error', 'message', 'upgrade_url'] : ['error', 'message']);
      if (answer.status === 429) expect(body.message).toContain('120 requests per minute per API key');
      if (answer.status === 403) expect(body.upgrade_url).toMatch(/^https:\/\//);
    }
    expect([...seen].sort()).toEqual([400, 401, 403, 404, 429]);
  });

  it('§8 request rate: tokens return at 2 per second (120 per minute)', async () => {
    for (let i = 0; i < 30; i++) await get('/account', sim.keys.pro);
    expect((await get('/account', sim.keys.pro)).status).toBe(429);
    clock.advance(499);
    expect((await get('/account', sim.keys.pro)).status).toBe(429);
    clock.advance(1);
    expect((await get('/account', sim.keys.pro)).status).toBe(200);
    expect((await get('/account', sim.keys.pro)).status).toBe(429);
    clock.advance(10_000);
    let passed = 0;
    while ((await get('/account', sim.keys.pro)).status === 200) passed++;
    expect(passed).toBe(20);
  });

  it('§7 429: every refused request is counted and answered 429 until a token returns', async () => {
    sim.resetStats();
    for (let i = 0; i < 35; i++) await get('/alerts', sim.keys.pro);
    expect(sim.stats().monitoring.pro!.by_status).toEqual({ '200': 30, '429': 5 });
  });

  it('§8 the limit is per API key: Pro exhausting its bucket does not affect Business', async () => {
    for (let i = 0; i < 31; i++) await get('/hosts', sim.keys.pro);
    expect((await get('/hosts', sim.keys.pro)).status).toBe(429);
    expect((await get('/hosts', sim.keys.business)).status).toBe(200);
  });

  it('§8 the Starter key is rate limited too (its 403s count against its key); invalid keys are not', async () => {
    for (let i = 0; i < 30; i++) expect((await get('/hosts', sim.keys.starter)).status).toBe(403);
    expect((await get('/hosts', sim.keys.starter)).status).toBe(429);
    for (let i = 0; i < 40; i++) expect((await get('/hosts', 'made-up-key')).status).toBe(401);
  });

  it('§8 /account reports the remaining requests from the limiter', async () => {
    const first = parseWith(Account, (await get('/account', sim.keys.pro)).json);
    expect(first.rate_limit).toEqual({ requests_per_minute: 120, burst: 30, remaining: 29 });
    await get('/hosts', sim.keys.pro);
    const third = parseWith(Account, (await get('/account', sim.keys.pro)).json);
    expect(third.rate_limit?.remaining).toBe(27);
  });

  it.each([
    ['pro', 30],
    ['business', 90],
  ] as const)('§8 retention: a %s series window longer than %d days is clamped to the retention boundary', async (plan, days) => {
    const key = sim.keys[plan];
    const uuid = parseWith(HostList, (await get('/hosts', key)).json).hosts.find((h) => h.allowed)!.uuid;
    for (const since of ['200d', '52w', `${days + 1}d`, `${days * 24 * 60 + 1}m`]) {
      const answer = await get(`/hosts/${uuid}/metrics/series?names=system.cpu.user&since=${since}`, key);
      expect(answer.status, since).toBe(200);
      const body = parseWith(SeriesResponse, answer.json);
      expect(Date.parse(body.since), since).toBe(Math.floor((clock.now() - days * DAY) / 1000) * 1000);
      expect(body.interval).toBe(3600);
      const points = body.series['system.cpu.user']!;
      expect(Date.parse(points[0]!.timestamp)).toBeGreaterThanOrEqual(clock.now() - days * DAY);
    }
    const inside = parseWith(SeriesResponse, (await get(`/hosts/${uuid}/metrics/series?names=system.cpu.user&since=${days - 1}d`, key)).json);
    expect(Date.parse(inside.since)).toBe(Math.floor((clock.now() - (days - 1) * DAY) / 1000) * 1000);
  });

  it('§8 retention: the interval is chosen from the clamped window, and both readings agree because retention exceeds 1 week', async () => {
    const uuid = parseWith(HostList, (await get('/hosts', sim.keys.pro)).json).hosts[0]!.uuid;
    const clamped = parseWith(SeriesResponse, (await get(`/hosts/${uuid}/metrics/series?names=system.cpu.user&since=100w`, sim.keys.pro)).json);
    const exact = parseWith(SeriesResponse, (await get(`/hosts/${uuid}/metrics/series?names=system.cpu.user&since=30d`, sim.keys.pro)).json);
    expect(clamped).toEqual(exact);
  });

  it('§8 retention: checks with a window longer than retention are clamped, not rejected', async () => {
    const id = parseWith(WebsiteList, (await get('/websites', sim.keys.pro)).json).websites[0]!.id;
    const answer = await get(`/websites/${id}/checks?since=52w&limit=1`, sim.keys.pro);
    expect(answer.status).toBe(200);
    const oldest = parseWith(WebsiteCheckList, answer.json).checks[0]!;
    expect(Date.parse(oldest.checked_at)).toBeGreaterThanOrEqual(clock.now() - 30 * DAY);
    expect(Date.parse(oldest.checked_at)).toBeLessThan(clock.now() - 30 * DAY + DAY);
  });

  it('§8 checks limit: maximum 500 (501 is 400), default 100 without parameters', async () => {
    const id = parseWith(WebsiteList, (await get('/websites', sim.keys.pro)).json).websites[0]!.id;
    expect(parseWith(WebsiteCheckList, (await get(`/websites/${id}/checks?limit=500`, sim.keys.pro)).json).checks.length).toBe(500);
    expect((await get(`/websites/${id}/checks?limit=501`, sim.keys.pro)).status).toBe(400);
    expect((await get(`/websites/${id}/checks?since=1w&limit=501`, sim.keys.pro)).status).toBe(400);
    expect(parseWith(WebsiteCheckList, (await get(`/websites/${id}/checks`, sim.keys.pro)).json).checks.length).toBe(100);
  });

  it('§8 hosts beyond the plan host limit have allowed false', async () => {
    const account = parseWith(Account, (await get('/account', sim.keys.pro)).json);
    const hosts = parseWith(HostList, (await get('/hosts', sim.keys.pro)).json).hosts;
    const limit = account.limits!.hosts;
    expect(hosts.length).toBeGreaterThan(limit);
    expect(hosts.filter((h) => h.allowed).length).toBe(limit);
  });
});

describe('§8 Retry-After can be switched off', () => {
  it('with retryAfter false a 429 carries no Retry-After header', async () => {
    const { sim } = await startTestSimulator({ rateLimitPerMinute: 60, burst: 1, retryAfter: false });
    try {
      expect((await call(`${sim.monitoringBaseUrl}/hosts`, { key: sim.keys.pro })).status).toBe(200);
      const refused = await call(`${sim.monitoringBaseUrl}/hosts`, { key: sim.keys.pro });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBeNull();
      expect(parseWith(ErrorBody, refused.json).message).toContain('60 requests per minute per API key');
    } finally {
      await sim.close();
    }
  });
});
