import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { InvalidResponseError, PlanRequiredError, ServerError, TimeoutError, UnauthorizedError } from '../../src/upstream/http/errors.js';
import { createUpstreamMetrics } from '../../src/upstream/metrics.js';
import {
  budgetedClient,
  clearFaults,
  clientStats,
  readStats,
  resetStats,
  saturate,
  setFaults,
  sleep,
  startLimitedSimulator,
  statusCount,
  type BudgetedClient,
  type BudgetedClientOptions,
} from './harness.js';

/**
 * The client and its budget against each fault switch of the simulator, over real HTTP.
 * The simulator's limit is far above these tests' traffic, so every answer is the fault's;
 * the budget keeps its default retry count (2) with short backoffs to keep the tests quick.
 * Upstream attempts are counted by the simulator (`/_sim/stats`), not by the client.
 */

const MAX_RETRIES = 2;
const HOSTS = 4;

let sim: RunningSimulator;
let clients: BudgetedClient[] = [];

beforeAll(async () => {
  sim = await startLimitedSimulator({ ratePerMinute: 600_000, burst: 10_000 });
});

afterAll(async () => {
  await sim.close();
});

afterEach(async () => {
  await clearFaults(sim);
  for (const c of clients) await c.close();
  clients = [];
});

function connect(apiKey: string, extra: Partial<BudgetedClientOptions> = {}): BudgetedClient {
  const c = budgetedClient({
    sim,
    apiKey,
    ...extra,
    budget: { ratePerMinute: 600_000, burst: 10_000, headroom: 0, maxRetries: MAX_RETRIES, backoff: { initialMs: 10, maxMs: 50 }, ...extra.budget },
  });
  clients.push(c);
  return c;
}

async function settleAll<T>(calls: Promise<T>[]): Promise<{ values: T[]; errors: unknown[] }> {
  const results = await Promise.allSettled(calls);
  return {
    values: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    errors: results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : [])),
  };
}

async function statsOf(account: string) {
  return clientStats(await readStats(sim), account);
}

describe('server errors: bounded retries that spend the same budget', () => {
  it.each([
    ['500', { error_500: 1 }, 500],
    ['502 (an HTML page from a proxy)', { error_502: 1 }, 502],
    ['503', { error_503: 1 }, 503],
  ])('a steady %s: each call makes 1 + maxRetries attempts, then fails with the ServerError', async (_label, fault, status) => {
    const { client, budget } = connect(sim.keys.pro);
    await resetStats(sim);
    await setFaults(sim, fault);
    const { values, errors } = await settleAll(Array.from({ length: 10 }, () => client.hosts()));

    expect(values).toHaveLength(0);
    expect(errors).toHaveLength(10);
    for (const error of errors) {
      expect(error).toBeInstanceOf(ServerError);
      expect((error as ServerError).status).toBe(status);
    }
    const pro = await statsOf('pro');
    expect(pro.total).toBe(10 * (1 + MAX_RETRIES));
    expect(statusCount(pro, String(status))).toBe(10 * (1 + MAX_RETRIES));
    const totals = budget.snapshot().totals;
    expect(totals.attempts).toBe(pro.total);
    expect(totals.retries.server_error).toBe(10 * MAX_RETRIES);
  });

  it('mixed shares: every simulator arrival is a budget attempt, and every 5xx is either retried or handed back', async () => {
    const { client, budget } = connect(sim.keys.pro);
    await resetStats(sim);
    await setFaults(sim, { error_500: 0.15, error_502: 0.15, error_503: 0.15 });
    const { values, errors } = await settleAll(Array.from({ length: 80 }, () => client.hosts()));

    for (const error of errors) expect(error).toBeInstanceOf(ServerError);
    const pro = await statsOf('pro');
    const serverErrors = statusCount(pro, '500') + statusCount(pro, '502') + statusCount(pro, '503');
    const totals = budget.snapshot().totals;
    expect(totals.attempts).toBe(pro.total);
    expect(statusCount(pro, '200')).toBe(values.length);
    expect(serverErrors).toBe(totals.retries.server_error + errors.length);
    expect(pro.total).toBeLessThanOrEqual(80 * (1 + MAX_RETRIES));
    // With 45% errors, 80 calls all but surely see some retries and some successes.
    expect(totals.retries.server_error).toBeGreaterThan(0);
    expect(values.length).toBeGreaterThan(40);
  });
});

describe('hung requests', () => {
  it('time out on the client, are retried within the bound, and end as a TimeoutError', async () => {
    const { client, budget } = connect(sim.keys.pro, { transport: { headersTimeoutMs: 250 } });
    await resetStats(sim);
    await setFaults(sim, { hang: 1 });
    const { errors } = await settleAll(Array.from({ length: 3 }, () => client.hosts()));

    expect(errors).toHaveLength(3);
    for (const error of errors) expect(error).toBeInstanceOf(TimeoutError);
    // The simulator sees each attempt arrive and the client hang up on it.
    await sleep(100);
    const pro = await statsOf('pro');
    expect(pro.total).toBe(3 * (1 + MAX_RETRIES));
    expect(statusCount(pro, 'aborted')).toBe(3 * (1 + MAX_RETRIES));
    expect(budget.snapshot().totals.retries.timeout).toBe(3 * MAX_RETRIES);
    expect(sim.faults.hungCount()).toBe(0);
  });
});

describe('broken bodies', () => {
  it.each([
    ['malformed', { malformed_json: 1 }],
    ['truncated', { truncated_json: 1 }],
  ])('%s JSON is an InvalidResponseError, not retried', async (_label, fault) => {
    const { client, budget } = connect(sim.keys.pro);
    await resetStats(sim);
    await setFaults(sim, fault);
    const { errors } = await settleAll(Array.from({ length: 3 }, () => client.hosts()));

    expect(errors).toHaveLength(3);
    for (const error of errors) expect(error).toBeInstanceOf(InvalidResponseError);
    const pro = await statsOf('pro');
    expect(pro.total).toBe(3);
    expect(statusCount(pro, '200')).toBe(3);
    expect(budget.snapshot().totals.attempts).toBe(3);
  });
});

describe('schema drift', () => {
  it('a wrongly typed field drops that one host, keeps the others, and counts the drop', async () => {
    const registry = new Registry();
    const { client } = connect(sim.keys.pro, { metrics: createUpstreamMetrics(registry) });
    const clean = await client.hosts();
    expect(clean.value.hosts).toHaveLength(HOSTS);

    await setFaults(sim, { drift_wrong_type: 1 });
    const drifted = await client.hosts();
    expect(drifted.dropped).toHaveLength(1);
    expect(drifted.dropped[0]?.path).toMatch(/^hosts\[0\]/);
    expect(drifted.value.hosts.map((h) => h.uuid)).toEqual(clean.value.hosts.slice(1).map((h) => h.uuid));
    expect(drifted.dropped[0]).toMatchObject({ reason: 'wrong_type', field: 'uuid' });
    expect(await registry.metrics()).toContain('monapi_decode_dropped_items_total{endpoint="/hosts",reason="wrong_type"} 1');
  });

  it.each([
    ['unknown extra fields', { drift_extra_fields: 1 }],
    ['missing optional fields', { drift_missing_optional: 1 }],
  ])('%s drop nothing', async (_label, fault) => {
    const { client } = connect(sim.keys.pro);
    await setFaults(sim, fault);
    const hosts = await client.hosts();
    const account = await client.account();
    expect(hosts.dropped).toEqual([]);
    expect(hosts.value.hosts).toHaveLength(HOSTS);
    expect(account.value.plan).toBe('pro');
  });
});

describe('keys that do not work are not retried in a loop', () => {
  const AUTH_RETRY_MS = 1_000;
  const WINDOW_MS = 2_500;

  it.each([
    ['a wrong key (401)', 'not-a-simulator-key', 'invalid', UnauthorizedError],
    ['the Starter key (403 plan_required)', 'sim-starter-key', 'starter', PlanRequiredError],
  ])('%s: one attempt, then one probe per retry window, however often callers ask', async (_label, key, account, errorClass) => {
    const { client, budget } = connect(key, { budget: { authRetryMs: AUTH_RETRY_MS } });
    await resetStats(sim);
    // One call alone first: callers starting together would all be in flight before the first answer.
    await expect(client.hosts()).rejects.toBeInstanceOf(errorClass);
    const failedAt = Date.now();
    const load = saturate(() => client.hosts(), 4);
    await sleep(WINDOW_MS);
    const stopped = load.stop();
    budget.close();
    const elapsedMs = Date.now() - failedAt;
    await stopped;

    const upstream = await statsOf(account);
    const totals = budget.snapshot().totals;
    expect(upstream.total).toBe(totals.attempts);
    expect(statusCount(upstream, String(errorClass === UnauthorizedError ? 401 : 403))).toBe(upstream.total);
    // The first attempt, then one probe per elapsed retry window (each probe fails and restarts it).
    expect(upstream.total).toBeGreaterThanOrEqual(2);
    expect(upstream.total).toBeLessThanOrEqual(1 + Math.floor(elapsedMs / AUTH_RETRY_MS));
    expect(totals.failedFast).toBeGreaterThan(50);
    expect(load.outcomes.succeeded).toBe(0);
    expect(load.outcomes.failed[errorClass.name]).toBeGreaterThan(50);
  });
});
