import { describe, expect, it } from 'vitest';
import { FakeClock, flushMicrotasks } from '../lib/clock.js';
import type { RequestContext, UpstreamError } from '../upstream/http/errors.js';
import {
  BadRequestError,
  InvalidResponseError,
  NetworkError,
  NotFoundError,
  PlanRequiredError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from '../upstream/http/errors.js';
import type { RequestBudgetOptions } from './options.js';
import { BudgetClosedError, createRequestBudget } from './request-budget.js';
import type { Priority } from './types.js';

const ctx: RequestContext = { api: 'monitoring', endpoint: '/hosts' };

function setup(overrides: Partial<RequestBudgetOptions> = {}) {
  const clock = new FakeClock();
  const budget = createRequestBudget({ name: 'acme', clock, random: () => 0.5, ...overrides });
  return { clock, budget, t0: clock.now() };
}

/** A request whose outcome the test decides later. */
interface Manual<T = string> {
  startedAt: number[];
  signals: AbortSignal[];
  resolve(value: T): void;
  reject(error: unknown): void;
  attempt: (signal: AbortSignal) => Promise<T>;
}

function manual<T = string>(clock: FakeClock): Manual<T> {
  const m: Manual<T> = {
    startedAt: [],
    signals: [],
    resolve: () => undefined,
    reject: () => undefined,
    attempt: (signal) => {
      m.startedAt.push(clock.now());
      m.signals.push(signal);
      return new Promise<T>((resolve, reject) => {
        m.resolve = resolve;
        m.reject = reject;
      });
    },
  };
  return m;
}

/** An attempt that plays a script of outcomes, one per attempt; the last one repeats. */
function scripted(clock: FakeClock, outcomes: readonly (string | Error)[]) {
  const startedAt: number[] = [];
  const attempt = (): Promise<string> => {
    const outcome = outcomes[Math.min(startedAt.length, outcomes.length - 1)];
    startedAt.push(clock.now());
    return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome ?? 'ok');
  };
  return { startedAt, attempt };
}

/** Captures how a promise settled without leaving a rejection unhandled. */
function track<T>(promise: Promise<T>) {
  const state: { status: 'pending' | 'fulfilled' | 'rejected'; value?: T; error?: unknown } = { status: 'pending' };
  promise.then(
    (value) => Object.assign(state, { status: 'fulfilled', value }),
    (error: unknown) => Object.assign(state, { status: 'rejected', error }),
  );
  return state;
}

describe('RequestBudget: rate', () => {
  it.each<[number, number, number]>([
    [120, 30, 0.1],
    [60, 10, 0],
    [600, 50, 0.5],
  ])('at %i/min, burst %i, headroom %f: never more than rate + burst in any 60 s, and ≥ 99% of the rate in the long run', async (ratePerMinute, burst, headroom) => {
    const { clock, budget, t0 } = setup({ ratePerMinute, burst, headroom, initialTokens: Math.floor(burst * (1 - headroom)) });
    const starts: number[] = [];
    const budgetedPerMinute = ratePerMinute * (1 - headroom);
    const minutes = 30;
    const demand = Math.ceil(budgetedPerMinute * minutes * 1.5);
    const results = Array.from({ length: demand }, () =>
      track(
        budget.run('bulk', '/hosts/{uuid}/metrics/series', () => {
          starts.push(clock.now());
          return Promise.resolve('ok');
        }),
      ),
    );
    await clock.advanceAsync(minutes * 60_000, 250);

    let worstWindow = 0;
    let j = 0;
    for (let i = 0; i < starts.length; i++) {
      const start = starts[i] ?? 0;
      while (j < starts.length && (starts[j] ?? 0) < start + 60_000) j++;
      worstWindow = Math.max(worstWindow, j - i);
    }
    expect(worstWindow).toBeLessThanOrEqual(budgetedPerMinute + burst);
    expect(starts.length).toBeGreaterThanOrEqual(0.99 * budgetedPerMinute * minutes);
    expect(starts.at(-1) ?? 0).toBeLessThanOrEqual(t0 + minutes * 60_000);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(starts.length);
    budget.close();
    await flushMicrotasks();
  });

  it('starts with half the budgeted burst, not a full bucket', async () => {
    const { clock, budget } = setup({ concurrency: 100 });
    let started = 0;
    for (let i = 0; i < 40; i++) {
      track(
        budget.run('normal', '/hosts', () => {
          started++;
          return new Promise<string>(() => undefined);
        }),
      );
    }
    await flushMicrotasks();
    expect(started).toBe(13);
    expect(budget.snapshot().tokens).toBe(0);
    budget.close();
    await clock.advanceAsync(0);
  });
});

describe('RequestBudget: priorities and concurrency', () => {
  it('serves high before normal before bulk, FIFO within a priority', async () => {
    const { clock, budget } = setup({ initialTokens: 0, concurrency: 1 });
    const order: string[] = [];
    const enqueue = (priority: Priority, label: string) =>
      track(
        budget.run(priority, '/x', () => {
          order.push(label);
          return Promise.resolve(label);
        }),
      );
    enqueue('bulk', 'bulk-1');
    enqueue('bulk', 'bulk-2');
    enqueue('normal', 'normal-1');
    enqueue('high', 'high-1');
    enqueue('bulk', 'bulk-3');
    enqueue('high', 'high-2');
    expect(budget.snapshot().queued).toEqual({ high: 2, normal: 1, bulk: 3 });
    await clock.advanceAsync(10_000, 100);
    expect(order).toEqual(['high-1', 'high-2', 'normal-1', 'bulk-1', 'bulk-2', 'bulk-3']);
  });

  it.each<[string, number, (bulkDone: number) => void]>([
    ['with the default starvation limit, bulk progresses under constant high load', 8, (bulkDone) => expect(bulkDone).toBeGreaterThanOrEqual(50)],
    ['without the rule (limit 10^9), the same load starves bulk completely', 1e9, (bulkDone) => expect(bulkDone).toBe(0)],
  ])('%s', async (_label, starvationLimit, check) => {
    const { clock, budget } = setup({ starvationLimit });
    let bulkDone = 0;
    let highDone = 0;
    const keepHighBusy = (): void => {
      track(
        budget.run('high', '/hosts', () => {
          highDone++;
          keepHighBusy();
          return Promise.resolve('ok');
        }),
      );
    };
    for (let i = 0; i < 10; i++) keepHighBusy();
    for (let i = 0; i < 100; i++) {
      track(
        budget.run('bulk', '/series', () => {
          bulkDone++;
          return Promise.resolve('ok');
        }),
      );
    }
    await clock.advanceAsync(10 * 60_000, 500);
    check(bulkDone);
    expect(highDone).toBeGreaterThan(bulkDone);
    expect(highDone + bulkDone).toBeGreaterThanOrEqual(0.99 * 108 * 10);
    budget.close();
    await flushMicrotasks();
  });

  it('never has more than `concurrency` attempts in flight', async () => {
    const { clock, budget } = setup({ concurrency: 3, initialTokens: 27 });
    const requests = Array.from({ length: 6 }, () => manual(clock));
    const results = requests.map((m) => track(budget.run('normal', '/hosts', m.attempt)));
    await clock.advanceAsync(5_000, 100);
    expect(requests.filter((m) => m.startedAt.length > 0)).toHaveLength(3);
    expect(budget.snapshot().inFlight).toBe(3);

    requests[0]?.resolve('done');
    await clock.advanceAsync(100);
    expect(results[0]?.status).toBe('fulfilled');
    expect(requests.filter((m) => m.startedAt.length > 0)).toHaveLength(4);
    expect(budget.snapshot().inFlight).toBe(3);
    budget.close();
    await flushMicrotasks();
  });
});

describe('RequestBudget: 429', () => {
  it('pauses the whole key for a sane Retry-After, then retries the request below the previous rate', async () => {
    const { clock, budget, t0 } = setup({ initialTokens: 27, concurrency: 1 });
    const limited = scripted(clock, [new RateLimitedError(ctx, 'slow down', '20'), 'hosts']);
    const other = scripted(clock, ['account']);
    const first = track(budget.run('high', '/hosts', limited.attempt));
    const second = track(budget.run('high', '/account', other.attempt));
    await flushMicrotasks();

    const snap = budget.snapshot();
    expect(snap.pausedUntilMs).toBe(t0 + 20_000);
    expect(snap.tokens).toBe(0);
    expect(snap.effectiveRatePerSecond).toBeCloseTo(0.9, 9);
    expect(snap.totals.rateLimited).toBe(1);
    expect(snap.totals.retries.rate_limited).toBe(1);

    await clock.advanceAsync(19_999, 100);
    expect(other.startedAt).toEqual([]);
    expect(limited.startedAt).toEqual([t0]);

    await clock.advanceAsync(10_000, 100);
    // The retried request keeps its place ahead of the one queued after it.
    expect(limited.startedAt[1]).toBeGreaterThanOrEqual(t0 + 20_000);
    expect(other.startedAt[0]).toBeGreaterThan(limited.startedAt[1] ?? Infinity);
    expect(first).toMatchObject({ status: 'fulfilled', value: 'hosts' });
    expect(second).toMatchObject({ status: 'fulfilled', value: 'account' });
    // After the pause the bucket restarts empty at the halved rate: 1 token per 1/0.9 s.
    expect(limited.startedAt[1]).toBeLessThanOrEqual(t0 + 20_000 + 1_112);
  });

  it('climbs back to the configured rate after the 429 stops', async () => {
    const { clock, budget } = setup({ initialTokens: 27 });
    track(budget.run('high', '/hosts', scripted(clock, [new RateLimitedError(ctx, 'slow down', '10'), 'ok']).attempt));
    await flushMicrotasks();
    expect(budget.snapshot().effectiveRatePerSecond).toBeCloseTo(0.9, 9);
    // +25% of the configured 1.8/s per minute: 0.9 -> 1.35 in one minute, 1.8 in two.
    await clock.advanceAsync(10_000 + 60_000, 1_000);
    expect(budget.snapshot().effectiveRatePerSecond).toBeCloseTo(1.35, 9);
    await clock.advanceAsync(60_000, 1_000);
    expect(budget.snapshot().effectiveRatePerSecond).toBeCloseTo(1.8, 9);
    await clock.advanceAsync(600_000, 10_000);
    expect(budget.snapshot().effectiveRatePerSecond).toBeCloseTo(1.8, 9);
  });

  it.each<[string, string | undefined, number]>([
    ['a sane integer', '42', 42_000],
    ['an epoch timestamp sent as seconds (capped)', '1734567890', 300_000],
    ['an HTTP-date 55 years ahead (capped)', 'Tue, 22 Nov 2081 12:00:00 GMT', 300_000],
    ['an HTTP-date 30 s ahead', 'Sun, 22 Nov 2026 12:00:30 GMT', 30_000],
    ['garbage (falls back to jittered backoff: 0.5 × 1 s)', 'later please', 500],
    ['a negative number (ignored)', '-30', 500],
    ['no header at all', undefined, 500],
  ])('Retry-After %s -> pause of %i ms', async (_label, header, pauseMs) => {
    const { clock, budget, t0 } = setup({ initialTokens: 27 });
    track(budget.run('normal', '/hosts', scripted(clock, [new RateLimitedError(ctx, 'slow down', header), 'ok']).attempt));
    await flushMicrotasks();
    expect(budget.snapshot().pausedUntilMs).toBe(t0 + pauseMs);
    budget.close();
    await flushMicrotasks();
  });

  it('honours a smaller configured Retry-After cap', async () => {
    const { clock, budget, t0 } = setup({ initialTokens: 27, retryAfterCapMs: 60_000 });
    track(budget.run('normal', '/hosts', scripted(clock, [new RateLimitedError(ctx, 'slow down', '3600')]).attempt));
    await flushMicrotasks();
    expect(budget.snapshot().pausedUntilMs).toBe(t0 + 60_000);
    budget.close();
    await flushMicrotasks();
  });

  it('treats 429s of attempts already in flight as one episode: one pause, one halving', async () => {
    const { clock, budget } = setup({ initialTokens: 27, concurrency: 4 });
    const flights = Array.from({ length: 4 }, () => manual(clock));
    for (const m of flights) track(budget.run('bulk', '/series', m.attempt));
    await flushMicrotasks();
    expect(budget.snapshot().inFlight).toBe(4);
    for (const m of flights) m.reject(new RateLimitedError(ctx, 'slow down', '5'));
    await flushMicrotasks();
    const snap = budget.snapshot();
    expect(snap.totals.rateLimited).toBe(4);
    expect(snap.totals.pauses).toBe(1);
    expect(snap.effectiveRatePerSecond).toBeCloseTo(0.9, 9);
    budget.close();
    await flushMicrotasks();
  });

  it('gives up after maxRetries 429s and hands the caller the 429, with exponential pauses between', async () => {
    const { clock, budget, t0 } = setup({ initialTokens: 27, maxRetries: 2 });
    const error = new RateLimitedError(ctx, 'slow down', undefined);
    const always = scripted(clock, [error]);
    const result = track(budget.run('normal', '/hosts', always.attempt));
    await clock.advanceAsync(120_000, 50);
    expect(result).toMatchObject({ status: 'rejected', error });
    expect(always.startedAt).toHaveLength(3);
    // Pause ceilings 1 s, 2 s (jitter 0.5): 0.5 s and 1 s, plus the wait for the first token after each.
    const gaps = [always.startedAt[1]! - t0, always.startedAt[2]! - always.startedAt[1]!];
    expect(gaps[0]).toBeGreaterThanOrEqual(500);
    expect(gaps[1]).toBeGreaterThanOrEqual(1_000);
    const snap = budget.snapshot();
    expect(snap.totals).toMatchObject({ rateLimited: 3, pauses: 3, failed: 1, retries: { rate_limited: 2 } });
    expect(snap.totals.pausedSeconds).toBeCloseTo(0.5 + 1 + 2, 9);
  });
});

describe('RequestBudget: other failures', () => {
  it.each<[string, UpstreamError, keyof ReturnType<ReturnType<typeof createRequestBudget>['snapshot']>['totals']['retries']]>([
    ['5xx', new ServerError(ctx, 'bad gateway', 502), 'server_error'],
    ['timeout', new TimeoutError(ctx, 'no answer in 10 s'), 'timeout'],
    ['network', new NetworkError(ctx, 'connection reset'), 'network'],
  ])('%s is retried at most maxRetries times with jittered exponential backoff', async (_label, error, reason) => {
    const { clock, budget, t0 } = setup({ initialTokens: 27, maxRetries: 2 });
    const failing = scripted(clock, [error]);
    const result = track(budget.run('bulk', '/series', failing.attempt));
    await clock.advanceAsync(60_000, 10);
    // random() = 0.5: first retry waits 0.5 × 1 s, the second 0.5 × 2 s.
    expect(failing.startedAt).toEqual([t0, t0 + 500, t0 + 1_500]);
    expect(result).toMatchObject({ status: 'rejected', error });
    const snap = budget.snapshot();
    expect(snap.totals.retries[reason]).toBe(2);
    expect(snap.totals.attempts).toBe(3);
    expect(snap.pausedUntilMs).toBeNull();
  });

  it('a retry that succeeds resolves the caller with its value', async () => {
    const { clock, budget } = setup({ initialTokens: 27 });
    const flaky = scripted(clock, [new ServerError(ctx, 'oops', 500), 'second time lucky']);
    const result = track(budget.run('normal', '/hosts', flaky.attempt));
    await clock.advanceAsync(5_000, 10);
    expect(result).toMatchObject({ status: 'fulfilled', value: 'second time lucky' });
  });

  it('caps the backoff at backoff.maxMs', async () => {
    const { clock, budget, t0 } = setup({ initialTokens: 27, maxRetries: 4, random: () => 1, backoff: { initialMs: 1_000, maxMs: 3_000 } });
    const failing = scripted(clock, [new ServerError(ctx, 'oops', 503)]);
    track(budget.run('normal', '/hosts', failing.attempt));
    await clock.advanceAsync(60_000, 10);
    expect(failing.startedAt.map((t) => t - t0)).toEqual([0, 1_000, 3_000, 6_000, 9_000]);
  });

  it('each retry spends a token like any request', async () => {
    const { clock, budget } = setup({ initialTokens: 2, maxRetries: 2 });
    const failing = scripted(clock, [new ServerError(ctx, 'oops', 500)]);
    track(budget.run('normal', '/hosts', failing.attempt));
    await clock.advanceAsync(60_000, 10);
    expect(budget.snapshot().totals.attempts).toBe(3);
    // 2 initial + 1.8/s × 60 s refilled, minus 3 spent, capped at 27.
    expect(budget.snapshot().tokens).toBeCloseTo(27, 9);
  });

  it.each<[string, Error]>([
    ['400', new BadRequestError(ctx, 'since must look like 1h', 400)],
    ['404', new NotFoundError(ctx, 'no such host', 404)],
    ['invalid response', new InvalidResponseError(ctx, 'hosts is not an array', ['hosts: expected array'], 200)],
    ['a bug (not an UpstreamError)', new TypeError("Cannot read properties of undefined (reading 'uuid')")],
  ])('%s is passed to the caller without a retry', async (_label, error) => {
    const { clock, budget } = setup({ initialTokens: 27 });
    const failing = scripted(clock, [error]);
    const result = track(budget.run('normal', '/hosts', failing.attempt));
    await clock.advanceAsync(60_000, 100);
    expect(failing.startedAt).toHaveLength(1);
    expect(result.error).toBe(error);
    expect(budget.snapshot().authFailed).toBeNull();
  });

  it('an attempt that throws synchronously is a failure, not a crash', async () => {
    const { budget } = setup({ initialTokens: 27 });
    const result = track(
      budget.run('normal', '/hosts', () => {
        throw new Error('sync bug');
      }),
    );
    await flushMicrotasks();
    expect(result).toMatchObject({ status: 'rejected', error: { message: 'sync bug' } });
  });

  it('rejects an unknown priority with a clear error', async () => {
    const { budget } = setup();
    await expect(budget.run('urgent' as Priority, '/hosts', () => Promise.resolve(1))).rejects.toThrow(
      'unknown request priority "urgent"; expected one of high, normal, bulk',
    );
  });
});

describe('RequestBudget: authentication failures', () => {
  it.each<[string, UpstreamError, 'unauthorized' | 'plan_required']>([
    ['401', new UnauthorizedError(ctx, 'missing or invalid key', 401), 'unauthorized'],
    ['403 plan_required', new PlanRequiredError(ctx, 'API access requires Pro', 'https://example.invalid/upgrade'), 'plan_required'],
  ])('%s is not retried; the key fails fast, then lets one probe through', async (_label, error, kind) => {
    const { clock, budget, t0 } = setup({ initialTokens: 27, authRetryMs: 600_000, concurrency: 4 });
    const first = scripted(clock, [error]);
    const queuedBehind = manual(clock);
    const firstResult = track(budget.run('high', '/hosts', first.attempt));
    await flushMicrotasks();
    expect(firstResult.error).toBe(error);
    expect(first.startedAt).toHaveLength(1);
    expect(budget.snapshot().authFailed).toEqual({ kind, sinceMs: t0, retryAtMs: t0 + 600_000 });

    // Fail fast: no attempt is made while the window lasts.
    await clock.advanceAsync(599_000, 1_000);
    const fast = track(budget.run('bulk', '/series', queuedBehind.attempt));
    await flushMicrotasks();
    // The same kind of error, addressed to the request it refuses (which was never sent).
    expect(fast.error).toBeInstanceOf(error.constructor);
    expect((fast.error as UpstreamError).context.endpoint).toBe('/series');
    expect((fast.error as Error).message).toContain('not sent: the key failed on /hosts');
    expect(queuedBehind.startedAt).toEqual([]);
    expect(budget.snapshot().totals.failedFast).toBe(1);

    // After the window: exactly one probe at a time.
    await clock.advanceAsync(1_000);
    const probe = manual(clock);
    const waiting = manual(clock);
    const probeResult = track(budget.run('normal', '/account', probe.attempt));
    const waitingResult = track(budget.run('normal', '/hosts', waiting.attempt));
    await clock.advanceAsync(1_000, 100);
    expect(probe.startedAt).toHaveLength(1);
    expect(waiting.startedAt).toHaveLength(0);

    probe.resolve('account');
    await clock.advanceAsync(1_000, 100);
    expect(probeResult.status).toBe('fulfilled');
    expect(budget.snapshot().authFailed).toBeNull();
    expect(waiting.startedAt).toHaveLength(1);
    waiting.resolve('hosts');
    await flushMicrotasks();
    expect(waitingResult).toMatchObject({ status: 'fulfilled', value: 'hosts' });
  });

  it('a probe that fails again restarts the fail-fast window and rejects the requests waiting on it', async () => {
    const { clock, budget } = setup({ initialTokens: 27, authRetryMs: 60_000 });
    const error = new UnauthorizedError(ctx, 'invalid key', 401);
    track(budget.run('high', '/hosts', scripted(clock, [error]).attempt));
    await clock.advanceAsync(60_000, 1_000);
    const probe = manual(clock);
    track(budget.run('high', '/hosts', probe.attempt));
    const waiting = track(budget.run('high', '/account', () => Promise.resolve('never')));
    await flushMicrotasks();
    const probeFailedAt = clock.now();
    probe.reject(new UnauthorizedError(ctx, 'still invalid', 401));
    await flushMicrotasks();
    expect(waiting.status).toBe('rejected');
    expect(budget.snapshot().authFailed?.sinceMs).toBe(probeFailedAt);
    const again = track(budget.run('high', '/hosts', () => Promise.resolve('x')));
    await flushMicrotasks();
    expect(again).toMatchObject({ status: 'rejected', error: { kind: 'unauthorized' } });
  });

  it('rejects the requests already queued when the key fails, without calling upstream', async () => {
    const { clock, budget } = setup({ initialTokens: 1, concurrency: 1 });
    const first = manual(clock);
    track(budget.run('high', '/hosts', first.attempt));
    const queued = Array.from({ length: 3 }, () => track(budget.run('bulk', '/series', () => Promise.resolve('x'))));
    await flushMicrotasks();
    expect(budget.snapshot().queued.bulk).toBe(3);
    first.reject(new UnauthorizedError(ctx, 'revoked', 401));
    await flushMicrotasks();
    expect(queued.map((q) => q.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(budget.snapshot().totals.attempts).toBe(1);
  });
});

describe('RequestBudget: close()', () => {
  it('rejects queued and retry-waiting requests and aborts those in flight', async () => {
    const { clock, budget } = setup({ initialTokens: 2, concurrency: 1 });
    const inFlight = manual(clock);
    const retrying = scripted(clock, [new ServerError(ctx, 'oops', 500)]);
    const flightResult = track(budget.run('high', '/hosts', inFlight.attempt));
    await flushMicrotasks();
    // Runs once the slot frees, then waits out its backoff.
    const retryResult = track(budget.run('high', '/account', retrying.attempt));
    const queuedResult = track(budget.run('bulk', '/series', () => Promise.resolve('x')));
    await flushMicrotasks();

    expect(budget.snapshot()).toMatchObject({ inFlight: 1, queued: { high: 1, bulk: 1 } });
    inFlight.resolve('first');
    await flushMicrotasks();
    expect(budget.snapshot().waitingToRetry).toBe(1);
    const secondFlight = manual(clock);
    const secondResult = track(budget.run('high', '/hosts/{uuid}', secondFlight.attempt));
    await clock.advanceAsync(2_000, 100);
    expect(secondFlight.startedAt).toHaveLength(1);

    budget.close();
    await flushMicrotasks();
    expect(flightResult.status).toBe('fulfilled');
    expect(secondFlight.signals[0]?.aborted).toBe(true);
    expect(secondFlight.signals[0]?.reason).toBeInstanceOf(BudgetClosedError);
    for (const r of [retryResult, queuedResult, secondResult]) {
      expect(r.status).toBe('rejected');
      expect(r.error).toBeInstanceOf(BudgetClosedError);
    }
    expect((secondResult.error as Error).message).toBe('request budget for account "acme" is closed; /hosts/{uuid} was not completed');
    expect(budget.snapshot()).toMatchObject({ inFlight: 0, waitingToRetry: 0, queued: { high: 0, normal: 0, bulk: 0 } });
    expect(clock.pending()).toBe(0);

    // Late settlement of an aborted attempt changes nothing; new work is refused.
    secondFlight.resolve('too late');
    await flushMicrotasks();
    expect(secondResult.status).toBe('rejected');
    await expect(budget.run('high', '/hosts', () => Promise.resolve('x'))).rejects.toBeInstanceOf(BudgetClosedError);
  });
});

describe('RequestBudget: snapshot and events', () => {
  it('reports the budget figures and never the key', () => {
    const { budget } = setup();
    const snap = budget.snapshot();
    expect(snap).toMatchObject({
      name: 'acme',
      tokens: 13,
      burst: 27,
      concurrency: 4,
      pausedUntilMs: null,
      authFailed: null,
      queued: { high: 0, normal: 0, bulk: 0 },
      inFlight: 0,
    });
    expect(snap.configuredRatePerSecond).toBeCloseTo(1.8, 12);
    expect(snap.effectiveRatePerSecond).toBeCloseTo(1.8, 12);
  });

  it('tells a listener about pauses and auth state, and survives a throwing listener', async () => {
    const events: string[] = [];
    const { clock, budget } = setup({
      initialTokens: 27,
      authRetryMs: 1_000,
      onEvent: (e) => {
        events.push(e.type);
        throw new Error('logger broke');
      },
    });
    track(budget.run('high', '/hosts', scripted(clock, [new RateLimitedError(ctx, 'slow', '1'), 'ok']).attempt));
    await clock.advanceAsync(5_000, 100);
    track(budget.run('high', '/hosts', scripted(clock, [new UnauthorizedError(ctx, 'no', 401)]).attempt));
    await clock.advanceAsync(5_000, 100);
    const recovered = track(budget.run('high', '/hosts', scripted(clock, ['ok']).attempt));
    await clock.advanceAsync(5_000, 100);
    expect(events).toEqual(['paused', 'auth_failed', 'auth_recovered']);
    expect(recovered.status).toBe('fulfilled');
  });
});

describe('RequestBudget.applyUpstreamLimit', () => {
  it('follows a lower stated limit, minus headroom, and goes back up no further than the configured one', () => {
    const { budget } = setup({ ratePerMinute: 120, burst: 30, headroom: 0.1 });
    expect(budget.applyUpstreamLimit({ ratePerMinute: 60, burst: 10 })).toEqual({ ratePerMinute: 60, burst: 10 });
    expect(budget.snapshot()).toMatchObject({ configuredRatePerSecond: 0.9, burst: 9 });
    expect(budget.applyUpstreamLimit({ ratePerMinute: 600, burst: 100 })).toEqual({ ratePerMinute: 120, burst: 30 });
    expect(budget.snapshot()).toMatchObject({ configuredRatePerSecond: 1.8, burst: 27 });
  });

  it('leaves what the upstream does not state, and ignores nonsense', () => {
    const { budget } = setup({ ratePerMinute: 120, burst: 30, headroom: 0 });
    expect(budget.applyUpstreamLimit({ ratePerMinute: undefined, burst: 5 })).toEqual({ ratePerMinute: 120, burst: 5 });
    expect(budget.applyUpstreamLimit({ ratePerMinute: -3, burst: Number.NaN })).toEqual({ ratePerMinute: 120, burst: 30 });
    expect(budget.snapshot()).toMatchObject({ configuredRatePerSecond: 2, burst: 30 });
  });

  it('spends no faster than the lowered rate', async () => {
    const { clock, budget, t0 } = setup({ ratePerMinute: 120, burst: 2, headroom: 0, initialTokens: 0 });
    budget.applyUpstreamLimit({ ratePerMinute: 30 });
    const started: number[] = [];
    const runs = Array.from({ length: 4 }, () => budget.run('normal', '/hosts', () => Promise.resolve(started.push(clock.now()))));
    await clock.advanceAsync(8_000);
    await Promise.all(runs);
    expect(started.map((at) => at - t0)).toEqual([2_000, 4_000, 6_000, 8_000]);
  });
});


describe('RequestBudget: state across a restart', () => {
  /** A lease as the state keeper grants it, driven by hand. */
  function handLease() {
    let writing: number | undefined;
    const listeners = new Set<() => void>();
    const lease = {
      requests: 0,
      touched: 0,
      writing: () => writing,
      touch: () => void lease.touched++,
      request: () => void lease.requests++,
      onSaved: (listener: () => void) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      /** A save: collects with `grant` being written, then tells the budgets it is done. */
      save(grant: number, collect: () => void) {
        writing = grant;
        collect();
        writing = undefined;
        for (const l of listeners) l();
      },
    };
    return lease;
  }

  it('without a lease, a closed budget saves its exact tokens; a restart refills them by the time passed', async () => {
    const { clock, budget } = setup({ ratePerMinute: 60, burst: 10, headroom: 0, initialTokens: 10 });
    const done = Array.from({ length: 7 }, () => budget.run('normal', '/hosts', () => Promise.resolve('ok')));
    await Promise.all(done);
    budget.close();
    const saved = budget.persistentState();
    expect(saved).toEqual({ tokens: 3, asOfMs: clock.now(), pausedUntilMs: null });
    clock.advance(4_000);
    const next = createRequestBudget({ name: 'acme', clock, ratePerMinute: 60, burst: 10, headroom: 0, restored: JSON.parse(JSON.stringify(saved)) as unknown });
    expect(next.snapshot().tokens).toBeCloseTo(7, 5);
    next.close();
  });

  it('with a lease, a save writes no tokens as of the end of the lease it grants; a restart before then starts empty and refills from it', async () => {
    const lease = handLease();
    const { clock, budget } = setup({ ratePerMinute: 60, burst: 10, headroom: 0, initialTokens: 10, lease });
    // It wants to spend: the save grants it a lease.
    const first = budget.run('normal', '/hosts', () => Promise.resolve('ok'));
    await flushMicrotasks();
    let saved: unknown;
    lease.save(clock.now() + 15_000, () => {
      saved = JSON.parse(JSON.stringify(budget.persistentState())) as unknown;
    });
    await first;
    expect(saved).toEqual({ tokens: 0, asOfMs: clock.now() + 15_000, pausedUntilMs: null });
    // Killed now; restarted 5 s later: nothing until the lease's end, then one a second.
    clock.advance(5_000);
    const restarted = createRequestBudget({ name: 'acme', clock, ratePerMinute: 60, burst: 10, headroom: 0, restored: saved });
    expect(restarted.snapshot().tokens).toBe(0);
    clock.advance(10_000);
    expect(restarted.snapshot().tokens).toBe(0);
    clock.advance(3_000);
    expect(restarted.snapshot().tokens).toBeCloseTo(3, 5);
    budget.close();
    restarted.close();
  });

  it('spends nothing past its lease: asks for a save, and goes on when it is renewed', async () => {
    const lease = handLease();
    const { clock, budget } = setup({ ratePerMinute: 600, burst: 10, headroom: 0, initialTokens: 10, lease });
    const collect = () => void budget.persistentState();
    const { startedAt, attempt } = scripted(clock, ['ok']);
    const first = budget.run('normal', '/hosts', attempt);
    await flushMicrotasks();
    expect(startedAt).toEqual([]);
    expect(lease.requests).toBe(1);
    lease.save(clock.now() + 15_000, collect);
    await first;
    expect(startedAt).toHaveLength(1);
    expect(lease.touched).toBe(1);
    clock.advance(15_000);
    const second = budget.run('normal', '/hosts', attempt);
    await flushMicrotasks();
    expect(startedAt).toHaveLength(1);
    expect(lease.requests).toBe(2);
    lease.save(clock.now() + 15_000, collect);
    await second;
    expect(startedAt).toHaveLength(2);
    budget.close();
  });

  it('a budget with nothing to spend takes no lease: an idle restart does not push the next one back', async () => {
    const lease = handLease();
    const { clock } = setup();
    // Restored as empty until 10 s from now (the lease of the process before).
    const budget = createRequestBudget({ name: 'acme', clock, ratePerMinute: 60, burst: 10, headroom: 0, lease, restored: { tokens: 0, asOfMs: clock.now() + 10_000, pausedUntilMs: null } });
    const waiting = budget.run('normal', '/hosts', () => Promise.resolve('ok'));
    await flushMicrotasks();
    expect(lease.requests).toBe(0);
    let saved: unknown;
    lease.save(clock.now() + 15_000, () => (saved = budget.persistentState()));
    // Saved as restored: a kill now leaves the next start where this one began.
    expect(saved).toEqual({ tokens: 0, asOfMs: clock.now() + 10_000, pausedUntilMs: null });
    clock.advance(11_000);
    expect(lease.requests).toBe(1);
    lease.save(clock.now() + 15_000, () => void budget.persistentState());
    await waiting;
    budget.close();
  });

  it('a Retry-After pause survives the restart', async () => {
    const { clock, budget } = setup({ ratePerMinute: 600, burst: 10, headroom: 0, initialTokens: 10 });
    const { attempt } = scripted(clock, [new RateLimitedError(ctx, 'rate limited', '120'), 'ok']);
    void budget.run('normal', '/hosts', attempt).catch(() => undefined);
    await flushMicrotasks();
    budget.close();
    const saved = budget.persistentState();
    expect(saved.pausedUntilMs).toBe(clock.now() + 120_000);
    clock.advance(30_000);
    const restarted = createRequestBudget({ name: 'acme', clock, ratePerMinute: 600, burst: 10, headroom: 0, restored: saved });
    const later = scripted(clock, ['ok']);
    const run = restarted.run('normal', '/hosts', later.attempt);
    await flushMicrotasks();
    expect(later.startedAt).toEqual([]);
    clock.advance(89_000);
    await flushMicrotasks();
    expect(later.startedAt).toEqual([]);
    clock.advance(2_000);
    await run;
    expect(later.startedAt).toHaveLength(1);
    expect(later.startedAt[0]).toBeGreaterThanOrEqual(saved.pausedUntilMs ?? Infinity);
    restarted.close();
  });

  it('ignores a saved state it cannot read', () => {
    const { clock } = setup();
    for (const restored of [null, 'x', { tokens: 'many' }, { tokens: 1, asOfMs: Infinity, pausedUntilMs: null }]) {
      const budget = createRequestBudget({ name: 'acme', clock, burst: 10, headroom: 0, restored });
      expect(budget.snapshot().tokens).toBe(5);
      budget.close();
    }
  });
});
