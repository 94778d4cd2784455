import cron from 'node-cron';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { FREE_ENDPOINT_CACHE_MS, type ReleaseProject as ConfiguredProject, type ReleasesConfig } from '../config/types.js';
import type { MetricSink } from '../exposition/model.js';
import type { Clock } from '../lib/clock.js';
import { EMPTY_RELEASE_STATE, mapReleaseLookup, type ReleaseLookupState } from '../sources/releases/map.js';
import { groupName } from '../sources/types.js';
import { UpstreamError } from '../upstream/http/errors.js';
import type { LatestRelease, ReleaseProject } from '../upstream/releases/client.js';
import type { SourceHealthView } from './metrics.js';
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
  /** Exposes the lookups' health as monapi_source_up{account="(releases)",source="releases"}. */
  health?: { trackHealth(view: SourceHealthView): void };
}

/** The account label of the release lookups in self-metrics (no account name can contain parentheses). */
export const RELEASES_ACCOUNT = '(releases)';
const SOURCE = 'releases';

/**
 * Looks up every configured project once at start (so /metrics has versions at once)
 * and then on the cron schedule. Configuration validation guarantees the schedule does
 * not poll the free endpoint more often than its 2-hour cache unless the operator allowed it.
 */
export class ReleaseRuntime implements SourceHealthView {
  readonly account = RELEASES_ACCOUNT;
  private readonly states = new Map<string, ReleaseLookupState>();
  private readonly lastErrors = new Map<string, { atMs: number; kind: string; message: string }>();
  private readonly lastRuns = new Map<string, RunRecord>();
  private task: { stop(): void } | undefined;
  private running: Promise<void> | undefined;
  private rounds = 0;
  private stopped = false;
  private lastRoundMs: number | undefined;
  private readonly lookups: Counter<'outcome'>;

  constructor(private readonly options: ReleaseRuntimeOptions) {
    this.lookups = createReleaseLookupCounter(options.registry);
    options.health?.trackHealth(this);
  }

  sourceHealth(): SourceHealth[] {
    const jobs = this.options.config.projects.map((p) => ({ id: keyOf(p), source: SOURCE }));
    return sourceHealth([SOURCE], jobs, this.lastRuns);
  }

  failingSources(): FailingSource[] {
    return failingSources(this.account, this.sourceHealth());
  }

  start(): void {
    const trigger = this.options.trigger ?? nodeCronTrigger;
    this.stopped = false;
    this.task = trigger(this.options.config.schedule, this.options.config.scheduleTimezone, () => void this.onSchedule());
    void this.lookupAll();
  }

  stop(): void {
    this.stopped = true;
    this.task?.stop();
    this.task = undefined;
  }

  /**
   * The lookup at start can fall shortly before a scheduled run; on the free endpoint that
   * run would only fetch the 2-hour cache again, so it is skipped.
   */
  private onSchedule(): void {
    const { config, clock } = this.options;
    if (config.mode === 'free' && !config.allowPollingFasterThanCache && this.lastRoundMs !== undefined && clock.now() - this.lastRoundMs < FREE_ENDPOINT_CACHE_MS) {
      this.options.log.debug({ lastRoundMs: this.lastRoundMs }, 'skipping a scheduled release lookup: the free endpoint still serves its cached answer');
      return;
    }
    void this.lookupAll();
  }

  ready(): boolean {
    return this.rounds > 0;
  }

  /** Runs one round; a round already running is not started twice. */
  lookupAll(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = undefined;
      this.rounds++;
    });
    return this.running;
  }

  status(): Record<string, unknown> {
    return {
      mode: this.options.config.mode,
      schedule: this.options.config.schedule,
      rounds: this.rounds,
      projects: this.options.config.projects.map((p) => {
        const key = keyOf(p);
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
    };
  }

  private async round(): Promise<void> {
    this.lastRoundMs = this.options.clock.now();
    await Promise.all(this.options.config.projects.map((project) => this.lookup(project)));
  }

  private async lookup(project: ConfiguredProject): Promise<void> {
    const key = keyOf(project);
    const previous = this.states.get(key) ?? EMPTY_RELEASE_STATE;
    let outcome: { ok: true; release: LatestRelease } | { ok: false };
    try {
      const release = await this.options.client.latest(project.major === undefined ? { id: project.id } : { id: project.id, major: project.major });
      outcome = { ok: true, release };
      this.lastErrors.delete(key);
      this.lastRuns.set(key, { ok: true, reason: '', atMs: this.options.clock.now(), message: '', target: key });
      this.lookups.inc({ outcome: 'success' });
    } catch (err) {
      if (this.stopped) return;
      outcome = { ok: false };
      const kind = err instanceof UpstreamError ? err.kind : 'internal';
      const message = err instanceof Error ? err.message : JSON.stringify(err);
      this.lastErrors.set(key, { atMs: this.options.clock.now(), kind, message });
      this.lastRuns.set(key, { ok: false, reason: reasonOf(err), atMs: this.options.clock.now(), message, target: key });
      this.lookups.inc({ outcome: 'error' });
      this.options.log.warn({ project: project.id, major: project.major, kind, err: { message } }, 'release lookup failed');
    }
    if (this.stopped) return;
    const { state, families } = mapReleaseLookup(outcome, previous, { project: project.id, major: project.major, nowMs: this.options.clock.now() });
    this.states.set(key, state);
    this.options.sink.publish(groupName('releases', key), families);
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

function keyOf(project: ConfiguredProject): string {
  return project.major === undefined ? project.id : `${project.id}@${project.major}`;
}
