/**
 * Request budget benchmark: demand far above the limit against the in-process simulator,
 * over real HTTP, for a fixed window at a few limits, and the same for two naive clients
 * measured in the same run. Every figure is read from the simulator's own `/_sim/stats`.
 *
 *   npx tsx bench/budget.bench.ts [--window-s 10] [--limits 600,1200,2400] [--headroom 0.03]
 *
 * Limits are scaled up from the documented 120/min (burst a quarter of the limit, as 30 is of
 * 120) so that a window of seconds holds hundreds of requests: the algorithm is the same at
 * any scale, only the counts are larger.
 */
import { parseArgs } from 'node:util';
import type { RunningSimulator } from '../simulator/index.js';
import { passThroughGate } from '../test/support/test-server.js';
import { UndiciTransport } from '../src/upstream/http/transport.js';
import { MonitoringClient } from '../src/upstream/monitoring/client.js';
import { monitoringCalls } from '../test/support/monitoring-calls.js';
import {
  arrivalRatePerMinute,
  budgetedClient,
  clientStats,
  readStats,
  resetStats,
  saturate,
  sleep,
  startLimitedSimulator,
  statusCount,
  waitFor,
} from '../test/integration/harness.js';

const CALLERS = 40;

interface Row {
  limit: number;
  client: string;
  arrivalsPerMinute: number;
  okPerMinute: number;
  rateLimited: number;
  windowS: number;
}

const { values } = parseArgs({
  options: {
    'window-s': { type: 'string', default: '10' },
    limits: { type: 'string', default: '600,1200,2400' },
    headroom: { type: 'string', default: '0.03' },
  },
});
const windowS = Number(values['window-s']);
const limits = values.limits.split(',').map(Number);
const headroom = Number(values.headroom);
for (const [name, value] of [['--window-s', windowS], ['--headroom', headroom], ...limits.map((l) => ['--limits', l] as const)] as const) {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a non-negative number, got ${String(value)}`);
}

/** Resets the counts, lets `windowS` pass, and reads what the simulator saw from `pro`. */
async function measure(sim: RunningSimulator, limit: number, client: string): Promise<Row> {
  await resetStats(sim);
  const started = Date.now();
  await sleep(windowS * 1000);
  const pro = clientStats(await readStats(sim), 'pro');
  const elapsedMin = (Date.now() - started) / 60_000;
  return {
    limit,
    client,
    arrivalsPerMinute: arrivalRatePerMinute(pro),
    okPerMinute: statusCount(pro, '200') / elapsedMin,
    rateLimited: statusCount(pro, '429'),
    windowS,
  };
}

async function withSimulator<T>(limit: number, run: (sim: RunningSimulator, burst: number) => Promise<T>): Promise<T> {
  const burst = Math.max(1, Math.round(limit / 4));
  const sim = await startLimitedSimulator({ ratePerMinute: limit, burst });
  try {
    return await run(sim, burst);
  } finally {
    await sim.close();
  }
}

/** The production budget and client, 40 callers keeping its queue full. */
function budgeted(limit: number): Promise<Row> {
  return withSimulator(limit, async (sim, burst) => {
    const c = budgetedClient({ sim, apiKey: sim.keys.pro, budget: { ratePerMinute: limit, burst, headroom } });
    const load = saturate(() => c.client.hosts(), CALLERS);
    try {
      // Measure the steady state: from when the initial tokens are spent.
      await waitFor(() => c.budget.snapshot().tokens < 1, 20_000);
      return await measure(sim, limit, `budget (headroom ${headroom})`);
    } finally {
      const stopped = load.stop();
      await c.close();
      await stopped;
    }
  });
}

/** No bucket: one request every 60/limit s on a drift-free schedule, whatever the answers. */
function fixedInterval(limit: number): Promise<Row> {
  return withSimulator(limit, async (sim) => {
    const transport = new UndiciTransport({ connectionsPerOrigin: 16 });
    const client = monitoringCalls(new MonitoringClient({ baseUrl: sim.monitoringBaseUrl, apiKey: sim.keys.pro, transport, gate: passThroughGate }));
    const intervalMs = 60_000 / limit;
    let running = true;
    const inFlight = new Set<Promise<unknown>>();
    const loop = (async () => {
      const start = Date.now();
      for (let i = 0; running; i++) {
        const call = client.hosts().catch(() => undefined);
        inFlight.add(call);
        void call.finally(() => inFlight.delete(call));
        await sleep(Math.max(0, start + (i + 1) * intervalMs - Date.now()));
      }
    })();
    try {
      await sleep(1_000);
      return await measure(sim, limit, 'naive: fixed interval at the limit');
    } finally {
      running = false;
      await loop;
      await Promise.allSettled([...inFlight]);
      await transport.close();
    }
  });
}

/** No bucket, no pause: 40 callers, each retrying at once whatever the answer (429 included). */
function retryOn429(limit: number): Promise<Row> {
  return withSimulator(limit, async (sim) => {
    const transport = new UndiciTransport({ connectionsPerOrigin: CALLERS });
    const client = monitoringCalls(new MonitoringClient({ baseUrl: sim.monitoringBaseUrl, apiKey: sim.keys.pro, transport, gate: passThroughGate }));
    let running = true;
    const loops = Array.from({ length: CALLERS }, async () => {
      while (running) await client.hosts().catch(() => undefined);
    });
    try {
      await sleep(1_000);
      return await measure(sim, limit, 'naive: unbounded, retry on 429');
    } finally {
      running = false;
      await Promise.allSettled(loops);
      await transport.close();
    }
  });
}

const rows: Row[] = [];
for (const limit of limits) {
  for (const run of [budgeted, fixedInterval, retryOn429]) {
    const row = await run(limit);
    rows.push(row);
    process.stderr.write(`done: ${limit}/min ${row.client}\n`);
  }
}

const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
console.log(`\nwindow ${windowS} s per run, ${CALLERS} callers, Node ${process.version}\n`);
console.log('| simulator limit /min | client | arrivals /min | 200 /min | efficiency (200 / limit) | 429s in window | 429 share of arrivals |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  const arrivals = (r.arrivalsPerMinute * r.windowS) / 60;
  console.log(
    `| ${r.limit} | ${r.client} | ${r.arrivalsPerMinute.toFixed(0)} | ${r.okPerMinute.toFixed(0)} | ${pct(r.okPerMinute / r.limit)} | ${r.rateLimited} | ${pct(arrivals > 0 ? r.rateLimited / arrivals : 0)} |`,
  );
}
