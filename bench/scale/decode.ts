import { performance } from 'node:perf_hooks';
import { parseConfig } from '../../src/exporter/config.js';
import type { FamilySamples, MetricSink } from '../../src/exposition/model.js';
import { FakeClock, systemClock, type Clock } from '../../src/lib/clock.js';
import { TopicBoard } from '../../src/scheduler/topics.js';
import { SOURCES } from '../../src/sources/index.js';
import type { MonitoringSource } from '../../src/sources/source.js';
import { buildPoller } from '../../test/support/source-context.js';
import { passThroughGate } from '../../test/support/test-server.js';
import { UndiciTransport, type Transport, type TransportResponse } from '../../src/upstream/http/transport.js';
import { MonitoringClient } from '../../src/upstream/monitoring/client.js';

/**
 * Decode + map CPU per upstream byte, against `JSON.parse` of the same bodies.
 *
 * One full polling cycle of one account runs through the real sources (client, decoders,
 * mappers) against the simulator, and every response is recorded. The same cycle then runs
 * again and again with a transport that answers from the recording at once and a sink that
 * only counts, so what is timed is the client, the decoders and the mappers, nothing else.
 * The floor is `JSON.parse(body.toString())` of exactly those bodies.
 */

export interface DecodeResult {
  readonly requests: number;
  readonly bytes: number;
  readonly samples: number;
  /** Time of one cycle through the sources (median of the repetitions). */
  readonly decodeMapMs: number;
  readonly jsonParseMs: number;
  /** The source that costs most per byte, and its ratio to JSON.parse of its own bodies. */
  readonly bySource: readonly { readonly source: string; readonly bytes: number; readonly ms: number; readonly jsonParseMs: number }[];
}

class RecordingTransport implements Transport {
  readonly recorded = new Map<string, TransportResponse>();
  constructor(private readonly inner: Transport) {}
  async get(url: string, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<TransportResponse> {
    const response = await this.inner.get(url, headers, signal);
    this.recorded.set(url, response);
    return response;
  }
}

class ReplayTransport implements Transport {
  /** Bytes and JSON.parse-able bodies handed out, per source, for the floor. */
  constructor(
    private readonly recorded: ReadonlyMap<string, TransportResponse>,
    private readonly onBody: (body: Buffer) => void,
  ) {}
  get(url: string): Promise<TransportResponse> {
    const response = this.recorded.get(url);
    if (!response) return Promise.reject(new Error(`decode bench: no recorded response for ${url} (the cycle asked for something new)`));
    this.onBody(response.body);
    return Promise.resolve(response);
  }
}

const countingSink = (): MetricSink & { samples: number } => {
  const sink = {
    samples: 0,
    publish(_group: string, families: readonly FamilySamples[]) {
      for (const family of families) sink.samples += family.samples.length;
    },
    retract() {},
    groups: () => [],
  };
  return sink;
};

interface Cycle {
  readonly samples: number;
  /** CPU ms and body bytes per source. */
  readonly bySource: Map<string, { ms: number; bytes: number; bodies: Buffer[] }>;
}

/** One polling cycle of every source, in the order the runtime's first cycle takes. */
async function runCycle(baseUrl: string, transport: Transport, clock: Clock, bodySink: { current: Buffer[] }): Promise<Cycle> {
  const config = parseConfig(`accounts:\n  - name: bench\n    base_url: ${baseUrl}\n    api_key_env: BENCH_KEY\n`, { env: { BENCH_KEY: 'sim-pro-key' } });
  const account = config.accounts[0];
  if (!account) throw new Error('decode bench: no account in its own config');
  const client = new MonitoringClient({ baseUrl, apiKey: account.apiKey.reveal(), transport, gate: passThroughGate, clock });
  const sink = countingSink();
  const board = new TopicBoard();
  const sources = SOURCES.filter((source): source is MonitoringSource<unknown> => source.section === 'account' && account.sources[source.name]?.enabled === true).map((source) => ({
    name: source.name,
    poller: buildPoller(source, { account, exporter: config.exporter, upstream: client, sink, clock, board }),
  }));
  const bySource = new Map<string, { ms: number; bytes: number; bodies: Buffer[] }>();
  const signal = new AbortController().signal;
  const timed = async (name: string, run: () => Promise<void>): Promise<void> => {
    bodySink.current = [];
    // Wall time of work that never waits (the replay answers at once): the event loop's cost.
    const started = performance.now();
    await run();
    const entry = bySource.get(name) ?? { ms: 0, bytes: 0, bodies: [] };
    entry.ms += performance.now() - started;
    for (const body of bodySink.current) {
      entry.bytes += body.length;
      entry.bodies.push(body);
    }
    bySource.set(name, entry);
  };
  for (const { name, poller } of sources) if (poller.scope === 'unit') await timed(name, () => poller.poll(signal));
  for (const { name, poller } of sources) {
    if (poller.scope !== 'target') continue;
    for (const target of poller.targets().values()) if (poller.ready?.(target) ?? true) await timed(name, () => poller.poll(target, signal));
  }
  return { samples: sink.samples, bySource };
}

function jsonParseMs(bodies: readonly Buffer[]): number {
  const started = performance.now();
  for (const body of bodies) JSON.parse(body.toString('utf8'));
  return performance.now() - started;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** Records one cycle against `monitoringBaseUrl` (a running simulator), then times replays. */
export async function measureDecode(monitoringBaseUrl: string, repetitions: number): Promise<DecodeResult> {
  const undici = new UndiciTransport();
  const recorder = new RecordingTransport(undici);
  const noBodies = { current: [] as Buffer[] };
  const capturedAt = systemClock.now();
  await runCycle(monitoringBaseUrl, recorder, new FakeClock(capturedAt), noBodies);
  await undici.close();

  const bodySink = { current: [] as Buffer[] };
  const replay = new ReplayTransport(recorder.recorded, (body) => bodySink.current.push(body));
  const cycles: Cycle[] = [];
  // The first runs warm the JIT up, as a long-running exporter's would be.
  for (let i = 0; i < repetitions + 3; i++) {
    const cycle = await runCycle(monitoringBaseUrl, replay, new FakeClock(capturedAt), bodySink);
    if (i >= 3) cycles.push(cycle);
  }
  const last = cycles.at(-1);
  if (!last) throw new Error('decode bench: no repetitions');
  const sources = [...last.bySource.keys()];
  const bySource = sources.map((source) => {
    const entry = last.bySource.get(source) as { ms: number; bytes: number; bodies: Buffer[] };
    const parses: number[] = [];
    for (let i = 0; i < repetitions; i++) parses.push(jsonParseMs(entry.bodies));
    return { source, bytes: entry.bytes, ms: median(cycles.map((c) => c.bySource.get(source)?.ms ?? 0)), jsonParseMs: median(parses) };
  });
  const allBodies = [...last.bySource.values()].flatMap((e) => e.bodies);
  const parses: number[] = [];
  for (let i = 0; i < repetitions; i++) parses.push(jsonParseMs(allBodies));
  const totals = cycles.map((c) => [...c.bySource.values()].reduce((sum, e) => sum + e.ms, 0));
  return {
    requests: allBodies.length,
    bytes: allBodies.reduce((sum, b) => sum + b.length, 0),
    samples: last.samples,
    decodeMapMs: median(totals),
    jsonParseMs: median(parses),
    bySource,
  };
}
