import { backoffCeilingMs } from '../budget/backoff.js';
import type { Clock, TimerHandle } from '../lib/clock.js';
import { encodeWriteRequest, sampleCount, type TimeSeries } from './protocol.js';
import type { SendOutcome, WriteSender } from './sender.js';

/**
 * The way out to a remote write receiver: series go in, requests of at most
 * `maxSamplesPerSend` samples go out one at a time, in the order the series came in, so
 * every series' samples reach the receiver oldest first, as the protocol requires. A
 * request that may be retried (5xx, 429, no answer) is sent again, the same bytes, after a
 * backoff that doubles from `minBackoffMs` to `maxBackoffMs` (or the receiver's
 * Retry-After), for as long as it takes: a receiver that is down for a while loses nothing.
 * A request the receiver refuses (another 4xx) is counted as failed and left.
 *
 * When the queue holds `capacity` samples, `push` either waits for room (the backfill: it
 * must lose nothing, and can wait) or drops the oldest series not yet in flight (live
 * remote write: the freshest data matter most, and memory must stay bounded), counted.
 */

export interface QueueOptions {
  readonly sender: WriteSender;
  readonly clock: Clock;
  readonly maxSamplesPerSend: number;
  readonly capacity: number;
  readonly whenFull: 'wait' | 'drop_oldest';
  /** A partial request goes out once its oldest sample has waited this long. */
  readonly batchSendDeadlineMs: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Off: a 429 is a refusal, as Prometheus' own `retry_on_http_429: false`. */
  readonly retryOnHttp429: boolean;
  readonly onEvent?: (event: QueueEvent) => void;
}

export type QueueEvent =
  | { readonly type: 'retrying'; readonly samples: number; readonly attempt: number; readonly waitMs: number; readonly reason: string }
  | { readonly type: 'recovered'; readonly attempts: number }
  | { readonly type: 'rejected'; readonly samples: number; readonly reason: string }
  | { readonly type: 'dropped'; readonly samples: number };

/** Counts since the queue was made; the live exporter exposes them, the backfill reports them. */
export interface QueueStats {
  samplesSent: number;
  /** Refused by the receiver. */
  samplesRejected: number;
  /** Dropped unsent because the queue was full. */
  samplesDropped: number;
  /** Samples in requests sent again. */
  samplesRetried: number;
  requestsSent: number;
  requestsFailed: number;
  /** Bytes of the compressed bodies the receiver took. */
  bytesSent: number;
  /** When the receiver last took a request; 0: never. */
  lastSuccessMs: number;
}

export class QueueClosedError extends Error {
  constructor() {
    super('remote write queue is closed');
    this.name = 'QueueClosedError';
  }
}

export class RemoteWriteQueue {
  readonly stats: QueueStats = {
    samplesSent: 0,
    samplesRejected: 0,
    samplesDropped: 0,
    samplesRetried: 0,
    requestsSent: 0,
    requestsFailed: 0,
    bytesSent: 0,
    lastSuccessMs: 0,
  };
  private readonly waiting: TimeSeries[] = [];
  private waitingSamples = 0;
  private inFlightSamples = 0;
  /** Samples pushed, and samples done with (sent, refused or dropped), since the start. */
  private pushed = 0;
  private done = 0;
  private oldestWaitingSinceMs: number | undefined;
  private readonly flushes: { readonly upTo: number; readonly resolve: () => void }[] = [];
  private readonly roomWaiters: (() => void)[] = [];
  private flushRequested = false;
  private pumping = false;
  private closed = false;
  private readonly stop = new AbortController();
  private deadlineTimer: TimerHandle | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly options: QueueOptions) {
    if (options.maxSamplesPerSend < 1 || options.capacity < options.maxSamplesPerSend) {
      throw new RangeError(`remote write queue: capacity (${options.capacity}) must be at least max_samples_per_send (${options.maxSamplesPerSend}), which must be at least 1`);
    }
  }

  /** Samples waiting or in flight. */
  get length(): number {
    return this.waitingSamples + this.inFlightSamples;
  }

  /** Adds series to send; with `whenFull: 'wait'` resolves once they fit. */
  async push(series: readonly TimeSeries[]): Promise<void> {
    let dropped = 0;
    try {
      dropped = await this.pushEach(series);
    } finally {
      // One event per push, not per series: a full queue drops on every series of every push.
      if (dropped > 0) this.options.onEvent?.({ type: 'dropped', samples: dropped });
    }
    this.kick();
  }

  private async pushEach(series: readonly TimeSeries[]): Promise<number> {
    let dropped = 0;
    for (const one of series) {
      if (one.samples.length === 0) continue;
      if (this.closed) throw new QueueClosedError();
      if (this.options.whenFull === 'wait') {
        while (this.length + one.samples.length > this.options.capacity && this.length > 0) {
          this.flushRequested = true;
          this.kick();
          await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
          if (this.closed) throw new QueueClosedError();
        }
      }
      this.waiting.push(one);
      this.waitingSamples += one.samples.length;
      this.pushed += one.samples.length;
      this.oldestWaitingSinceMs ??= this.options.clock.now();
      if (this.options.whenFull === 'drop_oldest') dropped += this.dropOverflow();
    }
    return dropped;
  }

  /** Resolves when everything pushed so far has been sent, or refused, or dropped. */
  flush(): Promise<void> {
    if (this.done >= this.pushed) return Promise.resolve();
    this.flushRequested = true;
    const promise = new Promise<void>((resolve) => this.flushes.push({ upTo: this.pushed, resolve }));
    this.kick();
    return promise;
  }

  /** Stops sending; what was not sent stays unsent (the caller's progress record says what was). */
  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    if (this.deadlineTimer) this.options.clock.clearTimeout(this.deadlineTimer);
    this.wake?.();
    for (const waiter of this.roomWaiters.splice(0)) waiter();
    await this.options.sender.close();
  }

  private dropOverflow(): number {
    let dropped = 0;
    while (this.length > this.options.capacity && this.waiting.length > 1) {
      const oldest = this.waiting.shift() as TimeSeries;
      this.waitingSamples -= oldest.samples.length;
      dropped += oldest.samples.length;
    }
    if (dropped === 0) return 0;
    this.stats.samplesDropped += dropped;
    this.finish(dropped);
    return dropped;
  }

  private kick(): void {
    if (this.wake) {
      const wake = this.wake;
      this.wake = undefined;
      wake();
    }
    if (this.pumping || this.closed) return;
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
    });
  }

  private readyToSend(): boolean {
    if (this.waitingSamples === 0) return false;
    if (this.waitingSamples >= this.options.maxSamplesPerSend || this.flushRequested) return true;
    return this.options.clock.now() - (this.oldestWaitingSinceMs ?? Infinity) >= this.options.batchSendDeadlineMs;
  }

  private async pump(): Promise<void> {
    while (!this.closed) {
      if (!this.readyToSend()) {
        if (this.waitingSamples === 0) {
          this.flushRequested = false;
          return;
        }
        await this.sleepUntilDeadline();
        continue;
      }
      const batch = this.takeBatch();
      await this.sendWithRetries(batch);
    }
  }

  private sleepUntilDeadline(): Promise<void> {
    return new Promise<void>((resolve) => {
      const waitMs = Math.max(0, (this.oldestWaitingSinceMs ?? this.options.clock.now()) + this.options.batchSendDeadlineMs - this.options.clock.now());
      this.deadlineTimer = this.options.clock.setTimeout(() => {
        this.deadlineTimer = undefined;
        this.wake = undefined;
        resolve();
      }, waitMs);
      this.wake = () => {
        if (this.deadlineTimer) this.options.clock.clearTimeout(this.deadlineTimer);
        this.deadlineTimer = undefined;
        resolve();
      };
    });
  }

  /** Whole series while they fit; a series longer than a request is split, its older samples first. */
  private takeBatch(): TimeSeries[] {
    const batch: TimeSeries[] = [];
    let room = this.options.maxSamplesPerSend;
    while (room > 0 && this.waiting.length > 0) {
      const head = this.waiting[0] as TimeSeries;
      if (head.samples.length <= room) {
        this.waiting.shift();
        batch.push(head);
        room -= head.samples.length;
      } else {
        batch.push({ labels: head.labels, samples: head.samples.slice(0, room) });
        this.waiting[0] = { labels: head.labels, samples: head.samples.slice(room) };
        room = 0;
      }
    }
    const taken = this.options.maxSamplesPerSend - room;
    this.waitingSamples -= taken;
    this.inFlightSamples = taken;
    this.oldestWaitingSinceMs = this.waitingSamples > 0 ? this.options.clock.now() : undefined;
    if (this.waitingSamples === 0 && this.flushes.length === 0) this.flushRequested = false;
    return batch;
  }

  private async sendWithRetries(batch: readonly TimeSeries[]): Promise<void> {
    const samples = sampleCount(batch);
    const body = encodeWriteRequest(batch);
    let attempt = 0;
    for (;;) {
      let outcome: SendOutcome;
      try {
        outcome = await this.options.sender.send(body, this.stop.signal);
      } catch (error) {
        if (this.closed) return;
        outcome = { kind: 'retry', status: undefined, retryAfterMs: undefined, reason: error instanceof Error ? error.message : String(error) };
      }
      if (this.closed) return;
      if (outcome.kind === 'retry' && outcome.status === 429 && !this.options.retryOnHttp429) {
        outcome = { kind: 'rejected', status: 429, reason: outcome.reason };
      }
      if (outcome.kind === 'ok') {
        this.stats.samplesSent += samples;
        this.stats.requestsSent += 1;
        this.stats.bytesSent += body.length;
        this.stats.lastSuccessMs = this.options.clock.now();
        if (attempt > 0) this.options.onEvent?.({ type: 'recovered', attempts: attempt + 1 });
        break;
      }
      if (outcome.kind === 'rejected') {
        this.stats.samplesRejected += samples;
        this.stats.requestsFailed += 1;
        this.options.onEvent?.({ type: 'rejected', samples, reason: outcome.reason });
        break;
      }
      this.stats.samplesRetried += samples;
      const waitMs = outcome.retryAfterMs ?? backoffCeilingMs(attempt, this.options.minBackoffMs, this.options.maxBackoffMs);
      this.options.onEvent?.({ type: 'retrying', samples, attempt: attempt + 1, waitMs, reason: outcome.reason });
      attempt += 1;
      await this.pause(waitMs);
      if (this.closed) return;
    }
    this.inFlightSamples = 0;
    this.finish(samples);
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const signal = this.stop.signal;
      const cut = () => {
        this.options.clock.clearTimeout(timer);
        resolve();
      };
      const timer = this.options.clock.setTimeout(() => {
        signal.removeEventListener('abort', cut);
        resolve();
      }, ms);
      signal.addEventListener('abort', cut, { once: true });
    });
  }

  private finish(samples: number): void {
    this.done += samples;
    for (let i = this.flushes.length - 1; i >= 0; i--) {
      const flush = this.flushes[i] as (typeof this.flushes)[number];
      if (this.done >= flush.upTo) {
        this.flushes.splice(i, 1);
        flush.resolve();
      }
    }
    if (this.flushes.length === 0 && this.waitingSamples === 0) this.flushRequested = false;
    if (this.length < this.options.capacity) for (const waiter of this.roomWaiters.splice(0)) waiter();
  }
}
