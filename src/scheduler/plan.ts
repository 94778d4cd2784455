import type { Priority } from '../budget/types.js';

export interface PlannedJob {
  readonly source: string;
  readonly priority: Priority;
  readonly cadenceMs: number;
  readonly requestsPerRun: number;
}

export interface SourcePlan {
  readonly source: string;
  readonly jobs: number;
  readonly requestsPerRun: number;
  readonly configuredCadenceSeconds: number;
  readonly effectiveCadenceSeconds: number;
}

export interface PlanFigures {
  /** Requests to run every job once. */
  readonly requestsPerCycle: number;
  /** Requests per second the configured cadences ask for. */
  readonly demandPerSecond: number;
  /** Requests per second the budget allows (after headroom). */
  readonly supplyPerSecond: number;
  /** How long one run of every job takes at the budget's rate: the best possible staleness. */
  readonly fullCycleSeconds: number;
  /**
   * When the budget cannot keep up: the round time every stretched job runs at (seconds);
   * 0 when no cadence is stretched.
   */
  readonly roundSeconds: number;
  /** Demand over supply; above 1 the cadences are stretched. */
  readonly pressure: number;
  readonly sources: readonly SourcePlan[];
}

/**
 * What the scheduler will achieve with a given budget, as documented in
 * docs/architecture.md: high-priority jobs keep their cadence (they are few and cheap);
 * the rest share what is left of the budget by water-filling. A job whose cadence is
 * longer than the round time keeps it; every other job runs once per round, where the
 * round time T solves  sum_j r_j / max(c_j, T) = remaining supply. This is what the
 * scheduler's oldest-due-first dispatch converges to.
 */
export function computePlan(jobs: readonly PlannedJob[], supplyPerSecond: number): PlanFigures {
  const requestsPerCycle = jobs.reduce((sum, j) => sum + j.requestsPerRun, 0);
  const demandPerSecond = jobs.reduce((sum, j) => sum + j.requestsPerRun / seconds(j.cadenceMs), 0);
  const fixedDemand = jobs
    .filter((j) => j.priority === 'high')
    .reduce((sum, j) => sum + j.requestsPerRun / seconds(j.cadenceMs), 0);
  const flexible = jobs.filter((j) => j.priority !== 'high' && j.requestsPerRun > 0);
  const remaining = Math.max(supplyPerSecond - fixedDemand, supplyPerSecond * 0.05);

  const demandAt = (round: number): number =>
    flexible.reduce((sum, j) => sum + j.requestsPerRun / Math.max(seconds(j.cadenceMs), round), 0);

  let round = 0;
  if (flexible.length > 0 && demandAt(0) > remaining) {
    let lo = 0;
    let hi = Math.max(1, ...flexible.map((j) => seconds(j.cadenceMs)));
    while (demandAt(hi) > remaining) hi *= 2;
    for (let i = 0; i < 60; i++) {
      const mid = (lo + hi) / 2;
      if (demandAt(mid) > remaining) lo = mid;
      else hi = mid;
    }
    round = hi;
  }

  const bySource = new Map<string, { jobs: number; requests: number; cadence: number; priority: Priority }>();
  for (const job of jobs) {
    const agg = bySource.get(job.source) ?? { jobs: 0, requests: 0, cadence: job.cadenceMs, priority: job.priority };
    agg.jobs++;
    agg.requests += job.requestsPerRun;
    agg.cadence = Math.min(agg.cadence, job.cadenceMs);
    bySource.set(job.source, agg);
  }
  const sources = [...bySource.entries()]
    .map(([source, agg]) => {
      const configured = seconds(agg.cadence);
      const effective = agg.priority === 'high' ? configured : Math.max(configured, round);
      return {
        source,
        jobs: agg.jobs,
        requestsPerRun: agg.requests,
        configuredCadenceSeconds: configured,
        effectiveCadenceSeconds: effective,
      };
    })
    .sort((a, b) => a.source.localeCompare(b.source));

  return {
    requestsPerCycle,
    demandPerSecond,
    supplyPerSecond,
    fullCycleSeconds: supplyPerSecond > 0 ? requestsPerCycle / supplyPerSecond : Infinity,
    roundSeconds: round,
    pressure: supplyPerSecond > 0 ? demandPerSecond / supplyPerSecond : Infinity,
    sources,
  };
}

function seconds(ms: number): number {
  return Math.max(ms, 1) / 1000;
}
