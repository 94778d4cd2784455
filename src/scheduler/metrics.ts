import { Counter, Gauge, Histogram, type LabelValues, type Registry } from 'prom-client';
import { TimeSlices } from '../lib/turns.js';
import type { PlanFigures } from './plan.js';
import { ACCOUNT_DOWN_REASONS, SOURCE_DOWN_REASONS, type AccountUp, type SourceHealth } from './source-health.js';

/** A view of one unit's scheduling (an account, or the release lookups) that the self-metrics read at scrape time. */
export interface SchedulingView {
  /** The account label (`(releases)` for the release lookups). */
  readonly account: string;
  sourceHealth(): readonly SourceHealth[];
  plan(): PlanFigures;
  /** Per source: seconds since the least recently refreshed target last succeeded. */
  staleness(nowMs: number): ReadonlyMap<string, number>;
  /** Whether the upstream answers the unit's key; undefined for a unit without `monapi_up` (the release lookups). */
  up(): AccountUp | undefined;
  lagSeconds(): number;
  /** Every declared field of every source that has had an answer, and whether no answer carries it. */
  fieldStates(): readonly { readonly source: string; readonly field: string; readonly missing: boolean }[];
  /** Per source whose answers were lists: pages read and lists known to be short. */
  listStates(): readonly { readonly source: string; readonly state: { readonly pages: number; readonly incomplete: number; readonly report: { readonly length: number; readonly announced?: number } } }[];
}

/** How long a gauge reads views before it lets the event loop serve what waits. */
export const VIEW_SLICE_MS = 5;

/** Where a view's values go while a gauge is collected. */
interface GaugeValues {
  set(labels: LabelValues<string>, value: number): void;
}

export interface SchedulerMetrics {
  observeRun(account: string, source: string, seconds: number, outcome: 'success' | 'error', finishedMs: number): void;
  nameCollision(account: string): void;
  track(view: SchedulingView): void;
  /** Stops exposing a view (an account or the release lookups removed by a reload). */
  untrack(view: SchedulingView): void;
}

/**
 * Self-metrics of the scheduler: per job kind (source) freshness, duration and errors;
 * the plan figures that say why data is as old as it is; and `monapi_up` per account.
 * A state is never a label whose value changes with it: `monapi_up` and `monapi_source_up`
 * have one series per account and source whatever happens, and the reason is a family of
 * its own with a series for every known reason, 1 for the current one (kube-state-metrics'
 * `kube_pod_status_phase`), so that a failure changes values, never the set of series.
 * Long because it is one declaration per family, each read at scrape time from the views;
 * kept together so the names, help texts and labels can be read as one table.
 */
export function createSchedulerMetrics(registry: Registry, clock: { now(): number }): SchedulerMetrics {
  const views: SchedulingView[] = [];
  const runs = new Counter({
    name: 'monapi_job_runs_total',
    help: 'Polling job runs by account, source and outcome (success or error).',
    labelNames: ['account', 'source', 'outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'monapi_job_duration_seconds',
    help: 'Duration of polling job runs, including time spent waiting for the request budget.',
    labelNames: ['account', 'source'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const lastSuccess = new Gauge({
    name: 'monapi_job_last_success_timestamp_seconds',
    help: 'When a job of this source last succeeded for any target (Unix time).',
    labelNames: ['account', 'source'],
    registers: [registry],
  });
  const collisions = new Counter({
    name: 'monapi_series_name_collisions_total',
    help: 'Agent metric names dropped because they sanitise to a metric name another agent metric already has (each host and family once).',
    labelNames: ['account'],
    registers: [registry],
  });

  /**
   * A gauge filled at scrape time from every view, the event loop served every few ms between
   * two views: at a million series an account has thousands of jobs, and reading every
   * account's in one task (staleness, source health) held the loop for 30-80 ms a gauge. The
   * values are gathered first and set at once, so a collection that overlaps another never
   * sees a half-filled gauge.
   */
  const viewGauge = (name: string, help: string, labelNames: string[], read: (g: GaugeValues, v: SchedulingView) => void) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect(this: Gauge) {
        const gathered: [LabelValues<string>, number][] = [];
        const values: GaugeValues = { set: (labels, value) => gathered.push([labels, value]) };
        const slices = new TimeSlices(VIEW_SLICE_MS);
        for (const view of [...views]) {
          read(values, view);
          await slices.afterPiece();
        }
        this.reset();
        for (const [labels, value] of gathered) this.set(labels, value);
      },
    });

  viewGauge(
    'monapi_job_staleness_seconds',
    'Age of the oldest data of a source: seconds since its least recently refreshed target last succeeded (targets never refreshed count from when they appeared).',
    ['account', 'source'],
    (g, v) => {
      for (const [source, seconds] of v.staleness(clock.now())) g.set({ account: v.account, source }, seconds);
    },
  );
  viewGauge('monapi_scheduler_lag_seconds', 'How far behind its cadence the most overdue polling job is.', ['account'], (g, v) =>
    g.set({ account: v.account }, v.lagSeconds()),
  );
  viewGauge(
    'monapi_plan_requests_per_cycle',
    'Requests needed to run every polling job of the account once; for account="(releases)", the requests of one run of the release schedule.',
    ['account'],
    (g, v) => g.set({ account: v.account }, v.plan().requestsPerCycle),
  );
  viewGauge(
    'monapi_plan_demand_requests_per_second',
    'Requests per second the configured cadences ask for.',
    ['account'],
    (g, v) => g.set({ account: v.account }, v.plan().demandPerSecond),
  );
  viewGauge(
    'monapi_plan_budget_requests_per_second',
    'Requests per second the request budget allows (the rate limit minus headroom).',
    ['account'],
    (g, v) => g.set({ account: v.account }, v.plan().supplyPerSecond),
  );
  viewGauge(
    'monapi_plan_full_cycle_seconds',
    'Time one run of every job takes at the budget rate: the best possible staleness.',
    ['account'],
    (g, v) => g.set({ account: v.account }, v.plan().fullCycleSeconds),
  );
  viewGauge(
    'monapi_plan_cadence_seconds',
    'Cadence of a source: configured, and effective after stretching to fit the request budget.',
    ['account', 'source', 'cadence'],
    (g, v) => {
      for (const s of v.plan().sources) {
        g.set({ account: v.account, source: s.source, cadence: 'configured' }, s.configuredCadenceSeconds);
        g.set({ account: v.account, source: s.source, cadence: 'effective' }, s.effectiveCadenceSeconds);
      }
    },
  );
  viewGauge(
    'monapi_plan_jobs',
    'Polling jobs per source (one per target); for account="(releases)", lookups per run (one per project and version line).',
    ['account', 'source'],
    (g, v) => {
      for (const s of v.plan().sources) g.set({ account: v.account, source: s.source }, s.jobs);
    },
  );
  viewGauge(
    'monapi_up',
    'Whether the account answers the exporter: 1, or 0 before its first answer, after a 401 or 403 plan_required, or after repeated failures; monapi_up_reason says which.',
    ['account'],
    (g, v) => {
      const state = v.up();
      if (state) g.set({ account: v.account }, state.up ? 1 : 0);
    },
  );
  viewGauge(
    'monapi_up_reason',
    `Why the account does not answer: 1 for the reason of monapi_up 0, 0 for the others, all 0 while it answers. Reasons: ${ACCOUNT_DOWN_REASONS.join(', ')} (docs/troubleshooting.md).`,
    ['account', 'reason'],
    (g, v) => {
      const state = v.up();
      if (state) for (const reason of ACCOUNT_DOWN_REASONS) g.set({ account: v.account, reason }, state.reason === reason ? 1 : 0);
    },
  );

  const healthGauge = (name: string, help: string, labelNames: string[], read: (g: GaugeValues, account: string, h: SourceHealth) => void) =>
    viewGauge(name, help, labelNames, (g, view) => {
      for (const health of view.sourceHealth()) read(g, view.account, health);
    });
  healthGauge(
    'monapi_source_up',
    'Whether a source works: 1 when the last run of every job of it succeeded, 0 while any fails or before its first run; monapi_source_up_reason says why, /status names the failing targets.',
    ['account', 'source'],
    (g, account, h) => g.set({ account, source: h.source }, h.up ? 1 : 0),
  );
  healthGauge(
    'monapi_source_up_reason',
    `Why a source does not work: 1 for the reason of monapi_source_up 0 (the one most failing jobs share), 0 for the others, all 0 while it works. Reasons: ${SOURCE_DOWN_REASONS.join(', ')}; docs/troubleshooting.md says what to do.`,
    ['account', 'source', 'reason'],
    (g, account, h) => {
      for (const reason of SOURCE_DOWN_REASONS) g.set({ account, source: h.source, reason }, h.reason === reason ? 1 : 0);
    },
  );
  healthGauge(
    'monapi_source_failing_targets',
    'Jobs (hosts, websites, projects, or 1 for an account-wide source) of a source whose last run failed.',
    ['account', 'source'],
    (g, account, h) => g.set({ account, source: h.source }, h.failing),
  );

  viewGauge(
    'monapi_decode_field_missing',
    'Whether a field a source reads is in none of its latest answers (1; 0 once an answer carries it): the upstream sends another shape. /status lists where each field was found; set fields: in the configuration to name its path (docs/troubleshooting.md).',
    ['account', 'source', 'field'],
    (g, v) => {
      for (const state of v.fieldStates()) g.set({ account: v.account, source: state.source, field: state.field }, state.missing ? 1 : 0);
    },
  );

  viewGauge(
    'monapi_list_incomplete',
    'Lists of a source known to be short in its latest answers: the upstream announced more (a next page, has_more, a total) than could be read (the page cap, a failed page, a link to another origin). What was read is exported; /status and monapi-exporter probe say why. 0 when every list was read to its end.',
    ['account', 'source'],
    (g, v) => {
      for (const { source, state } of v.listStates()) g.set({ account: v.account, source }, state.incomplete);
    },
  );
  viewGauge(
    'monapi_list_pages',
    'Pages the latest answers of a source that reads lists took, all together: each page is one request of the budget.',
    ['account', 'source'],
    (g, v) => {
      for (const { source, state } of v.listStates()) g.set({ account: v.account, source }, state.pages);
    },
  );

  return {
    observeRun(account, source, seconds, outcome, finishedMs) {
      runs.inc({ account, source, outcome });
      duration.observe({ account, source }, seconds);
      if (outcome === 'success') lastSuccess.set({ account, source }, finishedMs / 1000);
    },
    nameCollision(account) {
      collisions.inc({ account });
    },
    track(view) {
      views.push(view);
    },
    untrack(view) {
      const index = views.indexOf(view);
      if (index >= 0) views.splice(index, 1);
    },
  };
}
