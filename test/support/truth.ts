import type { RunningSimulator } from '../../simulator/index.js';
import type { DeltaTruth } from '../../simulator/monitoring/late-data.js';
import type { SimAccount } from '../../simulator/monitoring/world-types.js';
import type { UpstreamLog, UpstreamRequest } from './upstream-log.js';

/**
 * What the exporter's counters must show at a moment, computed from the simulator alone:
 * its ground truth (`sim.truth`, the world's checks and alert events) and the times the
 * exporter's requests reached it (`recordUpstreamRequests`). Nothing here calls exporter
 * code, so a counting mistake in the exporter cannot be repeated here.
 */

export const MINUTE_MS = 60_000;

export interface DeltaCounterExpectation {
  /** First minute the counter covers: the newest minute due at the exporter's first read. */
  readonly fromMs: number;
  /** End (exclusive) of the minutes covered at the last read before the moment. */
  readonly toMs: number;
  readonly lastReadMs: number;
  /** The simulator's truth over [fromMs, toMs) as of the last read: what the counter must be. */
  readonly truth: DeltaTruth;
}

const NO_MINUTES: DeltaTruth = { sum: 0, points: 0, missing: 0, pending: 0, completeAtMs: null };

/**
 * A delta metric's counter at `atMs`. A minute is due once it has ended and the ingest delay
 * has passed (docs/metrics.md); the counter starts at 0 with the minutes due at its first read
 * and from then on holds every minute up to the newest due one whose value the API had shown
 * by the last read. So it equals the truth over those minutes as of that read, provided no
 * point arrives later than the late-data horizon allows (the caller's reasoning).
 */
export function expectedDeltaCounter(
  sim: RunningSimulator,
  log: UpstreamLog,
  query: { key: string; hostUuid: string; metric: string; ingestDelayMs: number },
  atMs: number,
): DeltaCounterExpectation | undefined {
  const reads = log.times((r) => r.atMs <= atMs && r.key === query.key && r.path === `/hosts/${query.hostUuid}/metrics/series` && names(r).includes(query.metric));
  const first = reads[0];
  const last = reads.at(-1);
  if (first === undefined || last === undefined) return undefined;
  const dueUntil = (readMs: number) => Math.floor((readMs - query.ingestDelayMs) / MINUTE_MS) * MINUTE_MS;
  const fromMs = dueUntil(first);
  const toMs = dueUntil(last);
  const truth = toMs > fromMs ? sim.truth({ key: query.key, hostUuid: query.hostUuid, metric: query.metric, fromMs, toMs, asOfMs: last }) : NO_MINUTES;
  return { fromMs, toMs, lastReadMs: last, truth };
}

function names(request: UpstreamRequest): string[] {
  return (request.query.get('names') ?? '').split(',');
}

export interface ChecksExpectation {
  readonly success: number;
  readonly failure: number;
  readonly firstReadMs: number;
  readonly lastReadMs: number;
}

/**
 * A website's check counters at `atMs`: the first read only finds where to start, so they
 * hold every check the simulator made after it, up to the last read before the moment.
 */
export function expectedChecks(account: SimAccount, log: UpstreamLog, websiteId: number, atMs: number): ChecksExpectation | undefined {
  const reads = log.times((r) => r.atMs <= atMs && r.key === account.key && r.path === `/websites/${websiteId}/checks`);
  const first = reads[0];
  const last = reads.at(-1);
  if (first === undefined || last === undefined) return undefined;
  const checks = last > first ? account.checks(websiteId, first + 1, last) : [];
  const success = checks.filter((c) => c.success).length;
  return { success, failure: checks.length - success, firstReadMs: first, lastReadMs: last };
}

/** Largest page of /alerts/recent: more than any test's run holds. */
const ALL_RECENT = 500;

/**
 * The alert-event counters of an account at `atMs`, by `<type> <source id>`: the events that
 * occurred after the first read of /alerts/recent (which only marks where to start) and by
 * the last read before the moment.
 */
export function expectedAlertEvents(account: SimAccount, log: UpstreamLog, atMs: number): Map<string, number> | undefined {
  const reads = log.times((r) => r.atMs <= atMs && r.key === account.key && r.path === '/alerts/recent');
  const first = reads[0];
  const last = reads.at(-1);
  if (first === undefined || last === undefined) return undefined;
  const events = account.recentAlerts(last, ALL_RECENT);
  if (events.length === ALL_RECENT) throw new Error('more alert events than one page holds: shorten the run');
  const counts = new Map<string, number>();
  for (const event of events) {
    if (Date.parse(event.occurred_at) <= first) continue;
    const key = `${event.type} ${event.source_id}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}
