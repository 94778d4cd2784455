import { describe, expect, it } from 'vitest';
import { FakeClock } from '../lib/clock.js';
import { decodeWriteRequest, type TimeSeries } from './protocol.js';
import { RemoteWriteQueue, type QueueEvent, type QueueOptions } from './queue.js';
import type { SendOutcome, WriteSender } from './sender.js';

/** A receiver in memory: answers each request with the next scripted outcome (then 200), keeps what it took. */
class ScriptedSender implements WriteSender {
  readonly taken: TimeSeries[][] = [];
  readonly attempts: TimeSeries[][] = [];
  constructor(private readonly script: SendOutcome[] = []) {}
  send(body: Uint8Array): Promise<SendOutcome> {
    const series = decodeWriteRequest(body);
    this.attempts.push(series);
    const outcome = this.script.shift() ?? { kind: 'ok', status: 200 };
    if (outcome.kind === 'ok') this.taken.push(series);
    return Promise.resolve(outcome);
  }
  async close(): Promise<void> {}
}

const retry = (status: number | undefined, retryAfterMs?: number): SendOutcome => ({ kind: 'retry', status, retryAfterMs, reason: `status ${status}` });

function series(name: string, from: number, count: number): TimeSeries {
  return { labels: { __name__: name }, samples: Array.from({ length: count }, (_, i) => ({ value: from + i, timestampMs: (from + i) * 1000 })) };
}

function queue(sender: WriteSender, clock: FakeClock, overrides: Partial<QueueOptions> = {}, events: QueueEvent[] = []) {
  return new RemoteWriteQueue({
    sender,
    clock,
    maxSamplesPerSend: 4,
    capacity: 20,
    whenFull: 'wait',
    batchSendDeadlineMs: 5_000,
    minBackoffMs: 100,
    maxBackoffMs: 1_000,
    retryOnHttp429: true,
    onEvent: (e) => events.push(e),
    ...overrides,
  });
}

/** Every sample the receiver took, per series name, in the order it took them. */
function received(sender: ScriptedSender): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const request of sender.taken) for (const s of request) (out[s.labels.__name__ as string] ??= []).push(...s.samples.map((x) => x.value));
  return out;
}

describe('RemoteWriteQueue', () => {
  it('sends requests of at most maxSamplesPerSend samples, each series oldest first, splitting a long one', async () => {
    const clock = new FakeClock();
    const sender = new ScriptedSender();
    const q = queue(sender, clock);
    await q.push([series('a', 0, 6), series('b', 100, 3)]);
    await q.flush();
    expect(sender.taken.map((r) => r.reduce((n, s) => n + s.samples.length, 0))).toEqual([4, 4, 1]);
    expect(received(sender)).toEqual({ a: [0, 1, 2, 3, 4, 5], b: [100, 101, 102] });
    expect(q.stats).toMatchObject({ samplesSent: 9, requestsSent: 3, samplesRetried: 0, samplesRejected: 0 });
    expect(q.length).toBe(0);
  });

  it('retries 5xx, 429 and no answer with doubling backoff until taken: nothing lost, the order kept', async () => {
    const clock = new FakeClock();
    const events: QueueEvent[] = [];
    const sender = new ScriptedSender([retry(503), retry(undefined), retry(429), retry(500)]);
    const q = queue(sender, clock, {}, events);
    await q.push([series('a', 0, 4), series('a', 4, 4)]);
    const flushed = q.flush();
    let done = false;
    void flushed.then(() => (done = true));
    await clock.advanceAsync(99, 1);
    expect(sender.attempts).toHaveLength(1);
    await clock.advanceAsync(10_000, 10);
    expect(done).toBe(true);
    expect(events.filter((e) => e.type === 'retrying').map((e) => (e as { waitMs: number }).waitMs)).toEqual([100, 200, 400, 800]);
    expect(received(sender)).toEqual({ a: [0, 1, 2, 3, 4, 5, 6, 7] });
    expect(q.stats).toMatchObject({ samplesSent: 8, samplesRetried: 16, samplesRejected: 0, requestsSent: 2 });
  });

  it("waits as long as the receiver's Retry-After says", async () => {
    const clock = new FakeClock();
    const sender = new ScriptedSender([retry(429, 30_000)]);
    const q = queue(sender, clock);
    await q.push([series('a', 0, 4)]);
    void q.flush();
    await clock.advanceAsync(29_000, 1_000);
    expect(sender.attempts).toHaveLength(1);
    await clock.advanceAsync(2_000, 1_000);
    expect(sender.attempts).toHaveLength(2);
    expect(q.stats.samplesSent).toBe(4);
  });

  it('counts a refused request as failed and goes on with the next; 429 too when retry_on_http_429 is off', async () => {
    const clock = new FakeClock();
    const events: QueueEvent[] = [];
    const sender = new ScriptedSender([{ kind: 'rejected', status: 400, reason: 'HTTP 400: out of bounds' }, retry(429)]);
    const q = queue(sender, clock, { retryOnHttp429: false }, events);
    await q.push([series('a', 0, 4), series('b', 0, 4), series('c', 0, 4)]);
    await q.flush();
    expect(received(sender)).toEqual({ c: [0, 1, 2, 3] });
    expect(q.stats).toMatchObject({ samplesSent: 4, samplesRejected: 8, requestsFailed: 2, samplesRetried: 0 });
    expect(events.filter((e) => e.type === 'rejected')).toHaveLength(2);
  });

  it('sends a partial request once its oldest sample has waited the batch deadline', async () => {
    const clock = new FakeClock();
    const sender = new ScriptedSender();
    const q = queue(sender, clock);
    await q.push([series('a', 0, 2)]);
    await clock.advanceAsync(4_000, 500);
    expect(sender.taken).toHaveLength(0);
    await clock.advanceAsync(1_500, 500);
    expect(received(sender)).toEqual({ a: [0, 1] });
  });

  it('whenFull wait: push waits for room while the receiver is down, then everything arrives', async () => {
    const clock = new FakeClock();
    const sender = new ScriptedSender(Array.from({ length: 5 }, () => retry(503)));
    const q = queue(sender, clock, { capacity: 8 });
    await q.push([series('a', 0, 8)]);
    let pushed = false;
    const more = q.push([series('a', 8, 4)]).then(() => (pushed = true));
    await clock.advanceAsync(1_000, 50);
    expect(pushed).toBe(false);
    expect(q.length).toBe(8);
    await clock.advanceAsync(20_000, 50);
    await more;
    await q.flush();
    expect(received(sender)).toEqual({ a: Array.from({ length: 12 }, (_, i) => i) });
  });

  it('whenFull drop_oldest: keeps the newest series within capacity and counts what it dropped', async () => {
    const clock = new FakeClock();
    const events: QueueEvent[] = [];
    const sender = new ScriptedSender(Array.from({ length: 3 }, () => retry(503)));
    const q = queue(sender, clock, { capacity: 8, whenFull: 'drop_oldest' }, events);
    await q.push([series('a', 0, 4)]);
    await clock.advanceAsync(10, 10);
    await q.push([series('b', 0, 4), series('c', 0, 4), series('d', 0, 4)]);
    expect(q.length).toBeLessThanOrEqual(8);
    await clock.advanceAsync(10_000, 50);
    await q.flush();
    expect(received(sender)).toEqual({ a: [0, 1, 2, 3], d: [0, 1, 2, 3] });
    expect(q.stats.samplesDropped).toBe(8);
    expect(events.some((e) => e.type === 'dropped')).toBe(true);
  });

  it('close stops retrying and refuses more', async () => {
    const clock = new FakeClock();
    const sender = new ScriptedSender(Array.from({ length: 100 }, () => retry(503)));
    const q = queue(sender, clock);
    await q.push([series('a', 0, 4)]);
    void q.flush();
    await clock.advanceAsync(1_000, 100);
    const attempts = sender.attempts.length;
    await q.close();
    await clock.advanceAsync(10_000, 100);
    expect(sender.attempts.length).toBe(attempts);
    await expect(q.push([series('a', 4, 1)])).rejects.toThrow(/closed/);
  });
});
