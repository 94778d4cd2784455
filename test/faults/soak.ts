import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { familySum, startRig, type Rig } from './harness.js';

/**
 * The soak: hours of simulated time against the simulator with host churn (hosts added and
 * removed every hour) and intermittent faults (5xx shares, a 429 storm, a short outage of
 * the series endpoint), sampling the heap after a full garbage collection every simulated
 * hour. Used in short form by test/faults/soak.test.ts and in long form by scripts/soak.ts.
 */

export interface SoakSample {
  readonly hour: number;
  /** After a full GC; exporter and simulator share the process. */
  readonly heapUsedBytes: number;
  readonly rssBytes: number;
  readonly seriesExposed: number;
  readonly hostsPolled: number;
  readonly upstreamRequests: number;
}

export interface SoakResult {
  readonly samples: SoakSample[];
  /** Counter values of every series of a delta family, per sample: they must never go down. */
  readonly counterDecreases: number;
  readonly realSeconds: number;
}

/** A full garbage collection, with or without --expose-gc. */
export function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const HOUR = 3_600_000;

export async function runSoak(options: { hours: number; hosts: number; websites: number; stepMs?: number; onSample?: (s: SoakSample) => void }): Promise<SoakResult> {
  const started = Date.now();
  const rig: Rig = await startRig({
    simulator: { hosts: options.hosts, websites: options.websites, seed: 'soak', rateLimitPerMinute: 120, burst: 30, random: Math.random },
  });
  const samples: SoakSample[] = [];
  let counterDecreases = 0;
  try {
    const exporter = await rig.start();
    const account = rig.sim.world.accountByKey(rig.sim.keys.pro);
    if (!account) throw new Error('no simulated account');
    const stepMs = options.stepMs ?? 2_000;
    let previous = new Map<string, number>();
    for (let hour = 1; hour <= options.hours; hour++) {
      // Churn: two hosts leave, two new ones come.
      account.removeHosts(2, rig.clock.now());
      account.addHosts(2, rig.clock.now());
      // Faults: every third hour 10 minutes of 5xx and broken bodies, a 2-minute 429 storm, 5 minutes without series.
      if (hour % 3 === 0) rig.sim.faults.apply({ target: 'monitoring', error_503: 0.2, error_500: 0.05, truncated_json: 0.05 });
      for (let t = 0; t < HOUR; t += stepMs) {
        await rig.advance(stepMs);
        if (hour % 3 === 0 && t === 10 * 60_000) {
          rig.sim.faults.clear();
          rig.sim.faults.apply({ target: 'monitoring', storm_seconds: 120 });
        }
      }
      const body = await rig.scrape();
      const counters = new Map<string, number>();
      for (const line of body.split('\n')) {
        if (!line.startsWith('monapi_') || !/_total[{ ]/.test(line) || line.startsWith('monapi_upstream') || line.startsWith('monapi_budget')) continue;
        const space = line.lastIndexOf(' ');
        counters.set(line.slice(0, space), Number(line.slice(space + 1)));
      }
      for (const [series, value] of counters) if ((previous.get(series) ?? -Infinity) > value) counterDecreases++;
      previous = counters;
      collectGarbage();
      const status = exporter.status() as { accounts: { hosts_polled: number; series_exposed: number }[] };
      const sample: SoakSample = {
        hour,
        heapUsedBytes: process.memoryUsage().heapUsed,
        rssBytes: process.memoryUsage().rss,
        seriesExposed: status.accounts[0]?.series_exposed ?? 0,
        hostsPolled: status.accounts[0]?.hosts_polled ?? 0,
        upstreamRequests: familySum(body, 'monapi_upstream_requests_total'),
      };
      samples.push(sample);
      options.onSample?.(sample);
    }
  } finally {
    await rig.close();
  }
  return { samples, counterDecreases, realSeconds: (Date.now() - started) / 1000 };
}
