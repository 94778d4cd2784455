import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeClock } from '../../src/lib/clock.js';
import type { RunningSimulator } from '../../simulator/index.js';
import { DRIFT_EXTRA_FIELD } from '../../simulator/faults.js';
import { SimHostList as HostList } from '../../simulator/monitoring/schemas.js';
import { call, parseWith, startTestSimulator, type Answer } from './monitoring-helpers.js';

let sim: RunningSimulator;
let clock: FakeClock;

const admin = (path: string, method = 'GET', body?: unknown): Promise<Answer> =>
  call(`${sim.adminUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
const hosts = (key: string = sim.keys.pro): Promise<Answer> => call(`${sim.monitoringBaseUrl}/hosts`, { key });

beforeAll(async () => {
  ({ sim, clock } = await startTestSimulator());
});

afterEach(async () => {
  await admin('/faults', 'DELETE');
});

afterAll(async () => {
  await sim.close();
});

describe('/_sim/stats', () => {
  it('counts requests per listener and per client by status, naming keys by account, with first and last times', async () => {
    await admin('/stats/reset', 'POST');
    const start = clock.now();
    await hosts(sim.keys.pro);
    clock.advance(5_000);
    await hosts(sim.keys.pro);
    await hosts(sim.keys.starter);
    await hosts('wrong-key');
    await call(`${sim.monitoringBaseUrl}/hosts`);
    await call(`${sim.releasesBaseUrl}/nginx/nginx`);
    await call(`${sim.marketplaceBaseUrl}/version?project=nginx`, { headers: { 'X-RapidAPI-Key': sim.keys.marketplace } });
    await call(`${sim.marketplaceBaseUrl}/version?project=nginx`, { headers: { 'X-RapidAPI-Key': 'nope' } });

    const stats = (await admin('/stats')).json as {
      monitoring: Record<string, { total: number; by_status: Record<string, number>; first_request_ms: number; last_request_ms: number; first_request_at: string }>;
      releases: Record<string, { total: number }>;
      marketplace: Record<string, { total: number; by_status: Record<string, number> }>;
    };
    expect(stats.monitoring.pro).toMatchObject({ total: 2, by_status: { '200': 2 }, first_request_ms: start, last_request_ms: start + 5_000 });
    expect(stats.monitoring.pro!.first_request_at).toBe(new Date(start).toISOString().replace('.000Z', 'Z'));
    expect(stats.monitoring.starter).toMatchObject({ total: 1, by_status: { '403': 1 } });
    expect(stats.monitoring.invalid).toMatchObject({ total: 1, by_status: { '401': 1 } });
    expect(stats.monitoring.none).toMatchObject({ total: 1, by_status: { '401': 1 } });
    expect(Object.values(stats.releases).reduce((sum, s) => sum + s.total, 0)).toBe(1);
    expect(stats.marketplace.marketplace!.total).toBe(1);
    expect(stats.marketplace.invalid!.by_status).toEqual({ '401': 1 });
    const text = JSON.stringify(stats);
    for (const key of Object.values(sim.keys)) expect(text).not.toContain(key);

    await admin('/stats/reset', 'POST');
    expect((await admin('/stats')).json).toMatchObject({ monitoring: {}, releases: {}, marketplace: {} });
  });
});

describe('/_sim/faults', () => {
  it('GET shows the current set; POST changes only the named fields of the target; DELETE clears', async () => {
    const set = await admin('/faults', 'POST', { target: 'monitoring', latency_ms: 0, error_503: 0.25 });
    expect(set.status).toBe(200);
    const view = (await admin('/faults')).json as Record<string, { error_503: number; hang: number }>;
    expect(view.monitoring!.error_503).toBe(0.25);
    expect(view.releases!.error_503).toBe(0);
    await call(`${sim.adminUrl}/faults?target=monitoring&hang=0.5`, { method: 'POST' });
    const after = (await admin('/faults')).json as Record<string, { error_503: number; hang: number }>;
    expect(after.monitoring).toMatchObject({ error_503: 0.25, hang: 0.5 });
    await admin('/faults', 'DELETE');
    expect(((await admin('/faults')).json as Record<string, { error_503: number }>).monitoring!.error_503).toBe(0);
  });

  it.each<[string, unknown]>([
    ['a share above 1', { error_500: 2 }],
    ['an unknown field', { explode: true }],
    ['an unknown target', { target: 'database', error_500: 0.1 }],
    ['error shares adding up to more than 1', { error_500: 0.6, error_503: 0.6 }],
    ['a negative latency', { latency_ms: -5 }],
    ['a Retry-After without a storm', { storm_retry_after: 10 }],
  ])('POST with %s is 400 with a message saying what is wrong', async (_case, body) => {
    const answer = await admin('/faults', 'POST', body);
    expect(answer.status).toBe(400);
    expect((answer.json as { error: string; message: string }).error).toBe('bad_request');
    expect((answer.json as { message: string }).message.length).toBeGreaterThan(15);
  });

  it('a body that is not JSON is 400', async () => {
    const answer = await call(`${sim.adminUrl}/faults`, { method: 'POST', body: '{nope', headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(400);
  });

  it.each([
    [500, 'error_500', /^application\/json/],
    [502, 'error_502', /^text\/html/],
    [503, 'error_503', /^application\/json/],
  ] as const)('a share of 1 of %d answers every request with %d', async (status, field, contentType) => {
    await admin('/faults', 'POST', { target: 'monitoring', [field]: 1 });
    const answer = await hosts();
    expect(answer.status).toBe(status);
    expect(answer.headers.get('content-type')).toMatch(contentType);
    const releases = await call(`${sim.releasesBaseUrl}/nginx/nginx`);
    expect(releases.status).not.toBe(status);
  });

  it('malformed JSON keeps the status and breaks the syntax', async () => {
    await admin('/faults', 'POST', { malformed_json: 1 });
    const answer = await hosts();
    expect(answer.status).toBe(200);
    expect(answer.json).toBeUndefined();
    expect(answer.text.startsWith(`{'hosts"`)).toBe(true);
  });

  it('truncated JSON keeps the status and cuts the body mid-way', async () => {
    await admin('/faults', 'DELETE');
    const whole = await hosts();
    await admin('/faults', 'POST', { target: 'monitoring', truncated_json: 1 });
    const cut = await hosts();
    expect(cut.status).toBe(200);
    expect(cut.json).toBeUndefined();
    expect(cut.text).toBe(whole.text.slice(0, Math.floor(whole.text.length / 2)));
  });

  it('schema drift adds unknown fields, removes optional ones and retypes a field', async () => {
    await admin('/faults', 'POST', { drift_extra_fields: 1 });
    const extra = await hosts();
    expect((extra.json as Record<string, unknown>)[DRIFT_EXTRA_FIELD]).toBeDefined();
    expect(HostList.safeParse(extra.json).success).toBe(true);

    await admin('/faults', 'POST', { drift_extra_fields: 0, drift_missing_optional: 1 });
    const account = (await call(`${sim.monitoringBaseUrl}/account`, { key: sim.keys.pro })).json as Record<string, unknown>;
    expect(account.plan).toBe('pro');
    expect(account.limits).toBeUndefined();
    expect(account.rate_limit).toBeUndefined();

    await admin('/faults', 'POST', { drift_missing_optional: 0, drift_wrong_type: 1 });
    const wrong = await hosts();
    expect(HostList.safeParse(wrong.json).success).toBe(false);
    expect(typeof (wrong.json as { hosts: { uuid: unknown }[] }).hosts[0]!.uuid).toBe('number');
  });

  it('a 429 storm answers every request 429 for its duration, with the given Retry-After, then ends', async () => {
    await admin('/faults', 'POST', { target: 'monitoring', storm_seconds: 60, storm_retry_after: 'soon' });
    for (let i = 0; i < 3; i++) {
      const answer = await hosts(sim.keys.business);
      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('soon');
      expect((answer.json as { error: string }).error).toBe('rate_limited');
    }
    expect(((await admin('/faults')).json as { monitoring: { storm_remaining_ms: number } }).monitoring.storm_remaining_ms).toBe(60_000);
    clock.advance(60_000);
    expect((await hosts(sim.keys.business)).status).toBe(200);
  });

  it('a storm with a huge Retry-After, and one with none', async () => {
    await admin('/faults', 'POST', { storm_seconds: 5, storm_retry_after: 999_999_999 });
    expect((await hosts()).headers.get('retry-after')).toBe('999999999');
    await admin('/faults', 'POST', { storm_seconds: 5 });
    const answer = await hosts();
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBeNull();
  });

  it('latency delays the answer by the fixed time on the injected clock', async () => {
    await admin('/faults', 'POST', { target: 'monitoring', latency_ms: 2_000 });
    const timersBefore = clock.pending();
    let settled = false;
    const pending = hosts().then((answer) => {
      settled = true;
      return answer;
    });
    // Wait until the request is parked on the fake clock, then move time just short of the delay.
    for (let i = 0; i < 200 && clock.pending() === timersBefore; i++) await new Promise((r) => setTimeout(r, 5));
    expect(clock.pending()).toBe(timersBefore + 1);
    clock.advance(1_999);
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    clock.advance(1);
    expect((await pending).status).toBe(200);
  });

  it('a hung request never answers until the fault is cleared, then proceeds', async () => {
    await admin('/faults', 'POST', { target: 'monitoring', hang: 1 });
    let settled = false;
    const pending = hosts().then((answer) => {
      settled = true;
      return answer;
    });
    for (let i = 0; i < 200 && sim.faults.hungCount() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(sim.faults.hungCount()).toBe(1);
    clock.advance(3_600_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    await admin('/faults', 'DELETE');
    expect((await pending).status).toBe(200);
    expect(sim.faults.hungCount()).toBe(0);
  });

  it('a client that gives up on a hung request is forgotten', async () => {
    await admin('/faults', 'POST', { target: 'monitoring', hang: 1 });
    const controller = new AbortController();
    const pending = fetch(`${sim.monitoringBaseUrl}/hosts`, { headers: { 'x-api-key': sim.keys.pro }, signal: controller.signal }).catch(
      (error: unknown) => error,
    );
    for (let i = 0; i < 200 && sim.faults.hungCount() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    for (let i = 0; i < 200 && sim.faults.hungCount() > 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(sim.faults.hungCount()).toBe(0);
  });

  it('faults can target the releases and marketplace listeners', async () => {
    await admin('/faults', 'POST', { target: 'marketplace', error_503: 1 });
    const market = await call(`${sim.marketplaceBaseUrl}/version?project=nginx`, { headers: { 'X-RapidAPI-Key': sim.keys.marketplace } });
    expect(market.status).toBe(503);
    expect((await call(`${sim.releasesBaseUrl}/nginx/nginx`)).status).toBe(200);
    await admin('/faults', 'POST', { target: 'releases', storm_seconds: 10 });
    expect((await call(`${sim.releasesBaseUrl}/nginx/nginx`)).status).toBe(429);
    expect((await hosts()).status).toBe(200);
  });
});

describe('/_sim/hosts', () => {
  it('adds and removes hosts of one account', async () => {
    const before = parseWith(HostList, (await hosts()).json).total;
    const added = await admin('/hosts', 'POST', { account: 'pro', add: 3 });
    expect(added.json).toEqual({ account: 'pro', hosts: before + 3 });
    expect(parseWith(HostList, (await hosts()).json).total).toBe(before + 3);
    await call(`${sim.adminUrl}/hosts?account=pro&remove=5`, { method: 'POST' });
    expect(parseWith(HostList, (await hosts()).json).total).toBe(before - 2);
    expect(parseWith(HostList, (await hosts(sim.keys.business)).json).total).toBe(12);
  });

  it.each<[string, unknown]>([
    ['an unknown account', { account: 'enterprise', add: 1 }],
    ['a negative count', { account: 'pro', add: -1 }],
    ['a fractional count', { account: 'pro', remove: 1.5 }],
    ['no account', { add: 1 }],
  ])('refuses %s with 400', async (_case, body) => {
    const answer = await admin('/hosts', 'POST', body);
    expect(answer.status).toBe(400);
    expect((answer.json as { message: string }).message).toMatch(/account|add|remove/);
  });
});

describe('close()', () => {
  it('does not hang on hung requests or keep-alive sockets', async () => {
    const { sim: other } = await startTestSimulator();
    other.faults.apply({ target: 'all', hang: 1 });
    const pending = fetch(`${other.monitoringBaseUrl}/hosts`, { headers: { 'x-api-key': other.keys.pro } }).catch((error: unknown) => error);
    for (let i = 0; i < 200 && other.faults.hungCount() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(other.faults.hungCount()).toBe(1);
    await other.close();
    expect(await pending).toBeInstanceOf(Error);
  });
});
