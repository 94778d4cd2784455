import type { CronSchedule } from '../../config/cron.js';
import type { Cadence } from '../source.js';

export interface LookupTiming {
  readonly schedule: CronSchedule;
  /** The schedule's shortest gap: what the plan counts a run as. */
  readonly shortestGapMs: number;
  /**
   * The shortest time between two asks of one key outside the schedule's rhythm: the free
   * endpoint's 2-hour cache (asking sooner only re-reads it), 0 for the marketplace or when
   * the operator allowed faster polling.
   */
  readonly minGapMs: number;
}

/**
 * When a release key is looked up. Its first lookup happens as soon as it is known (at start,
 * or when a component first needs its line), outside the schedule; after that it runs on the
 * schedule, but never sooner than `minGapMs` after an ask outside it: the free endpoint would
 * only answer from its cache. A key asked by the previous run of the schedule is always due
 * at the next one: configuration validation keeps free-mode runs at least the cache apart.
 *
 * `dueTimes` holds, per key, the due time given after its last run (so a key with an entry
 * last ran on the schedule); the scheduler asks `nextDueMs` once after every run.
 */
export function lookupCadence(timing: LookupTiming, dueTimes: Map<string, number>, key: string, askedAtMs: () => number | undefined): Cadence {
  return {
    everyMs: timing.shortestGapMs,
    nextDueMs(startedMs) {
      const scheduled = dueTimes.has(key);
      const after = scheduled ? startedMs : Math.max(startedMs, (askedAtMs() ?? startedMs) + timing.minGapMs - 1);
      const next = timing.schedule.nextFireMs(after) ?? Number.MAX_SAFE_INTEGER;
      dueTimes.set(key, next);
      return next;
    },
  };
}
