import type { Logger } from 'pino';
import type { SpendLease } from '../budget/lease.js';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FamilySamples, MetricSink } from '../exposition/model.js';
import type { Clock, TimerHandle } from '../lib/clock.js';
import { writeStateFile, type AccountState } from './state-file.js';

/**
 * Saves the sources' state every few seconds and on shutdown, and holds back what they
 * publish until the state it came from is on disk.
 *
 * Why hold back: a counter Prometheus has scraped must never be ahead of the state file. If
 * the exporter published total 120, was scraped, and died before saving, a restart from the
 * saved 100 would show 100 and then count the same minutes again up to 120: Prometheus reads
 * the drop from 120 to 100 as a counter reset and adds the 100 a second time. With every
 * publication released only after a save that includes its state, what a restart resumes
 * from is never behind what was exposed, so nothing is counted twice. The price is that
 * /metrics lags polling by up to the save interval (5 s against polls a minute apart).
 */

export const DEFAULT_SAVE_INTERVAL_MS = 5_000;
/**
 * How far past a save its spending lease reaches (see src/budget/lease.ts): three save
 * intervals, so regular saves extend it long before it runs out while requests flow.
 */
export const LEASE_INTERVALS = 3;

type Operation = { readonly kind: 'publish'; readonly families: readonly FamilySamples[] } | { readonly kind: 'retract' };

export interface StateKeeperOptions {
  readonly path: string;
  readonly clock: Clock;
  readonly log: Logger;
  readonly registry?: Registry;
  readonly intervalMs?: number;
  /** The state of every account now, by account name. */
  collect(): Record<string, AccountState>;
}

export function createStateMetrics(registry: Registry): { lastSave: Gauge; bytes: Gauge; saves: Counter; failures: Counter } {
  const registers = [registry];
  return {
    lastSave: new Gauge({ name: 'monapi_exporter_state_last_save_timestamp_seconds', help: 'Unix time the state file (--state.file) was last written.', registers }),
    bytes: new Gauge({ name: 'monapi_exporter_state_size_bytes', help: 'Size of the state file (--state.file) when it was last written.', registers }),
    saves: new Counter({ name: 'monapi_exporter_state_saves_total', help: 'Writes of the state file (--state.file).', registers }),
    failures: new Counter({
      name: 'monapi_exporter_state_save_failures_total',
      help: 'Writes of the state file (--state.file) that failed; what was held back is published anyway, and a restart may then lose or repeat counts.',
      registers,
    }),
  };
}

export class StateKeeper {
  private pending = new Map<string, { readonly sink: MetricSink; readonly op: Operation }>();
  private timer: TimerHandle | undefined;
  private saving: Promise<void> | undefined;
  private stopped = false;
  private failing = false;
  private refusalLogged = false;
  private leaseWriting: number | undefined;
  private leaseUsed = false;
  private leaseWanted = false;
  private readonly leaseListeners = new Set<() => void>();
  private readonly intervalMs: number;
  private readonly metrics:
    | { readonly lastSave: Gauge; readonly bytes: Gauge; readonly failures: Counter; readonly saves: Counter }
    | undefined;

  constructor(private readonly options: StateKeeperOptions) {
    this.intervalMs = options.intervalMs ?? DEFAULT_SAVE_INTERVAL_MS;
    this.metrics = options.registry && createStateMetrics(options.registry);
  }

  /** A sink that forwards to `inner` once the state behind each publication is saved. */
  gate(inner: MetricSink): MetricSink {
    const held = (group: string) => {
      const entry = this.pending.get(group);
      return entry?.sink === inner ? entry.op : undefined;
    };
    return {
      publish: (group, families) => this.hold(group, inner, { kind: 'publish', families }),
      retract: (group) => this.hold(group, inner, { kind: 'retract' }),
      groups: (prefix) => {
        const groups = new Set(inner.groups(prefix));
        for (const [group, entry] of this.pending) {
          if (entry.sink !== inner || !group.startsWith(prefix)) continue;
          if (held(group)?.kind === 'retract') groups.delete(group);
          else groups.add(group);
        }
        return [...groups];
      },
    };
  }

  /** Saves on its interval from now on; at once when something already waits (restored state to show). */
  start(): void {
    if (this.pending.size > 0) void this.saveNow().catch(() => undefined);
    this.schedule();
  }

  /**
   * The request budgets' spending lease: a save grants the budgets that asked a lease until
   * `LEASE_INTERVALS` save intervals after it; a budget that spent asks at the next regular
   * save, one whose lease ran out asks for a save now and waits for it.
   */
  readonly lease: SpendLease = {
    writing: () => this.leaseWriting,
    touch: () => {
      this.leaseUsed = true;
    },
    request: () => {
      if (this.leaseWanted) return;
      this.leaseWanted = true;
      // A save under way may have been collected before the budget asked: the next one covers it.
      void this.saveNow().catch(() => undefined);
    },
    onSaved: (listener) => {
      this.leaseListeners.add(listener);
      return () => this.leaseListeners.delete(listener);
    },
  };

  /** A save is being written now. */
  busy(): boolean {
    return this.saving !== undefined;
  }

  /** Saves now (waiting for a save under way first) and releases what it covers. */
  async saveNow(): Promise<void> {
    while (this.saving) await this.saving;
    this.saving = this.save().finally(() => {
      this.saving = undefined;
    });
    await this.saving;
  }

  /** The last save, then everything held is released; no further saves. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.saveNow();
  }

  private leaseSaved(): void {
    this.leaseWanted = false;
    for (const listener of [...this.leaseListeners]) listener();
  }

  private hold(group: string, sink: MetricSink, op: Operation): void {
    if (this.stopped) {
      apply(sink, group, op);
      return;
    }
    // Only the newest operation on a group matters: each replaces the group whole.
    this.pending.delete(group);
    this.pending.set(group, { sink, op });
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      const next = () => this.schedule();
      if (this.pending.size === 0 && !this.leaseUsed) next();
      else this.saveNow().then(next, next);
    }, this.intervalMs);
  }

  /** Once per process: the same planted link would otherwise be reported at every save. */
  private refused(message: string): void {
    if (this.refusalLogged) return;
    this.refusalLogged = true;
    this.options.log.warn({ stateFile: this.options.path }, `state file: ${message}`);
  }

  private async save(): Promise<void> {
    // What is held now came from state no newer than this snapshot.
    const covered = this.pending;
    this.pending = new Map();
    const savedAtMs = this.options.clock.now();
    this.leaseUsed = false;
    // After the last save nothing is written: the budgets are closed by then and grant themselves nothing.
    this.leaseWriting = this.stopped ? undefined : savedAtMs + LEASE_INTERVALS * this.intervalMs;
    try {
      const accounts = this.options.collect();
      this.leaseWriting = undefined;
      const bytes = await writeStateFile(this.options.path, { savedAtMs, accounts }, { onRefused: (message) => this.refused(message) });
      this.metrics?.saves.inc();
      this.metrics?.lastSave.set(savedAtMs / 1000);
      this.metrics?.bytes.set(bytes);
      if (this.failing) this.options.log.info({ stateFile: this.options.path }, 'the state file is written again');
      this.failing = false;
    } catch (error) {
      this.metrics?.failures.inc();
      if (!this.failing) {
        this.options.log.error(
          { stateFile: this.options.path, err: { message: error instanceof Error ? error.message : String(error) } },
          'cannot write the state file; polling and /metrics go on, but a restart now may lose or repeat counts (logged once until it works again)',
        );
      }
      this.failing = true;
    }
    this.leaseWriting = undefined;
    for (const [group, { sink, op }] of covered) apply(sink, group, op);
    // Granted whether or not the write worked: a full disk must not stop polling (a restart may then overspend once).
    this.leaseSaved();
  }
}

function apply(sink: MetricSink, group: string, op: Operation): void {
  if (op.kind === 'publish') sink.publish(group, op.families);
  else sink.retract(group);
}
