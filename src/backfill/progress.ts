import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomically } from '../lib/atomic-file.js';
import { decodeSeriesHost, encodeSeriesHost, seriesHostSchema } from '../sources/series/state.js';
import type { SeriesHostState } from '../sources/series/map.js';

/**
 * What a backfill has written, so that a stopped one goes on where it stopped: per host the
 * end of the history already written and acknowledged (by the receiver, or synced into the
 * file's parts), the counter state there, and where its history ends; for a file, how long
 * each part was then. Written atomically after every chunk, never ahead of what was written.
 */

export const PROGRESS_FORMAT = 'monapi-backfill-progress';
export const PROGRESS_VERSION = 1;

const hostSchema = z.object({
  /** History written up to here (the end of the last bucket). */
  coveredUntilMs: z.number().finite(),
  /** Where this host's history ends. */
  untilMs: z.number().finite(),
  done: z.boolean(),
  state: seriesHostSchema,
});

const progressSchema = z.object({
  format: z.literal(PROGRESS_FORMAT),
  version: z.literal(PROGRESS_VERSION),
  /** What the history goes to: a file's path, or a remote write URL; another target is another backfill. */
  target: z.string(),
  /** The end of history for hosts whose end the live exporter does not name. */
  untilMs: z.number().finite(),
  accounts: z.record(z.string(), z.object({ hosts: z.record(z.string(), hostSchema) })),
  /** A file's parts: bytes of each part as of the last chunk. */
  parts: z.record(z.string(), z.number().int().min(0)),
  /** When the output was made complete (durable); from then on a run leaves it as it is. */
  completedAtMs: z.number().finite().optional(),
});

export interface HostProgress {
  readonly coveredUntilMs: number;
  readonly untilMs: number;
  readonly done: boolean;
  readonly state: SeriesHostState;
}

export class ProgressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProgressError';
  }
}

export class Progress {
  private constructor(
    private readonly path: string,
    readonly target: string,
    readonly untilMs: number,
    private readonly accounts: Record<string, { hosts: Record<string, z.input<typeof hostSchema>> }>,
    private parts: Record<string, number>,
    private completed: number | undefined,
  ) {}

  /**
   * The progress in `path`, or a new one when there is none. A file made for another target
   * or another end of history is refused with the reason: mixing two backfills in one file
   * would write some history twice and some never.
   */
  static open(path: string, target: string, untilMs: number, untilGiven: boolean): Progress {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT') return new Progress(path, target, untilMs, {}, {}, undefined);
      throw new ProgressError(`cannot read the progress file ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ProgressError(`the progress file ${path} is not JSON; remove it to start the backfill afresh`);
    }
    const parsed = progressSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ProgressError(`the progress file ${path} is not a backfill progress file of this version (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}); remove it to start afresh`);
    }
    const data = parsed.data;
    if (data.target !== target) {
      throw new ProgressError(`the progress file ${path} belongs to a backfill into ${data.target}, not ${target}; give another --progress.file, or remove it to start afresh`);
    }
    if (untilGiven && data.untilMs !== untilMs) {
      throw new ProgressError(
        `the progress file ${path} was made with --until ${new Date(data.untilMs).toISOString()}, not ${new Date(untilMs).toISOString()}; resume without --until, or remove the file to start afresh`,
      );
    }
    return new Progress(path, target, data.untilMs, data.accounts, data.parts, data.completedAtMs);
  }

  host(account: string, uuid: string): HostProgress | undefined {
    const saved = this.accounts[account]?.hosts[uuid];
    if (saved === undefined) return undefined;
    return { coveredUntilMs: saved.coveredUntilMs, untilMs: saved.untilMs, done: saved.done, state: decodeSeriesHost(saved.state) };
  }

  /** Hosts of the account that have some history written, done or not. */
  hosts(account: string): string[] {
    return Object.keys(this.accounts[account]?.hosts ?? {});
  }

  get partSizes(): Readonly<Record<string, number>> {
    return this.parts;
  }

  /** Records a chunk of a host (and, for a file, the parts' sizes after it), then writes the file. */
  async record(account: string, uuid: string, host: HostProgress, parts?: Readonly<Record<string, number>>): Promise<void> {
    const hosts = (this.accounts[account] ??= { hosts: {} }).hosts;
    hosts[uuid] = { coveredUntilMs: host.coveredUntilMs, untilMs: host.untilMs, done: host.done, state: encodeSeriesHost(host.state) };
    if (parts !== undefined) this.parts = { ...parts };
    await this.save();
  }

  /** When an earlier run made the output complete, if one did. */
  get completedAtMs(): number | undefined {
    return this.completed;
  }

  /** Records that the output is complete and durable: what it was made from may go now. */
  async complete(atMs: number): Promise<void> {
    this.completed = atMs;
    await this.save();
  }

  async save(): Promise<void> {
    const body = JSON.stringify({ format: PROGRESS_FORMAT, version: PROGRESS_VERSION, target: this.target, untilMs: this.untilMs, accounts: this.accounts, parts: this.parts, completedAtMs: this.completed });
    await writeFileAtomically(this.path, body);
  }
}

