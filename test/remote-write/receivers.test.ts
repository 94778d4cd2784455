import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import type { TimeSeries } from '../../src/remote-write/protocol.js';
import { RemoteWriteQueue, type QueueEvent } from '../../src/remote-write/queue.js';
import { HttpWriteSender } from '../../src/remote-write/sender.js';
import { PROMETHEUS_MAJORS, startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { startVictoriaMetrics, type RunningVictoriaMetrics } from '../support/victoria-metrics.js';
import { startWriteFaultProxy, type WriteFault, type WriteFaultProxy } from '../support/write-fault-proxy.js';

/**
 * The remote write client against real receivers, through a proxy that plays the faults a
 * network and a busy receiver produce: 503, 500, 429 with Retry-After, the receiver gone for
 * two seconds, and answers lost after the receiver took the data (so the client sends it
 * again). Afterwards every series in the receiver holds exactly the samples sent: nothing
 * lost, and nothing sent twice that shows in a result.
 */

const SERIES = 12;
const SAMPLES = 240;
const STEP_MS = 15_000;
const FAULTS: WriteFault[] = [
  { kind: 'pass' },
  { kind: 'status', status: 503 },
  { kind: 'status', status: 503 },
  { kind: 'pass' },
  { kind: 'status', status: 429, retryAfter: '1' },
  { kind: 'status', status: 500 },
  { kind: 'lost_answer' },
  { kind: 'pass' },
  { kind: 'lost_answer' },
  { kind: 'lost_answer' },
];

interface Receiver {
  readonly name: string;
  readonly writeUrl: string;
  /** Raw samples of each series matching the selector over the range, [seconds, value]. */
  rawSamples(selector: string, range: string): Promise<{ metric: Record<string, string>; values: [number, number][] }[]>;
  stop(): Promise<void>;
}

function testData(name: string, endMs: number): TimeSeries[] {
  const start = Math.floor(endMs / STEP_MS) * STEP_MS - (SAMPLES - 1) * STEP_MS;
  return Array.from({ length: SERIES }, (_, s) => ({
    labels: { __name__: name, series: String(s), job: 'remote_write_test' },
    samples: Array.from({ length: SAMPLES }, (_, i) => ({ timestampMs: start + i * STEP_MS, value: s * 1000 + i + (i % 7) / 8 })),
  }));
}

async function writeThroughFaults(url: string, data: readonly TimeSeries[], proxy: WriteFaultProxy): Promise<{ queue: RemoteWriteQueue; events: QueueEvent[] }> {
  const events: QueueEvent[] = [];
  const queue = new RemoteWriteQueue({
    sender: new HttpWriteSender({ url, timeoutMs: 5_000 }),
    clock: systemClock,
    maxSamplesPerSend: 200,
    capacity: 1_000,
    whenFull: 'wait',
    batchSendDeadlineMs: 1_000,
    minBackoffMs: 50,
    maxBackoffMs: 1_000,
    retryOnHttp429: true,
    onEvent: (e) => events.push(e),
  });
  proxy.script(FAULTS);
  // Interleaved as a backfill sends them: a slice of every series at a time, oldest first.
  for (let from = 0; from < SAMPLES; from += 40) {
    await queue.push(data.map((s) => ({ labels: s.labels, samples: s.samples.slice(from, from + 40) })));
    if (from === 120) {
      proxy.down();
      setTimeout(() => proxy.up(), 2_000);
    }
  }
  await queue.flush();
  await queue.close();
  return { queue, events };
}

const receivers: { label: string; start: () => Promise<Receiver> }[] = [
  ...PROMETHEUS_MAJORS.map((major) => ({ label: `Prometheus ${major} with the receiver flag and an out-of-order window`, start: async (): Promise<Receiver> => {
    const prometheus: RunningPrometheus = await startPrometheus({ major, targets: [], scrapeIntervalSeconds: 15, remoteWriteReceiver: true, outOfOrderWindow: '40d' });
    return {
      name: `Prometheus ${prometheus.version}`,
      writeUrl: `${prometheus.url}/api/v1/write`,
      rawSamples: (selector, range) => prometheus.rangeSamples(`${selector}[${range}]`),
      stop: () => prometheus.stop(),
    };
  } })),
  {
    label: 'VictoriaMetrics single-node',
    start: async (): Promise<Receiver> => {
      const vm: RunningVictoriaMetrics = await startVictoriaMetrics();
      return { name: `VictoriaMetrics ${vm.version}`, writeUrl: vm.writeUrl, rawSamples: (selector, range) => vm.rawSamples(selector, range), stop: () => vm.stop() };
    },
  },
];

describe.each(receivers.map(({ label, start }, i) => ({ label, start, i })))('remote write under faults: $label', ({ start, i }) => {
  let receiver: Receiver;
  let proxy: WriteFaultProxy;

  beforeAll(async () => {
    receiver = await start();
    proxy = await startWriteFaultProxy(receiver.writeUrl);
  }, 60_000);
  afterAll(async () => {
    await proxy?.close();
    await receiver?.stop();
  });

  it('every sample arrives once, in order, through 5xx, 429, a receiver down for 2 s and lost answers', async () => {
    const name = `rw_fault_test_${i}`;
    const data = testData(name, Date.now());
    const { queue, events } = await writeThroughFaults(proxy.url, data, proxy);

    expect(proxy.log.filter((r) => r.fault === 'down').length, receiver.name).toBeGreaterThan(0);
    expect(proxy.log.filter((r) => r.fault === 'lost_answer' && r.status !== undefined && r.status < 300)).toHaveLength(3);
    expect(events.filter((e) => e.type === 'retrying').length).toBeGreaterThanOrEqual(8);
    expect(queue.stats).toMatchObject({ samplesSent: SERIES * SAMPLES, samplesRejected: 0, samplesDropped: 0 });

    const stored = await waitForSamples(receiver, name, SERIES * SAMPLES);
    const bySeries = new Map(stored.map((s) => [s.metric.series, s.values]));
    for (const sent of data) {
      const got = bySeries.get(sent.labels.series) ?? [];
      expect(got, `${receiver.name} series ${sent.labels.series}`).toEqual(sent.samples.map((s) => [s.timestampMs / 1000, s.value]));
    }
  }, 120_000);
});

async function waitForSamples(receiver: Receiver, name: string, expected: number) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const stored = await receiver.rawSamples(`{__name__="${name}"}`, '2h');
    const count = stored.reduce((n, s) => n + s.values.length, 0);
    if (count >= expected || Date.now() > deadline) return stored;
    await new Promise((r) => setTimeout(r, 500));
  }
}
