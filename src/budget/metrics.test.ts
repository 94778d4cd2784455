import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock, flushMicrotasks } from '../lib/clock.js';
import { RateLimitedError, ServerError } from '../upstream/http/errors.js';
import { createBudgetMetrics } from './metrics.js';
import { createRequestBudget } from './request-budget.js';

const ctx = { api: 'monitoring', endpoint: '/hosts' } as const;

function sampleLines(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

describe('budget self-metrics', () => {
  it('exposes each budget by account, read from its snapshot at scrape time', async () => {
    const registry = new Registry();
    const metrics = createBudgetMetrics(registry);
    const clock = new FakeClock();
    const budget = createRequestBudget({ name: 'acme', clock, metrics, random: () => 0.5, initialTokens: 27, concurrency: 1 });

    let calls = 0;
    const flaky = () => {
      calls++;
      if (calls === 1) return Promise.reject(new RateLimitedError(ctx, 'slow down', '10'));
      if (calls === 2) return Promise.reject(new ServerError(ctx, 'oops', 502));
      return Promise.resolve('ok');
    };
    void budget.run('high', '/hosts', flaky);
    void budget.run('bulk', '/series', () => Promise.resolve('ok')).catch(() => undefined);
    await flushMicrotasks();

    const during = sampleLines(await registry.metrics());
    expect(during.get('monapi_budget_paused{account="acme"}')).toBe(1);
    expect(during.get('monapi_budget_tokens{account="acme"}')).toBe(0);
    expect(during.get('monapi_budget_queued_requests{account="acme",priority="high"}')).toBe(1);
    expect(during.get('monapi_budget_queued_requests{account="acme",priority="bulk"}')).toBe(1);
    expect(during.get('monapi_budget_queued_requests{account="acme",priority="normal"}')).toBe(0);
    expect(during.get('monapi_budget_configured_requests_per_second{account="acme"}')).toBeCloseTo(1.8, 9);
    expect(during.get('monapi_budget_effective_requests_per_second{account="acme"}')).toBeCloseTo(0.9, 9);
    expect(during.get('monapi_upstream_rate_limited_total{account="acme"}')).toBe(1);
    expect(during.get('monapi_budget_pauses_total{account="acme"}')).toBe(1);

    await clock.advanceAsync(30_000, 100);
    const after = sampleLines(await registry.metrics());
    expect(after.get('monapi_budget_paused{account="acme"}')).toBe(0);
    expect(after.get('monapi_budget_paused_seconds_total{account="acme"}')).toBe(10);
    expect(after.get('monapi_upstream_retries_total{account="acme",reason="rate_limited"}')).toBe(1);
    expect(after.get('monapi_upstream_retries_total{account="acme",reason="server_error"}')).toBe(1);
    expect(after.get('monapi_upstream_retries_total{account="acme",reason="timeout"}')).toBe(0);
    expect(after.get('monapi_budget_attempts_total{account="acme"}')).toBe(4);
    expect(after.get('monapi_budget_in_flight_requests{account="acme"}')).toBe(0);
    expect(after.get('monapi_budget_burst{account="acme"}')).toBe(27);
  });

  it('follows Prometheus naming: monapi_ prefix, snake_case, _total only on counters', async () => {
    const registry = new Registry();
    createBudgetMetrics(registry);
    const families = await registry.getMetricsAsJSON();
    expect(families.length).toBeGreaterThanOrEqual(14);
    for (const family of families) {
      expect(family.name).toMatch(/^monapi_[a-z0-9_]+$/);
      expect(family.name.endsWith('_total')).toBe(String(family.type) === 'counter');
      expect(family.help.length).toBeGreaterThan(10);
    }
  });

  it('keeps accounts apart, refuses a duplicate account and forgets a closed budget', async () => {
    const registry = new Registry();
    const metrics = createBudgetMetrics(registry);
    const clock = new FakeClock();
    const a = createRequestBudget({ name: 'team-a', clock, metrics });
    createRequestBudget({ name: 'team-b', clock, metrics, initialTokens: 2 });
    expect(() => createRequestBudget({ name: 'team-a', clock, metrics })).toThrow('account "team-a" is already tracked');

    let samples = sampleLines(await registry.metrics());
    expect(samples.get('monapi_budget_tokens{account="team-a"}')).toBe(13);
    expect(samples.get('monapi_budget_tokens{account="team-b"}')).toBe(2);

    a.close();
    samples = sampleLines(await registry.metrics());
    expect(samples.has('monapi_budget_tokens{account="team-a"}')).toBe(false);
    expect(samples.get('monapi_budget_tokens{account="team-b"}')).toBe(2);
  });
});
