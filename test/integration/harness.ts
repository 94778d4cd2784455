import { setTimeout as sleep } from 'node:timers/promises';
import { createRequestBudget, type RequestBudget, type RequestBudgetOptions } from '../../src/budget/index.js';
import { systemClock, type Clock } from '../../src/lib/clock.js';
import { startSimulator, type ClientStats, type RunningSimulator } from '../../simulator/index.js';
import { UndiciTransport, type UndiciTransportOptions } from '../../src/upstream/http/transport.js';
import type { UpstreamMetrics } from '../../src/upstream/metrics.js';
import { MonitoringClient } from '../../src/upstream/monitoring/client.js';
import { monitoringCalls, type MonitoringCalls } from '../support/monitoring-calls.js';

/**
 * Shared by the budget integration tests and `bench/budget.bench.ts`: the real simulator on
 * free ports, the real budget and client over real HTTP, callers that keep the budget's queue
 * full, and readings of the simulator's own request counts from `/_sim/stats`.
 */

export interface LimitedSimulatorOptions {
  ratePerMinute: number;
  burst: number;
  clock?: Clock;
  random?: () => number;
}

/** The simulator with a given limit per key; few hosts, since the tests ask for cheap lists. */
export function startLimitedSimulator(options: LimitedSimulatorOptions): Promise<RunningSimulator> {
  return startSimulator({
    monitoringPort: 0,
    releasesPort: 0,
    marketplacePort: 0,
    hosts: 4,
    websites: 1,
    rateLimitPerMinute: options.ratePerMinute,
    burst: options.burst,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.random ? { random: options.random } : {}),
  });
}

/** What `GET /_sim/stats` answers, as far as these tests read it. */
export interface StatsReading {
  readonly nowMs: number;
  readonly monitoring: Readonly<Record<string, ClientStats>>;
}

const EMPTY_CLIENT: ClientStats = {
  total: 0,
  by_status: {},
  first_request_at: '',
  first_request_ms: 0,
  last_request_at: '',
  last_request_ms: 0,
};

/** Reads the simulator's counts over HTTP, as an operator would. */
export async function readStats(sim: RunningSimulator): Promise<StatsReading> {
  const response = await fetch(`${sim.adminUrl}/stats`);
  if (!response.ok) throw new Error(`GET /_sim/stats answered ${response.status}`);
  const body = (await response.json()) as { now_ms: number; monitoring: Record<string, ClientStats> };
  return { nowMs: body.now_ms, monitoring: body.monitoring };
}

export function clientStats(reading: StatsReading, account: string): ClientStats {
  return reading.monitoring[account] ?? EMPTY_CLIENT;
}

export function statusCount(stats: ClientStats, status: string): number {
  return stats.by_status[status] ?? 0;
}

export async function resetStats(sim: RunningSimulator): Promise<void> {
  const response = await fetch(`${sim.adminUrl}/stats/reset`, { method: 'POST' });
  if (!response.ok) throw new Error(`POST /_sim/stats/reset answered ${response.status}`);
  await response.arrayBuffer();
}

export async function setFaults(sim: RunningSimulator, faults: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${sim.adminUrl}/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ target: 'monitoring', ...faults }),
  });
  if (!response.ok) throw new Error(`POST /_sim/faults answered ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
}

export async function clearFaults(sim: RunningSimulator): Promise<void> {
  const response = await fetch(`${sim.adminUrl}/faults`, { method: 'DELETE' });
  if (!response.ok) throw new Error(`DELETE /_sim/faults answered ${response.status}`);
  await response.arrayBuffer();
}

/** The requests per minute the simulator saw from one client: arrivals between its first and last request. */
export function arrivalRatePerMinute(stats: ClientStats): number {
  const spanMs = stats.last_request_ms - stats.first_request_ms;
  if (stats.total < 2 || spanMs <= 0) return 0;
  // n arrivals span n - 1 gaps.
  return ((stats.total - 1) / spanMs) * 60_000;
}

export interface BudgetedClient {
  readonly budget: RequestBudget;
  /** Every endpoint, as the sources call it. */
  readonly client: MonitoringCalls;
  readonly transport: UndiciTransport;
  close(): Promise<void>;
}

export interface BudgetedClientOptions {
  sim: RunningSimulator;
  apiKey: string;
  budget: Omit<RequestBudgetOptions, 'name' | 'clock'> & { clock?: Clock };
  transport?: UndiciTransportOptions;
  metrics?: UpstreamMetrics;
}

/** The production pieces wired as the exporter wires them: one budget per key in front of the client. */
export function budgetedClient(options: BudgetedClientOptions): BudgetedClient {
  const clock = options.budget.clock ?? systemClock;
  const budget = createRequestBudget({ name: 'integration', ...options.budget, clock });
  const transport = new UndiciTransport({ connectionsPerOrigin: 16, ...options.transport });
  const client = monitoringCalls(
    new MonitoringClient({
      baseUrl: options.sim.monitoringBaseUrl,
      apiKey: options.apiKey,
      transport,
      gate: budget,
      clock,
      ...(options.metrics ? { metrics: options.metrics } : {}),
    }),
  );
  return {
    budget,
    client,
    transport,
    close: async () => {
      budget.close();
      await transport.close();
    },
  };
}

export interface Saturation {
  /** Calls that resolved / rejected so far, by error name. */
  readonly outcomes: { succeeded: number; failed: Record<string, number> };
  /**
   * Ends the loops after their current call. Calls waiting in a budget's queue settle only
   * when the budget serves or closes them, so close the budget before awaiting this.
   */
  stop(): Promise<void>;
}

/**
 * `callers` loops that each call `call` again as soon as the previous call settles, so the
 * budget always has a queue: demand far above any budget. Errors are counted, not thrown.
 */
export function saturate(call: () => Promise<unknown>, callers: number): Saturation {
  const outcomes = { succeeded: 0, failed: {} as Record<string, number> };
  let running = true;
  const loop = async (): Promise<void> => {
    while (running) {
      try {
        await call();
        outcomes.succeeded++;
      } catch (error) {
        const name = error instanceof Error ? error.name : 'unknown';
        outcomes.failed[name] = (outcomes.failed[name] ?? 0) + 1;
        // A call that fails fast (closed budget, auth failure) would otherwise spin the loop.
        await sleep(5);
      }
    }
  };
  const loops = Array.from({ length: callers }, () => loop());
  return {
    outcomes,
    stop: () => {
      running = false;
      return Promise.allSettled(loops).then(() => undefined);
    },
  };
}

/** Waits until `condition` holds, checking every `everyMs`; false if `timeoutMs` passes first. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

export { sleep };

/** One reading of a client's counts on the simulator's clock. */
export interface Sample {
  readonly atMs: number;
  readonly total: number;
  readonly ok: number;
  readonly limited: number;
}

export interface Sampler {
  readonly samples: readonly Sample[];
  stop(): Promise<void>;
}

/** Reads `/_sim/stats` every `everyMs` (real time) and keeps the counts of one account. */
export function sampleStats(sim: RunningSimulator, account: string, everyMs: number): Sampler {
  const samples: Sample[] = [];
  let running = true;
  const loop = async (): Promise<void> => {
    while (running) {
      const reading = await readStats(sim);
      const stats = clientStats(reading, account);
      samples.push({ atMs: reading.nowMs, total: stats.total, ok: statusCount(stats, '200'), limited: statusCount(stats, '429') });
      await sleep(everyMs);
    }
  };
  const done = loop();
  return {
    samples,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/**
 * Counts between two times from samples. `outer` uses the last sample at or before `fromMs`
 * and the first at or after `toMs` (never less than the true count: use it for upper bounds);
 * `inner` the first at or after `fromMs` and the last at or before `toMs` (never more: use it
 * for lower bounds). Returns the counts and the span they cover.
 */
export function countBetween(
  samples: readonly Sample[],
  fromMs: number,
  toMs: number,
  mode: 'outer' | 'inner',
): { total: number; ok: number; limited: number; spanMs: number } {
  const before = samples.filter((s) => s.atMs <= fromMs);
  const afterFrom = samples.filter((s) => s.atMs >= fromMs);
  const beforeTo = samples.filter((s) => s.atMs <= toMs);
  const after = samples.filter((s) => s.atMs >= toMs);
  const start = mode === 'outer' ? before.at(-1) : afterFrom[0];
  const end = mode === 'outer' ? after[0] : beforeTo.at(-1);
  if (!start || !end || end.atMs < start.atMs) {
    throw new Error(`no samples cover ${mode} window ${fromMs}..${toMs} (samples from ${samples[0]?.atMs} to ${samples.at(-1)?.atMs})`);
  }
  return { total: end.total - start.total, ok: end.ok - start.ok, limited: end.limited - start.limited, spanMs: end.atMs - start.atMs };
}
