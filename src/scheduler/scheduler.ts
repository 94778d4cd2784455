import TinyQueue from 'tinyqueue';
import type { Priority } from '../budget/types.js';
import type { Clock, TimerHandle } from '../lib/clock.js';

/**
 * One unit of polling work: a source applied to one target (the account, a host, a
 * website, a project). `run` does the requests through the budget, maps and publishes.
 */
export interface Job {
  readonly id: string;
  readonly source: string;
  readonly priority: Priority;
  /** How often the job wants to run (for a scheduled job, the shortest gap of its schedule). */
  cadenceMs(): number;
  /** When the next run is due after a run that started then; default: that start plus `cadenceMs`. */
  nextDueMs?(startedMs: number): number;
  /** Requests one run costs (for the plan figures; the budget enforces the real limit). */
  requestsPerRun(): number;
  run(signal: AbortSignal): Promise<void>;
}

export interface JobOutcome {
  readonly job: Job;
  readonly startedMs: number;
  readonly finishedMs: number;
  readonly error?: unknown;
}

export interface SchedulerOptions {
  clock: Clock;
  /** Jobs allowed to run at once; the budget further limits requests. */
  maxConcurrentJobs: number;
  onOutcome?: (outcome: JobOutcome) => void;
}

interface Entry {
  job: Job;
  dueMs: number;
  running: boolean;
  /** Removed while running: kept until the run ends so the same id cannot run twice at once. */
  removed: boolean;
  /** Aborts the current run when the job is removed or the scheduler stops. */
  abort: AbortController | undefined;
  /** Creation order: of two jobs due at once, the older goes first. */
  readonly seq: number;
  /** Bumped on every change of its place in the queues; a queued place of an older version is stale. */
  version: number;
}

/** A waiting entry's place in its priority's queue, as of one version of it. */
interface Place {
  readonly entry: Entry;
  readonly dueMs: number;
  readonly version: number;
}

const byDueThenAge = (a: Place, b: Place): number => a.dueMs - b.dueMs || a.entry.seq - b.entry.seq;

const PRIORITY_RANK: Record<Priority, number> = { high: 0, normal: 1, bulk: 2 };
/** Node's timers overflow past this (and would fire at once): a job due later is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Pulls work instead of firing timers per job: whenever a slot is free it starts the due
 * job of the highest priority that has waited longest. When the budget cannot keep up
 * with the cadences, jobs stay overdue and run in order of how long they have waited,
 * so every target's cadence stretches by the same amount (round-robin), and the budget's
 * queue never grows beyond the running jobs.
 */
export class Scheduler {
  private readonly entries = new Map<string, Entry>();
  /**
   * The waiting entries by priority, earliest due first. Places are never removed in place:
   * a change queues a new one and the old is skipped when it comes up (a host list of
   * thousands would otherwise cost a scan of every job each time a job finishes).
   */
  private readonly waiting: TinyQueue<Place>[] = [new TinyQueue([], byDueThenAge), new TinyQueue([], byDueThenAge), new TinyQueue([], byDueThenAge)];
  private nextSeq = 0;
  private running = 0;
  private timer: TimerHandle | undefined;
  private timerDueMs = Infinity;
  private stopped = true;
  /** Inside `batch`: looking for due jobs waits until the batch is over. */
  private batchDepth = 0;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(private readonly options: SchedulerOptions) {}

  /** Adds a job (due now) or replaces the definition of an existing one, keeping its due time. */
  upsert(job: Job, dueMs = this.options.clock.now()): void {
    const existing = this.entries.get(job.id);
    if (existing) {
      const priorityChanged = existing.job.priority !== job.priority;
      existing.job = job;
      if (existing.removed) {
        // Back while its aborted run is still finishing: due again as soon as that ends.
        existing.removed = false;
        existing.dueMs = Math.min(existing.dueMs, dueMs);
      } else if (priorityChanged) {
        this.enqueue(existing);
      }
    } else {
      const entry: Entry = { job, dueMs, running: false, removed: false, abort: undefined, seq: this.nextSeq++, version: 0 };
      this.entries.set(job.id, entry);
      this.enqueue(entry);
    }
    this.kick();
  }

  /**
   * Applies many upserts and removals, then looks for due jobs once: each look scans every
   * job, so a host list of hundreds of hosts would otherwise cost hundreds of scans.
   */
  batch(change: () => void): void {
    this.batchDepth++;
    try {
      change();
    } finally {
      this.batchDepth--;
      if (this.batchDepth === 0) this.kick();
    }
  }

  /** Removes a job; a run in progress is aborted and publishes nothing (sources check the signal). */
  remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry || entry.removed) return;
    if (entry.running) {
      entry.removed = true;
      entry.abort?.abort(new Error(`job ${id} removed`));
    } else {
      this.entries.delete(id);
    }
  }

  has(id: string): boolean {
    const entry = this.entries.get(id);
    return entry !== undefined && !entry.removed;
  }

  jobs(): Job[] {
    return [...this.entries.values()].filter((e) => !e.removed).map((e) => e.job);
  }

  /** Moves a job's next run to now (e.g. a new host's catalogue is needed before its series). */
  expedite(id: string): void {
    const entry = this.entries.get(id);
    if (entry && !entry.running && !entry.removed) {
      entry.dueMs = Math.min(entry.dueMs, this.options.clock.now());
      this.enqueue(entry);
      this.kick();
    }
  }

  /** How far behind schedule the most overdue job is, in ms (0 when nothing is overdue). */
  maxLagMs(): number {
    const now = this.options.clock.now();
    let lag = 0;
    for (const entry of this.entries.values()) {
      if (!entry.running && !entry.removed) lag = Math.max(lag, now - entry.dueMs);
    }
    return lag;
  }

  start(): void {
    this.stopped = false;
    this.kick();
  }

  /** Stops starting jobs and aborts running ones. */
  stop(): void {
    this.stopped = true;
    for (const entry of this.entries.values()) entry.abort?.abort(new Error('scheduler stopped'));
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueMs = Infinity;
  }

  /** Jobs running now. */
  runningCount(): number {
    return this.running;
  }

  /** Resolves when no job is running (tests and shutdown). */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private kick(): void {
    if (this.stopped || this.batchDepth > 0) return;
    const now = this.options.clock.now();
    while (this.running < this.options.maxConcurrentJobs) {
      const next = this.pickDue(now);
      if (!next) break;
      this.launch(next, now);
    }
    this.armTimer(now);
  }

  /** Queues the entry's current place (it is waiting: not running, not removed). */
  private enqueue(entry: Entry): void {
    entry.version++;
    this.waiting[PRIORITY_RANK[entry.job.priority]]?.push({ entry, dueMs: entry.dueMs, version: entry.version });
  }

  /** The earliest waiting place of a priority, stale places dropped on the way. */
  private head(queue: TinyQueue<Place>): Place | undefined {
    for (;;) {
      const place = queue.peek();
      if (place === undefined) return undefined;
      const { entry } = place;
      if (place.version === entry.version && !entry.running && !entry.removed && this.entries.get(entry.job.id) === entry) return place;
      queue.pop();
    }
  }

  /** The due job of the highest priority that has waited longest. */
  private pickDue(now: number): Entry | undefined {
    for (const queue of this.waiting) {
      const place = this.head(queue);
      if (place !== undefined && place.dueMs <= now) return place.entry;
    }
    return undefined;
  }

  private launch(entry: Entry, now: number): void {
    entry.version++;
    entry.running = true;
    this.running++;
    const abort = new AbortController();
    entry.abort = abort;
    const startedMs = now;
    let error: unknown;
    const finish = (): void => {
      entry.running = false;
      entry.abort = undefined;
      this.running--;
      const finishedMs = this.options.clock.now();
      if (entry.removed) {
        this.entries.delete(entry.job.id);
      } else {
        // The next run is measured from the start of this one, so a job's cadence does not
        // drift by its own duration; an overdue job is simply due again at once. A job that
        // was removed and re-added during its run keeps the earlier due time upsert gave it.
        entry.dueMs = abort.signal.aborted ? Math.min(entry.dueMs, finishedMs) : (entry.job.nextDueMs?.(startedMs) ?? startedMs + Math.max(1, entry.job.cadenceMs()));
        this.enqueue(entry);
        if (!this.stopped && !abort.signal.aborted) this.options.onOutcome?.({ job: entry.job, startedMs, finishedMs, error });
      }
      if (this.running === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
      this.kick();
    };
    const promise = Promise.resolve().then(() => entry.job.run(abort.signal));
    promise.then(
      () => finish(),
      (err: unknown) => {
        error = err;
        finish();
      },
    );
  }

  private armTimer(now: number): void {
    let nextDue = Infinity;
    // With a slot free, kick has started every due job: what waits is due later.
    if (this.running < this.options.maxConcurrentJobs) {
      for (const queue of this.waiting) nextDue = Math.min(nextDue, this.head(queue)?.dueMs ?? Infinity);
    }
    if (nextDue === this.timerDueMs) return;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueMs = nextDue;
    if (nextDue !== Infinity) {
      this.timer = this.options.clock.setTimeout(() => {
        this.timer = undefined;
        this.timerDueMs = Infinity;
        this.kick();
      }, Math.min(nextDue - now, MAX_TIMER_MS));
    }
  }
}
