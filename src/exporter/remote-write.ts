import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RemoteWriteConfig } from '../config/types.js';
import type { FamilySamples, MetricSink } from '../exposition/model.js';
import type { Clock, TimerHandle } from '../lib/clock.js';
import { EPISODE_SUMMARY_INTERVAL_MS, EpisodeLog } from '../lib/episodes.js';
import { endpointFromConfig } from '../remote-write/endpoint.js';
import { familiesToTimeSeries, promClientToTimeSeries, type PromClientMetric } from '../remote-write/families.js';
import { RemoteWriteQueue, type QueueStats } from '../remote-write/queue.js';
import { HttpWriteSender, type WriteSender } from '../remote-write/sender.js';
import type { ProxySettings } from '../upstream/http/transport.js';

/**
 * Live remote write (the `remote_write` section): every `push_interval` the exporter pushes
 * what /metrics would show at that moment, its self-metrics included, as if a Prometheus
 * scraped it, so a setup without a scraping Prometheus (an agent) still gets the data. The
 * queue drops the oldest series when the receiver is away longer than `capacity` holds: the
 * freshest values matter most and memory stays bounded.
 */

/** Its self-metrics, as Prometheus names its own `prometheus_remote_storage_*`. */
function createPushMetrics(registry: Registry, stats: () => QueueStats, length: () => number) {
  const counted = (name: string, help: string, read: (s: QueueStats) => number) => {
    let seen = 0;
    return new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const now = read(stats());
        if (now > seen) this.inc(now - seen);
        seen = now;
      },
    });
  };
  counted('monapi_exporter_remote_write_samples_sent_total', 'Samples the remote write receiver took.', (s) => s.samplesSent);
  counted('monapi_exporter_remote_write_samples_failed_total', 'Samples the remote write receiver refused (a 4xx other than 429): not sent again.', (s) => s.samplesRejected);
  counted('monapi_exporter_remote_write_samples_retried_total', 'Samples in requests sent again after a 5xx, a 429 or no answer.', (s) => s.samplesRetried);
  counted('monapi_exporter_remote_write_samples_dropped_total', 'Samples dropped unsent because the queue was full (the receiver away for long).', (s) => s.samplesDropped);
  counted('monapi_exporter_remote_write_bytes_sent_total', 'Compressed bytes of the requests the receiver took.', (s) => s.bytesSent);
  new Gauge({
    name: 'monapi_exporter_remote_write_queue_samples',
    help: 'Samples waiting in the remote write queue or in flight.',
    registers: [registry],
    collect() {
      this.set(length());
    },
  });
  new Gauge({
    name: 'monapi_exporter_remote_write_last_success_timestamp_seconds',
    help: 'Unix time the remote write receiver last took a request; 0: never.',
    registers: [registry],
    collect() {
      this.set(stats().lastSuccessMs / 1000);
    },
  });
}

export interface LivePushOptions {
  readonly config: RemoteWriteConfig;
  readonly registry: Registry;
  readonly clock: Clock;
  readonly log: Logger;
  readonly proxy: ProxySettings;
  /** Tests pass another way out. */
  readonly sender?: WriteSender;
  /** How often a failure, refusal or drop that lasts is summed up in one line. Default 60 s. */
  readonly summaryIntervalMs?: number;
}

export class LivePush {
  private readonly groups = new Map<string, readonly FamilySamples[]>();
  private readonly queue: RemoteWriteQueue;
  private timer: TimerHandle | undefined;
  private stopped = false;
  private pushing: Promise<void> = Promise.resolve();
  private readonly failing: EpisodeLog<{ readonly reason?: string; readonly waitMs?: number; readonly attempts?: number }>;
  private readonly rejected: EpisodeLog<{ readonly reason: string }>;
  private readonly dropping: EpisodeLog<{ readonly reason?: string }>;
  private lastFailure: string | undefined;

  constructor(private readonly options: LivePushOptions) {
    const { config, clock, log } = options;
    const queue = config.queue;
    this.queue = new RemoteWriteQueue({
      sender: options.sender ?? new HttpWriteSender(endpointFromConfig(config, options.proxy)),
      clock,
      capacity: queue.capacity,
      maxSamplesPerSend: queue.maxSamplesPerSend,
      batchSendDeadlineMs: queue.batchSendDeadlineMs,
      minBackoffMs: queue.minBackoffMs,
      maxBackoffMs: queue.maxBackoffMs,
      retryOnHttp429: queue.retryOnHttp429,
      whenFull: 'drop_oldest',
      onEvent: (event) => {
        if (event.type === 'retrying') {
          this.lastFailure = event.reason;
          this.failing.note('failing', 1, { reason: event.reason, waitMs: event.waitMs });
        } else if (event.type === 'recovered') this.failing.endWhenQuiet('failing', { attempts: event.attempts });
        else if (event.type === 'rejected') this.rejected.note('rejected', event.samples, { reason: event.reason });
        // Drops are noted per push in pushNow, which also sees a push that needed none (the end).
      },
    });
    const summary = options.summaryIntervalMs ?? EPISODE_SUMMARY_INTERVAL_MS;
    const interval = `${summary / 1000} s`;
    this.failing = new EpisodeLog({
      clock,
      intervalMs: summary,
      write: (line) => {
        if (line.phase === 'start') log.warn({ reason: line.detail.reason, waitMs: line.detail.waitMs }, 'remote write failed; retrying until the receiver takes it (a summary line per interval while it lasts)');
        else if (line.phase === 'ongoing') log.warn({ retries: line.count, retriesTotal: line.total, durationSeconds: line.durationSeconds, reason: line.detail.reason }, `remote write still failing: ${line.count} retries in the last ${interval}`);
        else log.info({ retriesTotal: line.total, durationSeconds: line.durationSeconds }, 'remote write recovered');
      },
    });
    this.rejected = new EpisodeLog({
      clock,
      intervalMs: summary,
      quietIntervalsToEnd: 1,
      write: (line) => {
        if (line.phase === 'start') log.error({ samples: line.count, reason: line.detail.reason }, 'the remote write receiver refused samples (monapi_exporter_remote_write_samples_failed_total counts them; a summary line per interval while it lasts)');
        else if (line.phase === 'ongoing') log.error({ samples: line.count, samplesTotal: line.total, durationSeconds: line.durationSeconds, reason: line.detail.reason }, `the remote write receiver still refuses samples: ${line.count} in the last ${interval}`);
        else log.info({ samplesTotal: line.total, durationSeconds: line.durationSeconds }, 'the remote write receiver refused no samples for a while');
      },
    });
    this.dropping = new EpisodeLog({
      clock,
      intervalMs: summary,
      write: (line) => {
        if (line.phase === 'start') {
          log.warn(
            { samples: line.count, capacity: queue.capacity, reason: line.detail.reason },
            'remote write queue full: dropping the oldest samples until the receiver takes them again (monapi_exporter_remote_write_samples_dropped_total counts every one; a summary line per interval while it lasts)',
          );
        } else if (line.phase === 'ongoing') {
          log.warn({ samples: line.count, samplesTotal: line.total, durationSeconds: line.durationSeconds, reason: line.detail.reason }, `remote write queue still full: dropped ${line.count} samples in the last ${interval}`);
        } else log.info({ samplesTotal: line.total, durationSeconds: line.durationSeconds }, 'remote write queue no longer dropping samples');
      },
    });
    createPushMetrics(options.registry, () => this.queue.stats, () => this.queue.length);
  }

  /** A sink that hands everything on to `sink` and keeps the newest families of each group to push. */
  tee(sink: MetricSink): MetricSink {
    return {
      publish: (group, families) => {
        this.groups.set(group, families);
        sink.publish(group, families);
      },
      retract: (group) => {
        this.groups.delete(group);
        sink.retract(group);
      },
      groups: (prefix) => sink.groups(prefix),
    };
  }

  /** The queue's counts since the start (the self-metrics read them too). */
  get queueStats(): Readonly<QueueStats> {
    return this.queue.stats;
  }

  /** Samples waiting or in flight. */
  get queueLength(): number {
    return this.queue.length;
  }

  start(): void {
    this.schedule();
  }

  /** Pushes what /metrics holds now (tests call it; the timer does every `push_interval`). */
  async pushNow(): Promise<void> {
    const now = this.options.clock.now();
    const labels = this.options.config.externalLabels;
    const series = familiesToTimeSeries([...this.groups.values()].flat(), now, labels);
    // prom-client types getMetricsAsJSON loosely; each entry has a name and values.
    const self = (await this.options.registry.getMetricsAsJSON()) as unknown as PromClientMetric[];
    series.push(...promClientToTimeSeries(self, now, labels));
    const droppedBefore = this.queue.stats.samplesDropped;
    await this.queue.push(series);
    const dropped = this.queue.stats.samplesDropped - droppedBefore;
    if (dropped > 0) this.dropping.note('dropped', dropped, { reason: this.lastFailure ?? 'the receiver takes samples more slowly than they come' });
    else this.dropping.end('dropped');
  }

  /** Stops pushing; what is queued gets `graceMs` to reach the receiver. */
  async stop(graceMs = 2_000): Promise<void> {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    await this.pushing;
    await Promise.race([this.queue.flush(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    await this.queue.close();
    // Stopping ends no failure: an end line ("recovered") would say what did not happen.
    for (const episodes of [this.dropping, this.failing, this.rejected]) episodes.discard();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimeout(() => {
      this.pushing = this.pushNow().catch((err: unknown) => this.options.log.error({ err: err instanceof Error ? err.message : String(err) }, 'remote write: could not collect the samples to push'));
      void this.pushing.finally(() => this.schedule());
    }, this.options.config.pushIntervalMs);
  }
}
