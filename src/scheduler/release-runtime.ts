import cron from 'node-cron';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { FREE_ENDPOINT_CACHE_MS, type ReleaseProject as ConfiguredProject, type ReleasesConfig } from '../config/types.js';
import type { MetricSink } from '../exposition/model.js';
import type { Clock, TimerHandle } from '../lib/clock.js';
import { EMPTY_RELEASE_STATE, mapReleaseLookup, type ReleaseLookupState } from '../sources/releases/map.js';
import { lookupKey } from '../sources/outdated/map.js';
import { lookupsDue, type LookupRecord } from '../sources/outdated/plan.js';
import type { OutdatedTracker } from '../sources/outdated/tracker.js';
import { groupName } from '../sources/types.js';
import { UpstreamError } from '../upstream/http/errors.js';
import type { LatestRelease, ReleaseProject } from '../upstream/releases/client.js';
import type { PlanSource, PlanView, SourceHealthView } from './metrics.js';
import type { FailingSource } from '../server/status.js';
import { failingSources, reasonOf, sourceHealth, type RunRecord, type SourceHealth } from './source-health.js';

/** Starts a function on a cron schedule; injectable so tests need no real timers. */
export type CronTrigger = (expression: string, timezone: string, run: () => void) => { stop(): void };

export const nodeCronTrigger: CronTrigger = (expression, timezone, run) => {
  const task = cron.schedule(expression, run, { timezone, noOverlap: true });
  return { stop: () => void task.stop() };
};

export interface ReleaseLookup {
  latest(project: ReleaseProject): Promise<LatestRelease>;
}

export interface ReleaseRuntimeOptions {
  config: ReleasesConfig;
  client: ReleaseLookup;
  sink: MetricSink;
  clock: Clock;
  log: Logger;
  registry: Registry;
  trigger?: CronTrigger;
  /** Exposes the lookups' health as monapi_source_up{account="(releases)"}, and their plan. */
  health?: { trackHealth(view: SourceHealthView): void; trackPlan?(view: PlanView): void };
  /**
   * The configured projects this process looks up: all of them (the default), or none on a
   * shard other than 0, which looks up only the lines of its own components.
   */
  projects?: readonly ConfiguredProject[];
  /** The outdated check: the version lines its installed components need are looked up too. */
  outdated?: OutdatedTracker;
}

/** The account label of the release lookups in self-metrics (no account name can contain parentheses). */
export const RELEASES_ACCOUNT = '(releases)';
const SOURCE = 'releases';
const OUTDATED_SOURCE = 'outdated';

/**
 * Components are polled host by host, so the lines they need appear one after another; a
 * line seen for the first time is looked up this long after (with the others seen meanwhile),
 * not at the next scheduled run, which may be hours away.
 */
export const NEW_LINE_DELAY_MS = 10_000;

/** One request of a round, and who uses its answer. */
interface PlannedLookup {
  readonly key: string;
  readonly id: string;
  readonly major: string | undefined;
  /** A configured project (monapi_release_*). */
  readonly configured: ConfiguredProject | undefined;
  /** A line of the outdated check. */
  readonly outdated: boolean;
}

/**
 * Looks up every configured project once at start (so /metrics has versions at once)
 * and then on the cron schedule, together with the version lines the outdated check needs:
 * each (project, line) once per run however many hosts use it, one answer serving a
 * configured project and a line alike. Configuration validation guarantees the schedule does
 * not poll the free endpoint more often than its 2-hour cache unless the operator allowed it;
 * a key asked outside the schedule (at start, or a line just seen) is not asked again by a
 * run within those 2 hours.
 */
export class ReleaseRuntime implements SourceHealthView, PlanView {
  readonly account = RELEASES_ACCOUNT;
  private readonly projects: readonly ConfiguredProject[];
  private readonly states = new Map<string, ReleaseLookupState>();
  private readonly lastErrors = new Map<string, { atMs: number; kind: string; message: string }>();
  private readonly lastRuns = new Map<string, RunRecord>();
  private readonly history = new Map<string, LookupRecord>();
  private task: { stop(): void } | undefined;
  private running: Promise<void> | undefined;
  private followUp = false;
  private newLineTimer: TimerHandle | undefined;
  private rounds = 0;
  private started = false;
  private stopped = false;
  private loggedPlan = '';
  private readonly lookups: Counter<'outcome'>;

  constructor(private readonly options: ReleaseRuntimeOptions) {
    this.projects = options.projects ?? options.config.projects;
    this.lookups = createReleaseLookupCounter(options.registry);
    options.health?.trackHealth(this);
    options.health?.trackPlan?.(this);
    options.outdated?.onNewLines(() => this.linesAppeared());
  }

  sourceHealth(): SourceHealth[] {
    const jobs = this.planned().flatMap((l) => [
      ...(l.configured ? [{ id: jobId(SOURCE, l.key), source: SOURCE }] : []),
      ...(l.outdated ? [{ id: jobId(OUTDATED_SOURCE, l.key), source: OUTDATED_SOURCE }] : []),
    ]);
    return sourceHealth(this.sources(), jobs, this.lastRuns);
  }

  failingSources(): FailingSource[] {
    return failingSources(this.account, this.sourceHealth());
  }

  /** Lookups per run: the configured projects, and the outdated check's lines no project already asks for. */
  planSources(): PlanSource[] {
    const planned = this.planned();
    return this.sources().map((source) =>
      source === SOURCE
        ? { source, jobs: this.projects.length, requestsPerRun: planned.filter((l) => l.configured).length }
        : { source, jobs: planned.filter((l) => l.outdated).length, requestsPerRun: planned.filter((l) => l.outdated && !l.configured).length },
    );
  }

  start(): void {
    const trigger = this.options.trigger ?? nodeCronTrigger;
    this.stopped = false;
    this.started = true;
    this.task = trigger(this.options.config.schedule, this.options.config.scheduleTimezone, () => void this.request(true));
    void this.lookupAll();
  }

  stop(): void {
    this.stopped = true;
    this.task?.stop();
    this.task = undefined;
    if (this.newLineTimer) this.options.clock.clearTimeout(this.newLineTimer);
    this.newLineTimer = undefined;
  }

  ready(): boolean {
    return this.rounds > 0;
  }

  /** Looks up every key never asked yet (at start: everything). A round already running is not started twice. */
  lookupAll(): Promise<void> {
    return this.request(false);
  }

  status(): Record<string, unknown> {
    const planned = this.planned();
    return {
      mode: this.options.config.mode,
      schedule: this.options.config.schedule,
      rounds: this.rounds,
      plan: { requests_per_run: planned.length, configured_projects: this.projects.length, component_lines: planned.filter((l) => l.outdated).length },
      projects: this.projects.map((p) => {
        const key = lookupKey(p.id, p.major);
        const state = this.states.get(key);
        const release = state?.release;
        return {
          project: p.id,
          major: p.major,
          version: release?.version,
          last_success_ms: state?.lastSuccessMs,
          answer_produced_ms: release?.producedAtMs,
          answer_freshness: release?.freshness,
          last_error: this.lastErrors.get(key),
        };
      }),
      outdated: this.options.outdated?.status(),
    };
  }

  private sources(): string[] {
    return [...(this.projects.length > 0 ? [SOURCE] : []), ...(this.options.outdated ? [OUTDATED_SOURCE] : [])];
  }

  /** Every key to look up, each once: configured projects first, then the outdated check's lines. */
  private planned(): PlannedLookup[] {
    const byKey = new Map<string, PlannedLookup>();
    for (const project of this.projects) {
      const key = lookupKey(project.id, project.major);
      if (!byKey.has(key)) byKey.set(key, { key, id: project.id, major: project.major, configured: project, outdated: false });
    }
    for (const line of this.options.outdated?.wantedLines() ?? []) {
      const known = byKey.get(line.key);
      byKey.set(line.key, known ? { ...known, outdated: true } : { key: line.key, id: line.project, major: line.line, configured: undefined, outdated: true });
    }
    return [...byKey.values()];
  }

  private linesAppeared(): void {
    if (!this.started || this.stopped || this.newLineTimer !== undefined) return;
    this.newLineTimer = this.options.clock.setTimeout(() => {
      this.newLineTimer = undefined;
      void this.request(false);
    }, NEW_LINE_DELAY_MS);
  }

  /**
   * Starts a round, or, when one is running, lets it be: a scheduled run is dropped (the
   * running round asks what it would), a round for new lines follows once it ends.
   */
  private request(scheduled: boolean): Promise<void> {
    if (this.running) {
      if (!scheduled) this.followUp = true;
      return this.running;
    }
    this.running = this.round(scheduled).finally(() => {
      this.running = undefined;
      this.rounds++;
      if (this.followUp && !this.stopped) {
        this.followUp = false;
        void this.request(false);
      }
    });
    return this.running;
  }

  private async round(scheduled: boolean): Promise<void> {
    const { config, clock } = this.options;
    const nowMs = clock.now();
    const planned = this.planned();
    const minGapMs = config.mode === 'free' && !config.allowPollingFasterThanCache ? FREE_ENDPOINT_CACHE_MS : 0;
    const due = lookupsDue(planned, this.history, { scheduled, nowMs, minGapMs });
    if (scheduled) this.forgetUnplanned(planned, nowMs, minGapMs);
    if (due.length < planned.length) {
      this.options.log.debug({ due: due.length, planned: planned.length, scheduled }, 'release lookups: the others were asked within the free endpoint\'s 2-hour cache, or already');
    }
    this.logPlan();
    for (const lookup of due) this.history.set(lookup.key, { atMs: nowMs, scheduled });
    await Promise.all(due.map((lookup) => this.lookup(lookup)));
  }

  /** Keys nobody needs any more are forgotten once asking them again would be allowed. */
  private forgetUnplanned(planned: readonly PlannedLookup[], nowMs: number, minGapMs: number): void {
    const keys = new Set(planned.map((l) => l.key));
    for (const [key, record] of this.history) {
      if (keys.has(key) || nowMs - record.atMs < minGapMs) continue;
      this.history.delete(key);
      this.lastRuns.delete(jobId(SOURCE, key));
      this.lastRuns.delete(jobId(OUTDATED_SOURCE, key));
      this.options.outdated?.forgetLine(key);
    }
  }

  private logPlan(): void {
    const plan = this.planSources();
    const key = JSON.stringify(plan);
    if (key === this.loggedPlan) return;
    this.loggedPlan = key;
    this.options.log.info({ plan, schedule: this.options.config.schedule }, 'release lookups per run');
  }

  private async lookup(lookup: PlannedLookup): Promise<void> {
    const { key } = lookup;
    const { clock } = this.options;
    let outcome: { ok: true; release: LatestRelease } | { ok: false; error: unknown };
    try {
      const release = await this.options.client.latest(lookup.major === undefined ? { id: lookup.id } : { id: lookup.id, major: lookup.major });
      outcome = { ok: true, release };
      this.lookups.inc({ outcome: 'success' });
    } catch (err) {
      if (this.stopped) return;
      outcome = { ok: false, error: err };
      this.lookups.inc({ outcome: 'error' });
    }
    if (this.stopped) return;
    const atMs = clock.now();
    const message = outcome.ok ? '' : outcome.error instanceof Error ? outcome.error.message : JSON.stringify(outcome.error);
    const run: RunRecord = outcome.ok ? { ok: true, reason: '', atMs, message: '', target: key } : { ok: false, reason: reasonOf(outcome.error), atMs, message, target: key };
    if (!outcome.ok) {
      const kind = outcome.error instanceof UpstreamError ? outcome.error.kind : 'internal';
      if (lookup.configured) this.lastErrors.set(key, { atMs, kind, message });
      this.options.log.warn({ project: lookup.id, major: lookup.major, kind, err: { message } }, 'release lookup failed');
    } else {
      this.lastErrors.delete(key);
    }
    // One answer serves both: a line that a configured project already answered needs no lookup of its own.
    this.lastRuns.set(jobId(SOURCE, key), run);
    this.lastRuns.set(jobId(OUTDATED_SOURCE, key), run);
    this.options.outdated?.record(key, outcome.ok ? { ok: true, version: outcome.release.version, tagDate: outcome.release.tagDate } : { ok: false, message });
    if (lookup.configured) {
      const previous = this.states.get(key) ?? EMPTY_RELEASE_STATE;
      const { state, families } = mapReleaseLookup(outcome.ok ? outcome : { ok: false }, previous, { project: lookup.id, major: lookup.major, nowMs: atMs });
      this.states.set(key, state);
      this.options.sink.publish(groupName('releases', key), families);
    }
  }
}

export function createReleaseLookupCounter(registry: Registry): Counter<'outcome'> {
  // A reload that changes the release lookups builds a new runtime on the same registry.
  const existing = registry.getSingleMetric('monapi_release_lookups_total');
  if (existing instanceof Counter) return existing;
  return new Counter({
    name: 'monapi_release_lookups_total',
    help: 'Release lookups by outcome (success or error).',
    labelNames: ['outcome'],
    registers: [registry],
  });
}

/** A job of the health view: one source's use of one key (a key may serve both sources). */
function jobId(source: string, key: string): string {
  return `${source}:${key}`;
}
