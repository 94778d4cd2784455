import { describe, expect, it } from 'vitest';
import { runSoak } from './soak.js';

/**
 * Item 10 of issue 13, short form: 6 simulated hours of 20 hosts with churn and faults in
 * about a minute of real time. The heap after a full GC must not grow hour after hour once
 * warm, no counter may go down, and the requests must stay within the rate limit. The long
 * form is `npx tsx scripts/soak.ts --hours 48` (docs/reliability.md).
 */
describe('soak, short form', () => {
  it('6 simulated hours with host churn and faults: bounded heap, counters never go down, requests within the limit', async () => {
    const result = await runSoak({ hours: 6, hosts: 20, websites: 4, stepMs: 5_000 });
    const mib = (n: number) => Math.round(n / 1024 / 102.4) / 10;
    console.info(
      `soak: ${result.samples.length} simulated hours in ${result.realSeconds.toFixed(0)} s; heap after GC per hour (MiB): ${result.samples.map((s) => mib(s.heapUsedBytes)).join(', ')}; ` +
        `series ${result.samples.map((s) => s.seriesExposed).join(', ')}; requests ${result.samples.at(-1)?.upstreamRequests}`,
    );
    expect(result.counterDecreases).toBe(0);
    const warm = result.samples[2]?.heapUsedBytes ?? NaN;
    const last = result.samples.at(-1)?.heapUsedBytes ?? NaN;
    // Warm after two hours (catalogues, first series, plan); from then on no steady growth.
    expect(last - warm).toBeLessThan(24 * 1024 * 1024);
    const requests = result.samples.at(-1)?.upstreamRequests ?? Infinity;
    expect(requests).toBeLessThanOrEqual(6 * 60 * 120);
    expect(result.samples.every((s) => s.hostsPolled > 0 && s.seriesExposed > 0)).toBe(true);
  }, 300_000);
});
