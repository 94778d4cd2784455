import { performance } from 'node:perf_hooks';
import { parseConfig } from '../../src/exporter/config.js';
import type { FamilySamples, MetricSink } from '../../src/exposition/model.js';
import { FakeClock, systemClock, type Clock } from '../../src/lib/clock.js';
import { TopicBoard } from '../../src/scheduler/topics.js';
import { SOURCES } from '../../src/sources/index.js';
import type { MonitoringSource } from '../../src/sources/source.js';
import { buildPoller } from '../../test/support/source-context.js';
import { UndiciTransport, type Transport, type TransportResponse } from '../../src/upstream/http/transport.js';
import { MonitoringClient } from '../../src/upstream/monitoring/client.js';
import type { RequestGate } from '../../src/budget/index.js';

/**
 * Decode + map CPU per upstream byte, against `JSON.parse` of the same bodies.
 *
 * One account's pollers, built once, run polling cycles through the real sources (client,
 * decoders, mappers) against the simulator while every response is recorded; the same pollers
 * then run cycle after cycle with the transport answering from the recording at once and a
 * sink that only counts, so what is timed is the client, the decoders and the mappers in their
 * steady state, nothing else.
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

/**
 * A URL without its `since` window: pollers that keep state ask for a shorter window once they
 * hold the earlier points, and the replay answers them with the same recorded body.
 */
function replayKey(url: string): string {
  // String work, not URL parsing: this runs inside the timed cycle, once per request.
  return url.replace(/([?&])since=[^&]*(&?)/, (_whole, before: string, after: string) => (after === '' ? '' : before));
}

class ReplayTransport implements Transport {
  private readonly recorded = new Map<string, TransportResponse>();
  recording = true;
  /** Time spent finding the recorded answer: the harness's own, taken off what is timed. */
  harnessMs = 0;
  constructor(
    private readonly upstream: Transport,
    /** Bytes and JSON.parse-able bodies handed out, per source, for the floor. */
    private readonly onBody: (body: Buffer) => void,
  ) {}
  /** By the exact URL too: in the steady state a poller asks for the same URLs cycle after cycle, and the harness's own work is timed with the cycle. */
  private readonly byUrl = new Map<string, TransportResponse>();

  async get(url: string, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<TransportResponse> {
    const started = performance.now();
    const known = this.byUrl.get(url);
    if (known) {
      this.onBody(known.body);
      this.harnessMs += performance.now() - started;
      return known;
    }
    const key = replayKey(url);
    let response = this.recorded.get(key);
    if (!response) {
      if (!this.recording) throw new Error(`decode bench: no recorded response for ${url} (a timed cycle asked for something new)`);
      // Kept to answer again: a copy without `release`, which the client calls once it decoded a body.
      const live = await this.upstream.get(url, headers, signal);
      response = { status: live.status, headers: live.headers, body: Buffer.from(live.body) };
      live.release?.();
      this.recorded.set(key, response);
    }
    this.byUrl.set(url, response);
    this.onBody(response.body);
    return response;
  }
}

/** The budget's gate is not what is measured: one signal that never aborts, instead of a new one a request. */
const NEVER_ABORTED = new AbortController().signal;
const ungated: RequestGate = { run: (_priority, _endpoint, attempt) => attempt(NEVER_ABORTED) };

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

/**
 * The account's pollers, built once as a running exporter builds them; each call runs one
 * polling cycle of every source, in the order the runtime's first cycle takes.
 */
function pollingCycle(baseUrl: string, transport: ReplayTransport, clock: Clock, bodySink: { current: Buffer[] }): () => Promise<Cycle> {
  const config = parseConfig(`accounts:\n  - name: bench\n    base_url: ${baseUrl}\n    api_key_env: BENCH_KEY\n`, { env: { BENCH_KEY: 'sim-pro-key' } });
  const account = config.accounts[0];
  if (!account) throw new Error('decode bench: no account in its own config');
  const client = new MonitoringClient({ baseUrl, apiKey: account.apiKey.reveal(), transport, gate: ungated, clock });
  const sink = countingSink();
  const board = new TopicBoard();
  const sources = SOURCES.filter((source): source is MonitoringSource<unknown> => source.section === 'account' && account.sources[source.name]?.enabled === true).map((source) => ({
    name: source.name,
    poller: buildPoller(source, { account, exporter: config.exporter, upstream: client, sink, clock, board }),
  }));
  const signal = new AbortController().signal;
  return async () => {
    sink.samples = 0;
    const bySource = new Map<string, { ms: number; bytes: number; bodies: Buffer[] }>();
    const timed = async (name: string, run: () => Promise<void>): Promise<void> => {
      bodySink.current = [];
      // Wall time of work that never waits (the replay answers at once): the event loop's cost,
      // less the replay's lookups of the recorded answers (URLs of kilobytes, hashed anew each time).
      const started = performance.now();
      const harnessBefore = transport.harnessMs;
      await run();
      const entry = bySource.get(name) ?? { ms: 0, bytes: 0, bodies: [] };
      entry.ms += performance.now() - started - (transport.harnessMs - harnessBefore);
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
  };
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

const RECORDING_CYCLES = 4;

/** Records the first cycles against `monitoringBaseUrl` (a running simulator), then times replays. */
export async function measureDecode(monitoringBaseUrl: string, repetitions: number): Promise<DecodeResult> {
  const undici = new UndiciTransport();
  const bodySink = { current: [] as Buffer[] };
  const replay = new ReplayTransport(undici, (body) => bodySink.current.push(body));
  const cycles: Cycle[] = [];
  const cycle = pollingCycle(monitoringBaseUrl, replay, new FakeClock(systemClock.now()), bodySink);
  // The first runs record, and warm the JIT and the pollers' caches up, as a long-running exporter's are.
  try {
    for (let i = 0; i < RECORDING_CYCLES; i++) await cycle();
  } finally {
    await undici.close();
  }
  replay.recording = false;
  // Each cycle is followed by JSON.parse of its own bodies, so a busy machine slows both alike.
  const parsesBySource: Map<string, number>[] = [];
  for (let i = 0; i < repetitions; i++) {
    const result = await cycle();
    cycles.push(result);
    parsesBySource.push(new Map([...result.bySource].map(([source, entry]) => [source, jsonParseMs(entry.bodies)])));
  }
  const last = cycles.at(-1);
  if (!last) throw new Error('decode bench: no repetitions');
  const sources = [...last.bySource.keys()];
  const bySource = sources.map((source) => ({
    source,
    bytes: last.bySource.get(source)?.bytes ?? 0,
    ms: median(cycles.map((c) => c.bySource.get(source)?.ms ?? 0)),
    jsonParseMs: median(parsesBySource.map((p) => p.get(source) ?? 0)),
  }));
  const allBodies = [...last.bySource.values()].flatMap((e) => e.bodies);
  const totals = cycles.map((c) => [...c.bySource.values()].reduce((sum, e) => sum + e.ms, 0));
  const parses = parsesBySource.map((p) => [...p.values()].reduce((sum, ms) => sum + ms, 0));
  return {
    requests: allBodies.length,
    bytes: allBodies.reduce((sum, b) => sum + b.length, 0),
    samples: last.samples,
    decodeMapMs: median(totals),
    jsonParseMs: median(parses),
    bySource,
  };
}
