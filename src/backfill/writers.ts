import { closeSync, constants, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync, truncateSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { escapeLabelValue, formatValue, openMetricsFamilyName } from '../exposition/format.js';
import { OPENMETRICS_EOF, openMetricsFamilyHeader } from '../exposition/render-openmetrics.js';
import { openNewFileSync, syncFolder } from '../lib/atomic-file.js';
import type { TimeSeries } from '../remote-write/protocol.js';
import type { QueueEvent, RemoteWriteQueue } from '../remote-write/queue.js';
import type { HistorySeries } from './replay.js';

/**
 * Where history goes. `write` hands over a chunk; `commit` returns once everything handed
 * over is kept (the receiver acknowledged it, or it is synced to disk), with what the
 * progress file must remember to continue after a stop; `finish` completes the output and
 * returns once it is durable, keeping what it was made from; `discardParts` removes that,
 * once the progress file says the output is complete (so a stop between the two loses
 * nothing: the next run makes the same output again, or finds it complete).
 */
export interface HistoryWriter {
  /** What the progress file ties itself to: the output file's path or the receiver's URL. */
  readonly target: string;
  write(series: readonly HistorySeries[]): Promise<void>;
  commit(): Promise<Readonly<Record<string, number>> | undefined>;
  finish(): Promise<void>;
  discardParts(): Promise<void>;
  /** For a backfill the progress file says is complete: why its output is not there any more, if it is not. */
  missingOutput(): string | undefined;
  close(): Promise<void>;
}

/** The receiver refused history (another 4xx than 429): sending it again would not help. */
export class HistoryRefusedError extends Error {
  constructor(readonly samples: number, readonly reason: string) {
    super(
      `the remote write receiver refused ${samples} samples (${reason}); a Prometheus takes history only with --web.enable-remote-write-receiver and an out-of-order window ` +
        `(storage.tsdb.out_of_order_time_window) longer than the history; the progress file keeps what was taken, so run the backfill again once the receiver is set up`,
    );
    this.name = 'HistoryRefusedError';
  }
}

/** Remote write: chunks go into the queue; a commit waits until the receiver has taken them. */
export class RemoteWriteHistoryWriter implements HistoryWriter {
  private refusedBefore = 0;
  private lastRefusal = '';

  constructor(
    readonly target: string,
    private readonly queue: RemoteWriteQueue,
  ) {}

  /** For the queue's `onEvent`: remembers why the receiver refused, for the error. */
  observe(event: QueueEvent): void {
    if (event.type === 'rejected') this.lastRefusal = event.reason;
  }

  async write(series: readonly HistorySeries[]): Promise<void> {
    await this.queue.push(series.map(toTimeSeries));
  }

  async commit(): Promise<undefined> {
    await this.queue.flush();
    const refused = this.queue.stats.samplesRejected - this.refusedBefore;
    this.refusedBefore = this.queue.stats.samplesRejected;
    if (refused > 0) throw new HistoryRefusedError(refused, this.lastRefusal);
    return undefined;
  }

  async finish(): Promise<void> {
    await this.commit();
  }

  /** The receiver holds the history; nothing here to remove. */
  discardParts(): Promise<void> {
    return Promise.resolve();
  }

  /** What a receiver holds cannot be checked from here. */
  missingOutput(): undefined {
    return undefined;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

export function toTimeSeries(series: HistorySeries): TimeSeries {
  return { labels: { ...series.labels, __name__: series.name }, samples: series.samples };
}

/**
 * An OpenMetrics file for `promtool tsdb create-blocks-from openmetrics`. OpenMetrics wants
 * each family's samples together, but history arrives host by host: each family is collected
 * in a part file of its own (`<output>.parts/<family>.om`, its header first) and the parts are
 * joined into the output, with `# EOF`, at the end. After a stop, the parts are cut back to
 * the sizes the progress file recorded with the last chunk, and the backfill goes on. The
 * output appears whole or not at all (a temporary file, synced, renamed, the folder synced),
 * and the parts stay until the progress file says the output is complete.
 */
export class OpenMetricsFileWriter implements HistoryWriter {
  readonly target: string;
  private readonly partsDir: string;
  private readonly touched = new Set<string>();

  constructor(private readonly output: string) {
    this.target = output;
    this.partsDir = `${output}.parts`;
  }

  /** Cuts the parts back to what the progress file says was written; parts it does not know go. */
  restore(sizes: Readonly<Record<string, number>>): void {
    if (!existsSync(this.partsDir)) return;
    for (const file of readdirSync(this.partsDir)) {
      const path = join(this.partsDir, file);
      const size = sizes[file];
      if (size === undefined) unlinkSync(path);
      else if (statSync(path).size > size) truncateSync(path, size);
    }
  }

  write(series: readonly HistorySeries[]): Promise<void> {
    mkdirSync(this.partsDir, { recursive: true });
    const byFamily = new Map<string, { header: string; lines: string[] }>();
    for (const s of series) {
      const family = openMetricsFamilyName(s.family);
      let entry = byFamily.get(family);
      if (!entry) byFamily.set(family, (entry = { header: openMetricsFamilyHeader(s.family), lines: [] }));
      const pairs = Object.entries(s.labels)
        .map(([name, value]) => `${name}="${escapeLabelValue(value)}"`)
        .join(',');
      const prefix = pairs === '' ? s.name : `${s.name}{${pairs}}`;
      for (const sample of s.samples) entry.lines.push(`${prefix} ${formatValue(sample.value)} ${formatValue(sample.timestampMs / 1000)}\n`);
    }
    for (const [family, { header, lines }] of byFamily) {
      const file = `${family}.om`;
      const path = join(this.partsDir, file);
      const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0), 0o644);
      try {
        if (statSync(path).size === 0) writeSync(fd, header);
        writeSync(fd, lines.join(''));
      } finally {
        closeSync(fd);
      }
      this.touched.add(file);
    }
    return Promise.resolve();
  }

  commit(): Promise<Record<string, number>> {
    const sizes: Record<string, number> = {};
    if (!existsSync(this.partsDir)) return Promise.resolve(sizes);
    for (const file of readdirSync(this.partsDir)) {
      const path = join(this.partsDir, file);
      if (this.touched.has(file)) {
        const fd = openSync(path, 'r+');
        try {
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
      sizes[file] = statSync(path).size;
    }
    // A part created by this chunk is kept only once its folder entry is.
    if (this.touched.size > 0) syncFolder(this.partsDir);
    this.touched.clear();
    return Promise.resolve(sizes);
  }

  /**
   * Joins the parts into the output: a temporary file beside it, synced, renamed over the
   * output, the folder synced. The parts stay (`discardParts`).
   */
  finish(): Promise<void> {
    removeStrayTemporaries(this.output);
    const temporary = join(dirname(this.output), `${temporaryPrefix(this.output)}${process.pid}`);
    const out = openNewFileSync(temporary, 0o644);
    try {
      const files = existsSync(this.partsDir) ? readdirSync(this.partsDir).sort() : [];
      for (const file of files) {
        const input = openSync(join(this.partsDir, file), 'r');
        try {
          const buffer = Buffer.alloc(1 << 20);
          for (;;) {
            const n = readSync(input, buffer, 0, buffer.length, null);
            if (n === 0) break;
            writeSync(out, buffer, 0, n);
          }
        } finally {
          closeSync(input);
        }
      }
      writeSync(out, OPENMETRICS_EOF);
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
    renameSync(temporary, this.output);
    syncFolder(dirname(this.output));
    return Promise.resolve();
  }

  discardParts(): Promise<void> {
    rmSync(this.partsDir, { recursive: true, force: true });
    return Promise.resolve();
  }

  missingOutput(): string | undefined {
    return existsSync(this.output) ? undefined : `${this.output} is not there any more (moved or removed since)`;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

function temporaryPrefix(output: string): string {
  return `.${basename(output)}.tmp-`;
}

/**
 * Removes the temporary outputs of earlier runs stopped before their rename: another pid's,
 * whose process is gone (a link planted there is removed, never followed).
 */
function removeStrayTemporaries(output: string): void {
  const prefix = temporaryPrefix(output);
  for (const name of readdirSync(dirname(output))) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || processRuns(pid)) continue;
    rmSync(join(dirname(output), name), { force: true });
  }
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
