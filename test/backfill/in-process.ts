import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { Progress } from '../../src/backfill/progress.js';
import type { HistorySeries } from '../../src/backfill/replay.js';
import { runBackfill, type BackfillOptions, type BackfillReport } from '../../src/backfill/run.js';
import type { HistoryWriter } from '../../src/backfill/writers.js';
import type { Config } from '../../src/config/types.js';
import { parseConfig } from '../../src/exporter/config.js';
import { FakeClock } from '../../src/lib/clock.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../simulator/index.js';
import type { SimAccount } from '../../simulator/monitoring/world-types.js';

/**
 * The backfill in this process against the in-process simulator, both on one fake clock, with
 * a pass-through proxy between them that can hold an answer while simulated time passes (a
 * slow upstream) and counts what the upstream answered. Time moves only when a test or the
 * proxy moves it, so a run is the same every time.
 */

export const ACCOUNT = 'pro';
export const START_MS = Date.UTC(2026, 10, 22, 12, 0, 0);

export interface UpstreamAnswer {
  readonly path: string;
  readonly status: number;
  /** When it was answered, on the fake clock. */
  readonly atMs: number;
}

export interface BackfillWorld {
  readonly clock: FakeClock;
  readonly sim: RunningSimulator;
  readonly simAccount: SimAccount;
  readonly config: Config;
  /** Every answer the backfill got, in order. */
  readonly answers: readonly UpstreamAnswer[];
  /** Requests sent and not yet answered. */
  readonly inFlight: number;
  /** Called with each request's path once the simulator has answered it, before the backfill gets the answer. */
  onAnswer: ((path: string) => void) | undefined;
  /** An answer of the test's own for a request, instead of the simulator's; undefined passes it on. */
  answerInstead: ((path: string) => { status: number; body: string } | undefined) | undefined;
  close(): Promise<void>;
}

export interface WorldOptions {
  readonly startMs?: number;
  /** Default: a rate limit no backfill here reaches (6000 a minute, burst 1000), as the account's `rate_limit` too. */
  readonly simulator?: SimulatorOptions;
  /** YAML lines added to the account (4-space indent). */
  readonly accountYaml?: string;
}

const GENEROUS_LIMIT = { rateLimitPerMinute: 6000, burst: 1000 };

export async function startBackfillWorld(options: WorldOptions = {}): Promise<BackfillWorld> {
  const clock = new FakeClock(options.startMs ?? START_MS);
  const sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 2, websites: 1, random: () => 0.5, ...GENEROUS_LIMIT, ...options.simulator, clock });
  const simAccount = sim.world.accountByKey(sim.keys.pro);
  if (!simAccount) throw new Error('the simulator has no Pro account');
  const upstream = new URL(sim.monitoringBaseUrl);
  const answers: UpstreamAnswer[] = [];
  const world: BackfillWorld = {
    clock,
    sim,
    simAccount,
    config: undefined as unknown as Config,
    answers,
    inFlight: 0,
    onAnswer: undefined,
    answerInstead: undefined,
    async close() {
      await closeServer(proxy);
      await sim.close();
    },
  };
  const proxy = createServer((req, res) => {
    (world as { inFlight: number }).inFlight += 1;
    res.once('close', () => ((world as { inFlight: number }).inFlight -= 1));
    const instead = world.answerInstead?.(req.url ?? '/');
    if (instead !== undefined) {
      answers.push({ path: req.url ?? '/', status: instead.status, atMs: clock.now() });
      res.writeHead(instead.status, { 'content-type': 'application/json' }).end(instead.body);
      return;
    }
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer: IncomingMessage) => {
      const path = req.url ?? '/';
      answers.push({ path, status: answer.statusCode ?? 0, atMs: clock.now() });
      world.onAnswer?.(path);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', (error) => res.destroy(error));
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = proxy.address() as AddressInfo;
  const limit = `    rate_limit:\n      requests_per_minute: ${sim.limiter.perMinute}\n      burst: ${sim.limiter.burst}\n`;
  const yaml = `accounts:\n  - name: ${ACCOUNT}\n    base_url: http://127.0.0.1:${port}${upstream.pathname}\n    api_key_env: BACKFILL_KEY\n${options.accountYaml ?? limit}`;
  (world as { config: Config }).config = parseConfig(yaml, { env: { BACKFILL_KEY: sim.keys.pro } });
  return world;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/**
 * Runs `work` to its end, moving the fake clock on in steps of `stepMs` while the backfill waits
 * on it (for its budget: a timer is set) and no request is in flight. Time stands still while
 * a request is on its way or answered, as for an upstream that answers at once, and while the
 * backfill writes.
 */
export async function withTimePassing<T>(world: BackfillWorld, work: Promise<T>, stepMs = 100): Promise<T> {
  let settled = false;
  const done = work.finally(() => (settled = true));
  while (!settled) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (!settled && world.inFlight === 0 && world.clock.pending() > 0) world.clock.advance(stepMs);
  }
  return done;
}

/** Keeps every series handed over, as a receiver would. */
export class MemoryHistoryWriter implements HistoryWriter {
  readonly target = 'memory';
  readonly series: HistorySeries[] = [];
  finished = 0;

  write(series: readonly HistorySeries[]): Promise<void> {
    this.series.push(...series);
    return Promise.resolve();
  }

  commit(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  finish(): Promise<void> {
    this.finished += 1;
    return Promise.resolve();
  }

  discardParts(): Promise<void> {
    return Promise.resolve();
  }

  missingOutput(): undefined {
    return undefined;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

export interface InProcessRun {
  readonly writer: HistoryWriter;
  readonly progressFile: string;
  readonly sinceMs?: number;
  readonly requestsPerMinute?: number;
  readonly log?: Logger;
  readonly extra?: Partial<BackfillOptions>;
}

/** One backfill run as the command makes it: the progress file opened afresh, as a new process would. */
export function backfillOnce(world: BackfillWorld, run: InProcessRun): Promise<BackfillReport> {
  const progress = Progress.open(run.progressFile, run.writer.target, world.clock.now(), false);
  (run.writer as { restore?: (sizes: Readonly<Record<string, number>>) => void }).restore?.(progress.partSizes);
  return runBackfill({
    config: world.config,
    writer: run.writer,
    progress,
    clock: world.clock,
    log: run.log ?? pino({ level: 'silent' }),
    proxy: {},
    sinceMs: run.sinceMs,
    requestsPerMinute: run.requestsPerMinute,
    ...run.extra,
  });
}
