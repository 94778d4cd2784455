import { Registry, type Gauge } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { createSchedulerMetrics, VIEW_SLICE_MS, type SchedulingView } from './metrics.js';
import type { PlanFigures } from './plan.js';

/** A view whose every reading is logged, with the lag it is told to have, taking `readMs` of CPU. */
function viewOf(account: string, log: string[], lag: () => number, readMs = 0): SchedulingView {
  return {
    account,
    sourceHealth: () => [],
    plan: () => ({ sources: [] }) as unknown as PlanFigures,
    staleness: () => new Map(),
    up: () => ({ up: true, reason: '' }),
    lagSeconds: () => {
      log.push(`read ${account}`);
      const until = performance.now() + readMs;
      while (performance.now() < until);
      return lag();
    },
    fieldStates: () => [],
    listStates: () => [],
  };
}

const lagOf = async (registry: Registry) => (await (registry.getSingleMetric('monapi_scheduler_lag_seconds') as Gauge).get()).values.map((v) => [v.labels.account, v.value]);

describe('scheduler self-metrics read at scrape time', () => {
  it('lets the event loop serve what waits once reading views took a few ms, so a long list of accounts never holds it', async () => {
    const registry = new Registry();
    const metrics = createSchedulerMetrics(registry, { now: () => 0 });
    const log: string[] = [];
    for (const account of ['a', 'b', 'c']) metrics.track(viewOf(account, log, () => 1, VIEW_SLICE_MS + 1));
    const reading = lagOf(registry);
    setImmediate(() => log.push('another task'));
    expect(await reading).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 1],
    ]);
    expect(log.filter((line) => line.startsWith('read'))).toEqual(['read a', 'read b', 'read c']);
    // Read all in one task, the three reads would come before the other task.
    expect(log).toContain('another task');
    expect(log.indexOf('another task')).toBeLessThan(log.indexOf('read c'));
  });

  it('reads quick views in one go, without a turn of the event loop for each', async () => {
    const registry = new Registry();
    const metrics = createSchedulerMetrics(registry, { now: () => 0 });
    const log: string[] = [];
    for (const account of ['a', 'b', 'c']) metrics.track(viewOf(account, log, () => 1));
    // Time stands still: quick reads stay quick on a busy machine too, where being taken off the core between two would make them slow.
    const clock = vi.spyOn(performance, 'now').mockReturnValue(0);
    try {
      const reading = lagOf(registry);
      setImmediate(() => log.push('another task'));
      await reading;
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      clock.mockRestore();
    }
    expect(log).toEqual(['read a', 'read b', 'read c', 'another task']);
  });

  it('gives every overlapping collection whole values, never a gauge half filled', async () => {
    const registry = new Registry();
    const metrics = createSchedulerMetrics(registry, { now: () => 0 });
    let lag = 1;
    for (const account of ['a', 'b', 'c']) metrics.track(viewOf(account, [], () => lag, VIEW_SLICE_MS + 1));
    const first = lagOf(registry);
    // The second starts once the first has read two accounts and before it reads the third.
    await new Promise((resolve) => setImmediate(resolve));
    lag = 2;
    const second = lagOf(registry);
    const [one, two] = await Promise.all([first, second]);
    for (const values of [one, two]) expect(values.map(([account]) => account)).toEqual(['a', 'b', 'c']);
    expect(two.map(([, value]) => value)).toEqual([2, 2, 2]);
  });
});
