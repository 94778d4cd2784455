import { describe, expect, it } from 'vitest';
import { FakeClock } from '../lib/clock.js';
import type { RequestBudgetOptions } from './options.js';
import { BudgetOptionsError, resolveBudgetOptions } from './options.js';

const clock = new FakeClock();

describe('resolveBudgetOptions', () => {
  it('fills the documented defaults and derives the budgeted rate and burst', () => {
    const resolved = resolveBudgetOptions({ name: 'acme', clock });
    expect(resolved).toMatchObject({
      ratePerMinute: 120,
      burst: 30,
      headroom: 0.1,
      concurrency: 4,
      maxRetries: 2,
      backoff: { initialMs: 1_000, maxMs: 60_000 },
      retryAfterCapMs: 300_000,
      authRetryMs: 600_000,
      budgetedBurst: 27,
      initialTokens: 13,
      starvationLimit: 8,
    });
    expect(resolved.budgetedRatePerSecond).toBeCloseTo(1.8, 12);
  });

  it.each<[string, Partial<RequestBudgetOptions>, string]>([
    ['empty name', { name: ' ' }, 'name must be a non-empty string'],
    ['zero rate', { ratePerMinute: 0 }, 'ratePerMinute must be a positive number, got 0'],
    ['NaN rate', { ratePerMinute: Number.NaN }, 'ratePerMinute must be a positive number, got null'],
    ['fractional burst', { burst: 2.5 }, 'burst must be a positive integer, got 2.5'],
    ['headroom above 0.9', { headroom: 0.95 }, 'headroom must be a fraction between 0 and 0.9, got 0.95'],
    ['negative headroom', { headroom: -0.1 }, 'headroom must be a fraction between 0 and 0.9, got -0.1'],
    ['zero concurrency', { concurrency: 0 }, 'concurrency must be a positive integer, got 0'],
    ['negative retries', { maxRetries: -1 }, 'maxRetries must be a non-negative integer, got -1'],
    ['backoff cap below start', { backoff: { initialMs: 5_000, maxMs: 1_000 } }, 'backoff.maxMs (1000) must not be below backoff.initialMs (5000)'],
    ['negative Retry-After cap', { retryAfterCapMs: -1 }, 'retryAfterCapMs must be a non-negative number of milliseconds, got -1'],
    ['zero auth retry', { authRetryMs: 0 }, 'authRetryMs must be a positive number of milliseconds, got 0'],
    ['burst eaten by headroom', { burst: 1, headroom: 0.5 }, 'burst 1 minus headroom 0.5 leaves less than one request'],
    ['too many initial tokens', { initialTokens: 28 }, 'initialTokens must be between 0 and the budgeted burst (27), got 28'],
    ['string number', { ratePerMinute: '120' as unknown as number }, 'ratePerMinute must be a positive number, got "120"'],
    ['no clock', { clock: undefined }, 'clock must provide now(), setTimeout() and clearTimeout()'],
  ])('rejects %s', (_label, overrides, problem) => {
    const attempt = () => resolveBudgetOptions({ name: 'acme', clock, ...overrides });
    expect(attempt).toThrow(BudgetOptionsError);
    expect(attempt).toThrow(problem);
  });

  it('reports every problem at once, naming the account', () => {
    try {
      resolveBudgetOptions({ name: 'acme', clock, burst: 0, concurrency: -2 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(BudgetOptionsError);
      const e = error as BudgetOptionsError;
      expect(e.message).toContain('account "acme"');
      expect(e.problems).toHaveLength(2);
    }
  });
});
