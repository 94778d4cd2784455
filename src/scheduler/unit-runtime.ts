import type { Logger } from 'pino';
import type { RequestBudget } from '../budget/request-budget.js';
import type { Priority } from '../budget/types.js';
import type { SourceConfig } from '../config/source-spec.js';
import type { ExporterConfig } from '../config/types.js';
import type { MetricSink } from '../exposition/model.js';
import type { Clock, TimerHandle } from '../lib/clock.js';
import { EpisodeLog, type EpisodeLine } from '../lib/episodes.js';
import type { Poller, SourceContext, SourceDefinition, TargetPoller, UnitInfo, UpstreamRateLimit } from '../sources/source.js';
import { PlanRequiredError, UpstreamError } from '../upstream/http/errors.js';
import type { SchedulerMetrics, SchedulingView } from './metrics.js';
import { computePlan, type PlanFigures } from './plan.js';
import { Scheduler, type Job, type JobOutcome } from './scheduler.js';
import type { FieldReport } from '../upstream/fields/resolve.js';
import { FieldHealth, type FieldState, type ListState } from './field-health.js';
import { failingSources, reasonOf, sourceHealth, type AccountUp, type FailingSource, type RunRecord, type SourceHealth } from './source-health.js';
import type { TopicBoard } from './topics.js';

export interface UnitRuntimeOptions<Api> {
  unit: UnitInfo;
  /** The unit's sources, in the order of the list; those its configuration switches off are left out here. */
  sources: readonly SourceDefinition<Api, unknown>[];
  /** What the configuration made of each source (switch, cadences, settings), by name. */
  sourceConfig: Readonly<Record<string, SourceConfig>>;
  exporter: ExporterConfig;
  upstream: Api;
  budget: RequestBudget;
  sink: MetricSink;
  clock: Clock;
  log: Logger;
  metrics: SchedulerMetrics;
  board: TopicBoard;
  /** Jobs run at once (the budget further limits requests). */
  concurrency: number;
  /** The rate limit configured for the unit's key, which an upstream-stated lower one overrides. */
  configuredRate?: { readonly requestsPerMinute: number; readonly burst: number };
  /** Whether the unit answers for `monapi_up` (the accounts do; the release lookups have source health only). */
  reportsUp: boolean;
  /** Every family any source of any unit publishes: agent series may take none of them. */
  reservedFamilyNames: readonly string[];
  /**
   * The upstream as one source sees it: its own field paths passed to the decoders, and each
   * answer's field report recorded (default: the unit's upstream, shared).
   */
  upstreamFor?(source: SourceDefinition<Api, unknown>, record: (target: string, report: FieldReport) => void): Api;
  /** Facts of the unit for `/status` beyond its sources (the release mode and schedule). */
  statusFacts?: Readonly<Record<string, unknown>>;
  /** The probe command: at most this many targets per source (the first ones), so one pass asks each endpoint once or so. */
  targetsPerSource?: number;
}

export interface JobError {
  readonly source: string;
  readonly target: string | undefined;
  readonly atMs: number;
  readonly kind: string;
  readonly message: string;
}

/** Consecutive failures (other than 401/403) after which the account counts as unreachable. */
const UNREACHABLE_AFTER = 3;
/** Two quiet minutes end an episode of failed jobs, so a source polled once a minute does not end and restart it each cycle. */
const JOB_FAILURES_QUIET_INTERVALS = 2;
const MAX_ERRORS_KEPT = 20;
const PLAN_LOG_SETTLE_MS = 3_000;

interface Running {
  readonly definition: SourceDefinition<unknown, unknown>;
  readonly poller: Poller;
  /** What its answers said of its declared fields; absent for a source that declares none. */
  readonly fields: FieldHealth | undefined;
}

/**
 * Everything one unit (an account, or the release lookups) needs: its sources' pollers,
 * their jobs on one scheduler, and the figures that explain its freshness. Per-target jobs
 * follow the topics: whenever a topic of the unit changes (a host list arrives, a catalogue
 * changes), the targets of every source that reads it are read again; a target that appears gets a job,
 * one that goes away loses it and its series are retracted.
 */
export class UnitRuntime<Api = unknown> implements SchedulingView {
  readonly account: string;
  private readonly scheduler: Scheduler;
  private readonly running: Running[];
  private readonly lastSuccessMs = new Map<string, number>();
  private readonly targetSince = new Map<string, number>();
  private readonly errors: JobError[] = [];
  private readonly attempted = new Set<string>();
  private readonly lastRuns = new Map<string, RunRecord>();
  /**
   * Bumped when a job comes, goes or finishes a run: the self-metrics read source health and
   * staleness several times a render, and at a million series that walked every job each time.
   */
  private runsEpoch = 0;
  private healthMemo: { readonly epoch: number; readonly health: readonly SourceHealth[] } | undefined;
  private oldestMemo: { readonly epoch: number; readonly oldestMs: ReadonlyMap<string, number> } | undefined;
  private readonly unsubscribe: () => void;
  /** The sources whose jobs' first runs the unit waits for before it is ready. */
  private readonly holdsReadiness: ReadonlySet<string>;
  private reconcileQueued = false;
  /** The target sources whose topics changed since the last reconcile. */
  private readonly dirtySources = new Set<string>();
  /** Per target source, its jobs and the target each was made for: a target seen again as the same object keeps its job. */
  private readonly targetJobs = new Map<string, Map<string, unknown>>();
  private stopped = false;
  /** From the latest 403 plan_required; shown in /status, logged once per distinct URL. */
  private upgradeUrl: string | undefined;
  /** The upstream-stated limit last acted on, so it is logged once per change. */
  private upstreamLimitKey = '';
  private consecutiveFailures = 0;
  private authFailure: 'unauthorized' | 'plan_required' | undefined;
  private answered = false;
  private cachedPlan: PlanFigures | undefined;
  private loggedPlanKey = '';
  private planLogTimer: TimerHandle | undefined;
  private planChangedAtMs = 0;
  private completedFirstCycle = false;
  /** Failed jobs by source and kind: an unreachable upstream fails every host's job each cycle. */
  private readonly jobFailures: EpisodeLog<JobFailure>;
  /** Families whose names collided on some host: every host of an agent version collides alike. */
  private readonly collidedFamilies = new Set<string>();

  constructor(private readonly options: UnitRuntimeOptions<Api>) {
    this.account = options.unit.name;
    this.jobFailures = new EpisodeLog<JobFailure>({
      clock: options.clock,
      quietIntervalsToEnd: JOB_FAILURES_QUIET_INTERVALS,
      write: (line) => this.logJobFailures(line),
    });
    this.scheduler = new Scheduler({
      clock: options.clock,
      maxConcurrentJobs: Math.max(2, options.concurrency),
      onOutcome: (outcome) => this.recordOutcome(outcome),
    });
    this.holdsReadiness = new Set(options.sources.filter((d) => d.holdsReadiness ?? true).map((d) => d.name));
    // Which sources follow which topic: a catalogue poll (one per host) must not re-read every source's targets.
    const readersOf = (topics: (d: SourceDefinition<Api, unknown>) => readonly { readonly name: string }[] | undefined) => {
      const readers = new Map<string, string[]>();
      for (const definition of options.sources) for (const topic of topics(definition) ?? []) readers.set(topic.name, [...(readers.get(topic.name) ?? []), definition.name]);
      return readers;
    };
    const ownReaders = readersOf((d) => d.reads);
    const everyUnitReaders = readersOf((d) => d.readsEveryUnit);
    this.unsubscribe = options.board.onChange((unit, topic) => {
      const readers = [...(unit === this.account ? (ownReaders.get(topic) ?? []) : []), ...(everyUnitReaders.get(topic) ?? [])];
      if (readers.length > 0) this.queueReconcile(readers);
    });
    const contextOf = (definition: SourceDefinition<Api, unknown>, fields: FieldHealth | undefined): SourceContext<Api, unknown> => {
      const config = options.sourceConfig[definition.name];
      const record = (target: string, report: FieldReport) => {
        if (fields !== undefined) this.recordAnswer(definition.name, fields, target, report);
      };
      return {
        unit: options.unit,
        exporter: options.exporter,
        upstream: options.upstreamFor?.(definition, record) ?? options.upstream,
        settings: config?.settings,
        cadenceMs: (key) => {
          const ms = config?.cadenceMs[key];
          if (ms === undefined) throw new Error(`source ${definition.name} has no cadence ${key}`);
          return ms;
        },
        sink: options.sink,
        clock: options.clock,
        log: options.log,
        events: {
          nameCollision: (hostUuid, familyKey, kept, dropped) => {
            options.metrics.nameCollision(this.account);
            if (this.collidedFamilies.has(familyKey)) return;
            this.collidedFamilies.add(familyKey);
            options.log.warn(
              { hostUuid, family: familyKey, kept, dropped },
              'agent metric names collide after sanitising; dropped the others (logged once per family, for its first host; monapi_series_name_collisions_total counts every host)',
            );
          },
        },
        provide: (topic, value) => {
          if (topic.provider !== definition.name) throw new Error(`source ${definition.name} may not provide ${topic.name}`);
          // A run finishing after a reload replaced the unit must not overwrite its successor's topics.
          if (!this.stopped) options.board.provide(this.account, topic, value);
        },
        read: (topic) => {
          if (!definition.reads?.some((t) => t.name === topic.name)) throw new Error(`source ${definition.name} reads ${topic.name} without declaring it in reads`);
          return options.board.read(this.account, topic);
        },
        readAll: (topic) => {
          if (!definition.readsEveryUnit?.some((t) => t.name === topic.name)) throw new Error(`source ${definition.name} reads ${topic.name} of every unit without declaring it in readsEveryUnit`);
          return options.board.readAll(topic);
        },
        // The settings of a source are whatever its own spec built; the caller names that source.
        settingsOf: <S>(source: SourceDefinition<never, S>) => options.sourceConfig[source.name]?.settings as S | undefined,
        reservedFamilyNames: () => options.reservedFamilyNames,
        upstreamRateLimit: (limit) => this.followUpstreamLimit(limit),
      };
    };
    this.running = options.sources.map((definition) => {
      const fields = definition.fields === undefined ? undefined : new FieldHealth(definition.fields, (field, about, presentPaths) =>
        options.log.warn(
          { source: definition.name, field, about, presentPaths },
          `no answer of source ${definition.name} carries the field ${field} (${about}); monapi_decode_field_missing says so until one does. Name its path with fields: {${definition.name}: {${field}: <dotted path>}} in the configuration (monapi-exporter probe shows the paths)`,
        ),
      );
      return { definition, poller: definition.create(contextOf(definition, fields)), fields };
    });
    for (const { definition, poller, fields } of this.running) {
      if (poller.scope !== 'unit') continue;
      this.upsertJob({
        id: definition.name,
        source: definition.name,
        priority: definition.priority,
        cadenceMs: () => poller.cadence().everyMs,
        nextDueMs: (startedMs) => nextDue(poller.cadence(), startedMs),
        requestsPerRun: () => Math.round(fields?.requestsPerAnswer() ?? 1),
        run: (signal) => poller.poll(signal),
      });
    }
    this.reconcile(this.running.map((r) => r.definition.name));
    options.metrics.track(this);
  }

  /** The upstream the unit polls; saved state continues only against the same one. */
  get baseUrl(): string {
    return this.options.unit.baseUrl;
  }

  start(): void {
    this.scheduler.start();
  }

  /** The persistent state of every source that keeps some, by source name (see --state.file). */
  saveState(): Record<string, unknown> {
    const state: Record<string, unknown> = {};
    for (const { definition, poller } of this.running) if (poller.persist) state[definition.name] = poller.persist.save();
    return state;
  }

  /**
   * Takes back what `saveState` returned, before `start`. A source whose part cannot be read
   * starts afresh; the problems are returned, one line per source.
   */
  restoreState(state: Readonly<Record<string, unknown>>): string[] {
    const problems: string[] = [];
    for (const { definition, poller } of this.running) {
      if (!poller.persist || !(definition.name in state)) continue;
      try {
        poller.persist.restore(state[definition.name]);
      } catch (error) {
        problems.push(`${definition.name}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      }
    }
    return problems;
  }

  /**
   * Starts no more jobs and aborts the running ones (their outcomes are not recorded).
   * Resolves once they have ended; close the budget meanwhile so none waits for a token.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    if (this.planLogTimer) this.options.clock.clearTimeout(this.planLogTimer);
    this.jobFailures.discard();
    this.scheduler.stop();
    await this.scheduler.idle();
  }

  /**
   * True once every job that exists has run at least once: the first complete cycle. A
   * failed run counts (a key refused with 401 or 403 gives an account whose /metrics says
   * so through monapi_up); per-host jobs appear when the host list succeeds, and must run
   * before the cycle is complete.
   */
  ready(): boolean {
    if (this.completedFirstCycle) return true;
    // A unit with nothing to poll yet (no component needs a version line) is ready as it is.
    if (!this.scheduler.jobs().every((j) => this.attempted.has(j.id) || !this.holdsReadiness.has(j.source))) return false;
    this.completedFirstCycle = true;
    return true;
  }

  /**
   * Every job there is has run once and none is running, and no topic change waits to add
   * jobs: one pass over the unit's sources is done (the probe command waits for this).
   */
  passDone(): boolean {
    return !this.reconcileQueued && this.scheduler.jobs().every((j) => this.attempted.has(j.id)) && this.scheduler.runningCount() === 0;
  }

  /** Why the unit is not ready yet, for /-/ready. */
  notReadyReason(): string | undefined {
    if (this.ready()) return undefined;
    const waiting = this.scheduler.jobs().filter((j) => !this.attempted.has(j.id) && this.holdsReadiness.has(j.source)).length;
    return `${this.options.reportsUp ? `account ${this.account}` : this.account}: ${waiting} polling job(s) have not run yet`;
  }

  plan(): PlanFigures {
    this.cachedPlan ??= computePlan(
      this.scheduler.jobs().map((job) => ({
        source: job.source,
        priority: job.priority,
        cadenceMs: job.cadenceMs(),
        requestsPerRun: job.requestsPerRun(),
      })),
      this.options.budget.snapshot().configuredRatePerSecond,
    );
    return this.cachedPlan;
  }

  staleness(nowMs: number): ReadonlyMap<string, number> {
    if (this.oldestMemo?.epoch !== this.runsEpoch) {
      // Infinity: a source whose jobs have neither succeeded nor a time they appeared counts from now.
      const oldestMs = new Map<string, number>();
      for (const job of this.scheduler.jobs()) {
        const since = this.lastSuccessMs.get(job.id) ?? this.targetSince.get(job.id) ?? Infinity;
        oldestMs.set(job.source, Math.min(oldestMs.get(job.source) ?? Infinity, since));
      }
      this.oldestMemo = { epoch: this.runsEpoch, oldestMs };
    }
    return new Map([...this.oldestMemo.oldestMs].map(([source, ms]) => [source, Math.max(0, (nowMs - Math.min(ms, nowMs)) / 1000)]));
  }

  /** Whether the account answers (`monapi_up`), and if not, why (`monapi_up_reason`); undefined for a unit without them. */
  up(): AccountUp | undefined {
    if (!this.options.reportsUp) return undefined;
    if (this.authFailure) return { up: false, reason: this.authFailure };
    if (this.consecutiveFailures >= UNREACHABLE_AFTER) return { up: false, reason: 'unreachable' };
    if (!this.answered) return { up: false, reason: 'pending' };
    return { up: true, reason: '' };
  }

  lagSeconds(): number {
    return this.scheduler.maxLagMs() / 1000;
  }

  /** Per source: up, or down with a reason, from its jobs' last runs. */
  sourceHealth(): readonly SourceHealth[] {
    if (this.healthMemo?.epoch !== this.runsEpoch) {
      this.healthMemo = { epoch: this.runsEpoch, health: sourceHealth(this.running.map((r) => r.definition.name), this.scheduler.jobs(), this.lastRuns) };
    }
    return this.healthMemo.health;
  }

  /** Every declared field of every source that has had an answer: found, or missing from every answer. */
  fieldStates(): (FieldState & { readonly source: string })[] {
    return this.running.flatMap((r) => (r.fields?.states() ?? []).map((state) => ({ source: r.definition.name, ...state })));
  }

  /** Per source whose answers were lists: how they were read, and whether one is known to be short. */
  listStates(): { readonly source: string; readonly state: ListState }[] {
    return this.running.flatMap((r) => {
      const state = r.fields?.listState();
      return state === undefined ? [] : [{ source: r.definition.name, state }];
    });
  }

  /** The sources failing now, for the landing page. */
  failingSources(): FailingSource[] {
    return failingSources(this.account, this.sourceHealth(), this.upgradeUrl);
  }

  status(): Record<string, unknown> {
    const now = this.options.clock.now();
    const up = this.up();
    const own = Object.assign({}, ...this.running.map((r) => r.poller.status?.() ?? {})) as Record<string, unknown>;
    return {
      account: this.account,
      ...this.options.statusFacts,
      ...(up && { up: up.up, reason: up.reason || undefined, upgrade_url: up.reason === 'plan_required' ? this.upgradeUrl : undefined }),
      sources: this.sourceHealth().map((h) => ({
        source: h.source,
        up: h.up,
        reason: h.reason || undefined,
        targets: h.targets,
        failing_targets: h.failing,
        last_error: h.lastError && { target: h.lastError.target, at_ms: h.lastError.atMs, message: h.lastError.message },
        fields: this.fieldsStatus(h.source),
        list: this.listStatus(h.source),
      })),
      ...own,
      plan: this.plan(),
      budget: this.options.budget.snapshot(),
      staleness_seconds: Object.fromEntries(this.staleness(now)),
      lag_seconds: this.lagSeconds(),
      last_errors: [...this.errors],
    };
  }

  /** How a source's lists were read, for /status: where, over how many pages, and whether one is short and why. */
  private listStatus(source: string): Record<string, unknown> | undefined {
    const state = this.running.find((r) => r.definition.name === source)?.fields?.listState();
    if (state === undefined) return undefined;
    const { report } = state;
    return {
      path: report.path,
      how: report.how,
      lists: state.lists,
      pages: state.pages,
      via: report.via,
      incomplete: state.incomplete,
      ...(report.incomplete !== undefined && { example: { target: state.target, read: report.length, announced: report.announced, reason: report.incomplete } }),
    };
  }

  /** What an answer said of a source's fields and list; a list read short is logged when the first one is, and when none is any more. */
  private recordAnswer(source: string, fields: FieldHealth, target: string, report: FieldReport): void {
    const [requests, short] = [fields.requestsPerAnswer(), fields.incompleteLists()];
    fields.record(target, report, this.options.clock.now());
    // Pages are requests: the plan counts what the lists now take.
    if (fields.requestsPerAnswer() !== requests) this.planChanged();
    const list = report.list;
    if (short === 0 && list?.incomplete !== undefined) {
      this.options.log.warn(
        { source, target, read: list.length, announced: list.announced, pages: list.pages ?? 1, reason: list.incomplete },
        `a list of source ${source} could not be read to its end: what was read is exported, and monapi_list_incomplete is 1 until every list is whole again`,
      );
    } else if (short > 0 && fields.incompleteLists() === 0) {
      this.options.log.info({ source, target }, `the lists of source ${source} are read to their end again`);
    }
  }

  /** A source's fields for /status: where each was found and in what unit, and the missing ones. */
  private fieldsStatus(source: string): Record<string, unknown> | undefined {
    const states = this.running.find((r) => r.definition.name === source)?.fields?.states();
    if (states === undefined || states.length === 0) return undefined;
    return {
      missing: states.filter((s) => s.missing).map((s) => s.field),
      found: Object.fromEntries(states.filter((s) => s.found !== undefined).map((s) => [s.field, { path: s.found?.path, unit: s.found?.unit, configured: s.found?.configured || undefined }])),
    };
  }

  private upsertJob(job: Job): void {
    this.runsEpoch++;
    if (!this.scheduler.has(job.id)) this.targetSince.set(job.id, this.options.clock.now());
    this.scheduler.upsert(job);
    this.planChanged();
  }

  private removeJob(id: string): void {
    this.runsEpoch++;
    this.scheduler.remove(id);
    this.lastSuccessMs.delete(id);
    this.targetSince.delete(id);
    this.attempted.delete(id);
    this.lastRuns.delete(id);
    this.planChanged();
  }

  private queueReconcile(sources: readonly string[]): void {
    if (this.stopped) return;
    for (const source of sources) this.dirtySources.add(source);
    if (this.reconcileQueued) return;
    this.reconcileQueued = true;
    // Providers set several topics in one poll: the jobs follow once, after it.
    queueMicrotask(() => {
      this.reconcileQueued = false;
      const dirty = [...this.dirtySources];
      this.dirtySources.clear();
      if (!this.stopped) this.reconcile(dirty);
    });
  }

  /** Makes the jobs of these target sources match their targets. */
  private reconcile(sources: readonly string[]): void {
    this.scheduler.batch(() => {
      for (const { definition, poller } of this.running) {
        if (poller.scope === 'target' && sources.includes(definition.name)) this.reconcileTargets(definition, poller);
      }
    });
  }

  /**
   * The upstream stated the key's rate limit: the budget uses it when it is below the
   * configured one (never above without the operator's consent), and the plan follows.
   */
  private followUpstreamLimit(limit: UpstreamRateLimit): void {
    const configured = this.options.configuredRate;
    if (configured === undefined) return;
    const inForce = this.options.budget.applyUpstreamLimit({ ratePerMinute: limit.requestsPerMinute, burst: limit.burst });
    const key = `${limit.requestsPerMinute}/${limit.burst}`;
    if (key === this.upstreamLimitKey) return;
    this.upstreamLimitKey = key;
    this.planChanged();
    const figures = { upstreamPerMinute: limit.requestsPerMinute, upstreamBurst: limit.burst, configuredPerMinute: configured.requestsPerMinute, configuredBurst: configured.burst };
    if (inForce.ratePerMinute < configured.requestsPerMinute || inForce.burst < configured.burst) {
      this.options.log.warn(
        { ...figures, budgetPerMinute: inForce.ratePerMinute, budgetBurst: inForce.burst },
        'the account states a lower rate limit than configured: the request budget follows the account',
      );
    } else if ((limit.requestsPerMinute ?? 0) > configured.requestsPerMinute || (limit.burst ?? 0) > configured.burst) {
      this.options.log.info(figures, 'the account allows more requests than configured; raise rate_limit in the configuration to use them');
    }
  }

  private reconcileTargets(definition: SourceDefinition<unknown, unknown>, poller: TargetPoller<unknown>): void {
    const name = definition.name;
    const wanted = new Map<string, unknown>();
    const most = this.options.targetsPerSource ?? Infinity;
    for (const [key, target] of poller.targets()) {
      if (wanted.size >= most) break;
      if (poller.ready?.(target) ?? true) wanted.set(`${name}/${key}`, target);
    }
    const prefix = `${name}/`;
    let jobs = this.targetJobs.get(name);
    if (jobs === undefined) this.targetJobs.set(name, (jobs = new Map<string, unknown>()));
    for (const id of jobs.keys()) {
      if (!wanted.has(id)) {
        // Gone, filtered out, or nothing left to fetch (an empty metric catalogue): its
        // series leave /metrics now. A run still in flight is aborted and publishes nothing.
        jobs.delete(id);
        this.removeJob(id);
        poller.forget(id.slice(prefix.length));
      }
    }
    for (const [id, target] of wanted) {
      if (jobs.get(id) === target && this.scheduler.has(id)) continue;
      jobs.set(id, target);
      // Upsert refreshes the target object (online state, hostname) without moving the due time.
      const fields = this.running.find((r) => r.definition.name === name)?.fields;
      this.upsertJob(new TargetJob(id, name, definition.priority, poller, target, fields));
    }
  }

  private planChanged(): void {
    this.cachedPlan = undefined;
    // Jobs arrive in bursts (a host list adds a job per host): log the plan once it settles,
    // with one timer for the burst rather than one per job.
    this.planChangedAtMs = this.options.clock.now();
    if (!this.planLogTimer) this.armPlanLog(PLAN_LOG_SETTLE_MS);
  }

  private armPlanLog(delayMs: number): void {
    this.planLogTimer = this.options.clock.setTimeout(() => {
      this.planLogTimer = undefined;
      const quietMs = this.options.clock.now() - this.planChangedAtMs;
      if (quietMs < PLAN_LOG_SETTLE_MS) this.armPlanLog(PLAN_LOG_SETTLE_MS - quietMs);
      else this.logPlanOnce();
    }, delayMs);
  }

  /** Logs the plan when its shape changes (not on every host list poll). */
  private logPlanOnce(): void {
    const plan = this.plan();
    const key = `${plan.requestsPerCycle}/${plan.sources.map((s) => `${s.source}:${s.jobs}:${Math.round(s.effectiveCadenceSeconds)}`).join(',')}`;
    if (key === this.loggedPlanKey) return;
    this.loggedPlanKey = key;
    const figures = {
      requestsPerCycle: plan.requestsPerCycle,
      demandPerSecond: round(plan.demandPerSecond),
      budgetPerSecond: round(plan.supplyPerSecond),
      fullCycleSeconds: round(plan.fullCycleSeconds),
      stretchedRoundSeconds: round(plan.roundSeconds),
    };
    if (plan.pressure > 1) {
      this.options.log.warn(
        figures,
        `the configured cadences need ${round(plan.demandPerSecond)} requests/s but the budget allows ${round(plan.supplyPerSecond)}: stretching per-host and per-website cadences to ${round(plan.roundSeconds)} s`,
      );
    } else {
      this.options.log.info(figures, 'polling plan fits the request budget');
    }
  }

  private noteUpgradeUrl(url: string | undefined): void {
    this.upgradeUrl = url;
  }

  private recordOutcome(outcome: JobOutcome): void {
    const { job, startedMs, finishedMs, error } = outcome;
    this.runsEpoch++;
    const seconds = (finishedMs - startedMs) / 1000;
    this.attempted.add(job.id);
    const slash = job.id.indexOf('/');
    const target = slash === -1 ? undefined : job.id.slice(slash + 1);
    if (error === undefined) {
      this.lastRuns.set(job.id, { ok: true, reason: '', atMs: finishedMs, message: '', target });
      this.lastSuccessMs.set(job.id, finishedMs);
      this.options.metrics.observeRun(this.account, job.source, seconds, 'success', finishedMs);
      // A run that asked the upstream nothing (a paused website's) says nothing of the key.
      if (job.requestsPerRun() === 0) return;
      this.consecutiveFailures = 0;
      if (this.authFailure) this.options.log.info({ was: this.authFailure }, 'the API key is accepted again; polling resumes');
      this.authFailure = undefined;
      this.answered = true;
      return;
    }
    this.options.metrics.observeRun(this.account, job.source, seconds, 'error', finishedMs);
    const kind = error instanceof UpstreamError ? error.kind : 'internal';
    // A refused key fails every job at once (the budget fails them fast): one line per episode, not one per job.
    const repeatedAuthFailure = (kind === 'unauthorized' || kind === 'plan_required') && this.authFailure === kind;
    if (kind === 'unauthorized' || kind === 'plan_required') this.authFailure = kind;
    else if (kind !== 'not_found' && kind !== 'bad_request') this.consecutiveFailures++;
    if (error instanceof PlanRequiredError) this.noteUpgradeUrl(error.upgradeUrl);
    const entry: JobError = {
      source: job.source,
      target,
      atMs: finishedMs,
      kind,
      message: describeError(error),
    };
    this.lastRuns.set(job.id, { ok: false, reason: reasonOf(error), atMs: finishedMs, message: entry.message, target });
    this.errors.push(entry);
    if (this.errors.length > MAX_ERRORS_KEPT) this.errors.shift();
    if (repeatedAuthFailure) return;
    if (kind === 'unauthorized' || kind === 'plan_required') {
      this.options.log.warn(
        { kind, err: { message: entry.message }, ...(kind === 'plan_required' && { upgradeUrl: this.upgradeUrl }) },
        kind === 'plan_required'
          ? 'the account plan does not include API access (403 plan_required); upgrade at the URL given. Polling pauses; one probe every 10 minutes, no retry loop'
          : 'the API key is refused (401/403); check api_key_env/api_key_file. Polling pauses; one probe every 10 minutes, no retry loop',
      );
      return;
    }
    this.jobFailures.note(`${job.source}\u0000${kind}`, 1, { source: job.source, target: entry.target, kind, message: entry.message });
  }

  /**
   * The first failed job of a source and kind as it was (`polling job failed`), then one line a
   * minute with the count and the latest failure, and one once they stop: 900 hosts of an
   * unreachable upstream wrote 900 lines a cycle.
   */
  private logJobFailures(line: EpisodeLine<JobFailure>): void {
    const { source, target, kind, message } = line.detail;
    const log = line.phase === 'end' ? this.options.log.info.bind(this.options.log) : kind === 'internal' ? this.options.log.error.bind(this.options.log) : this.options.log.warn.bind(this.options.log);
    if (line.phase === 'start') {
      log({ source, target, kind, err: { message } }, 'polling job failed (more failures of this source and kind are summed up once a minute)');
    } else if (line.phase === 'ongoing') {
      log({ source, kind, failures: line.count, failuresTotal: line.total, durationSeconds: line.durationSeconds, target, err: { message } }, `polling jobs of source ${source} still fail (${kind}): ${line.count} in the last minute, the latest shown`);
    } else {
      log({ source, kind, failuresTotal: line.total, durationSeconds: line.durationSeconds }, `polling jobs of source ${source} no longer fail (${kind})`);
    }
  }
}

interface JobFailure {
  readonly source: string;
  readonly target: string | undefined;
  readonly kind: string;
  readonly message: string;
}

/**
 * A per-target source's job for one target. A class, not an object of four closures: at a
 * million series 26,000 jobs made 130,000 closures and contexts that every full collection
 * traced.
 */
class TargetJob implements Job {
  constructor(
    readonly id: string,
    readonly source: string,
    readonly priority: Priority,
    private readonly poller: TargetPoller<unknown>,
    private readonly target: unknown,
    /** What the source's answers said, for the pages a request of it takes. */
    private readonly fields: FieldHealth | undefined,
  ) {}

  cadenceMs(): number {
    return this.poller.cadence(this.target).everyMs;
  }

  nextDueMs(startedMs: number): number {
    return nextDue(this.poller.cadence(this.target), startedMs);
  }

  requestsPerRun(): number {
    const requests = this.poller.requestsPerRun(this.target);
    return this.fields === undefined ? requests : Math.round(requests * this.fields.requestsPerAnswer());
  }

  run(signal: AbortSignal): Promise<void> {
    return this.poller.poll(this.target, signal);
  }
}

function nextDue(cadence: { readonly everyMs: number; nextDueMs?(startedMs: number): number }, startedMs: number): number {
  return cadence.nextDueMs?.(startedMs) ?? startedMs + Math.max(1, cadence.everyMs);
}

function round(n: number): number {
  return Number.isFinite(n) ? Math.round(n * 100) / 100 : n;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : JSON.stringify(error) ?? 'unknown error';
}
