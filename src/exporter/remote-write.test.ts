import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { RemoteWriteConfig } from '../config/types.js';
import type { MetricSink } from '../exposition/model.js';
import { FakeClock } from '../lib/clock.js';
import { decodeWriteRequest } from '../remote-write/protocol.js';
import type { SendOutcome, WriteSender } from '../remote-write/sender.js';
import { LivePush } from './remote-write.js';

/** A receiver that is away (503) until told otherwise, and counts the samples it took. */
class FlakyReceiver implements WriteSender {
  away = true;
  taken = 0;
  send(body: Uint8Array): Promise<SendOutcome> {
    if (this.away) return Promise.resolve({ kind: 'retry', status: 503, retryAfterMs: undefined, reason: 'HTTP 503: receiver away' });
    this.taken += decodeWriteRequest(body).reduce((n, s) => n + s.samples.length, 0);
    return Promise.resolve({ kind: 'ok', status: 200 });
  }
  async close(): Promise<void> {}
}

const config: RemoteWriteConfig = {
  url: 'http://receiver.invalid/api/v1/write',
  pushIntervalMs: 1_000,
  remoteTimeoutMs: 5_000,
  headers: {},
  externalLabels: {},
  authorization: undefined,
  tls: { insecureSkipVerify: false },
  queue: { capacity: 1_000, maxSamplesPerSend: 100, batchSendDeadlineMs: 500, minBackoffMs: 30, maxBackoffMs: 5_000, retryOnHttp429: true },
};

const noSink: MetricSink = { publish: () => undefined, retract: () => undefined, groups: () => [] };

describe('live remote write logs', () => {
  it('a receiver away for 12 minutes gives a bounded number of lines (start, one per minute, end) while the drop counter counts every sample', async () => {
    const clock = new FakeClock();
    const lines: { level: string; msg: string; samplesTotal?: number; durationSeconds?: number }[] = [];
    const log = pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) });
    const registry = new Registry();
    const receiver = new FlakyReceiver();
    const live = new LivePush({ config, registry, clock, log, proxy: {}, sender: receiver });
    const sink = live.tee(noSink);
    sink.publish('hosts', [
      { spec: { name: 'demo_up', type: 'gauge', help: 'Up.' }, samples: Array.from({ length: 300 }, (_, i) => ({ labels: { host: `h${i}` }, value: 1 })) },
    ]);

    let pushed = 0;
    const pushFor = async (seconds: number) => {
      for (let s = 0; s < seconds; s++) {
        const before = live.queueLength;
        const droppedBefore = live.queueStats.samplesDropped;
        const sentBefore = live.queueStats.samplesSent;
        await live.pushNow();
        pushed += live.queueLength - before + (live.queueStats.samplesDropped - droppedBefore) + (live.queueStats.samplesSent - sentBefore);
        await clock.advanceAsync(1_000, 100);
      }
    };
    await pushFor(12 * 60);
    receiver.away = false;
    await pushFor(3 * 60);
    await live.stop(0);

    const stats = live.queueStats;
    // Every sample pushed was either taken or dropped, and the counter has each dropped one.
    expect(pushed).toBeGreaterThan(12 * 60 * 300);
    expect(stats.samplesDropped + stats.samplesSent + live.queueLength).toBe(pushed);
    expect(receiver.taken).toBe(stats.samplesSent);
    expect(stats.samplesDropped).toBeGreaterThan(12 * 60 * 300 - 1_000);
    const counted = (await registry.getSingleMetric('monapi_exporter_remote_write_samples_dropped_total')?.get())?.values[0]?.value;
    expect(counted).toBe(stats.samplesDropped);

    const about = (word: string) => lines.filter((l) => l.msg.includes(word));
    const drops = about('remote write queue');
    // A start, at most one summary per minute of the 12 (and the minute after), an end.
    expect(drops.length).toBeGreaterThanOrEqual(3);
    expect(drops.length).toBeLessThanOrEqual(1 + 13 + 1);
    expect(drops[0]?.msg).toMatch(/^remote write queue full: dropping/);
    expect(drops.at(-1)?.msg).toBe('remote write queue no longer dropping samples');
    expect(drops.at(-1)?.samplesTotal).toBe(stats.samplesDropped);
    const failures = about('remote write failed').concat(about('still failing'), about('recovered'));
    expect(failures.length).toBeLessThanOrEqual(1 + 13 + 1);
    expect(about('recovered')).toHaveLength(1);
    // It lasted until the retry after the receiver came back (the backoff is at most 5 s), not until the line.
    expect(about('recovered')[0]?.durationSeconds).toBeGreaterThanOrEqual(720);
    expect(about('recovered')[0]?.durationSeconds).toBeLessThanOrEqual(726);
    // Nothing else was logged at all: no line per sample, series, request or retry.
    expect(lines.length).toBe(drops.length + failures.length);
    expect(lines.length).toBeLessThanOrEqual(32);
  });
});
