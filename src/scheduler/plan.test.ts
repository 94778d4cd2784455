import { describe, expect, it } from 'vitest';
import { computePlan, type PlannedJob } from './plan.js';

const hostJobs = (n: number, cadenceMs: number, requests = 1): PlannedJob[] =>
  Array.from({ length: n }, () => ({ source: 'series', priority: 'bulk' as const, cadenceMs, requestsPerRun: requests }));

describe('computePlan', () => {
  it('keeps configured cadences when the budget suffices', () => {
    const plan = computePlan([...hostJobs(10, 60_000), { source: 'hosts', priority: 'high', cadenceMs: 60_000, requestsPerRun: 1 }], 2);
    expect(plan.requestsPerCycle).toBe(11);
    expect(plan.demandPerSecond).toBeCloseTo(11 / 60);
    expect(plan.pressure).toBeLessThan(1);
    expect(plan.roundSeconds).toBe(0);
    expect(plan.sources.find((s) => s.source === 'series')?.effectiveCadenceSeconds).toBe(60);
  });

  it('stretches every flexible job to the same round when demand exceeds supply', () => {
    // 300 hosts at 60 s = 5 req/s; the budget gives 2 req/s, of which the host list takes 1/60.
    const plan = computePlan([...hostJobs(300, 60_000), { source: 'hosts', priority: 'high', cadenceMs: 60_000, requestsPerRun: 1 }], 2);
    expect(plan.pressure).toBeGreaterThan(2.5);
    const remaining = 2 - 1 / 60;
    expect(plan.roundSeconds).toBeCloseTo(300 / remaining, 3);
    expect(plan.sources.find((s) => s.source === 'series')?.effectiveCadenceSeconds).toBeCloseTo(300 / remaining, 3);
    expect(plan.sources.find((s) => s.source === 'hosts')?.effectiveCadenceSeconds).toBe(60);
    expect(plan.fullCycleSeconds).toBeCloseTo(301 / 2);
  });

  it('leaves jobs whose cadence is longer than the round alone (water-filling)', () => {
    const jobs: PlannedJob[] = [
      ...hostJobs(200, 60_000),
      ...Array.from({ length: 200 }, () => ({ source: 'metric_catalogue', priority: 'normal' as const, cadenceMs: 3_600_000, requestsPerRun: 1 })),
    ];
    const plan = computePlan(jobs, 2);
    const round = plan.roundSeconds;
    // 200/round + 200/3600 = 2  =>  round = 200 / (2 - 200/3600)
    expect(round).toBeCloseTo(200 / (2 - 200 / 3600), 2);
    expect(plan.sources.find((s) => s.source === 'metric_catalogue')?.effectiveCadenceSeconds).toBe(3600);
  });

  it('counts batched jobs by their requests', () => {
    const plan = computePlan(hostJobs(10, 60_000, 3), 0.25);
    expect(plan.requestsPerCycle).toBe(30);
    expect(plan.fullCycleSeconds).toBeCloseTo(120);
    expect(plan.roundSeconds).toBeCloseTo(120, 3);
  });

  it('handles an empty plan', () => {
    const plan = computePlan([], 2);
    expect(plan).toMatchObject({ requestsPerCycle: 0, demandPerSecond: 0, roundSeconds: 0, pressure: 0, sources: [] });
  });
});
