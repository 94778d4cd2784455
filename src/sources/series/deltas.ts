/**
 * Per-minute deltas into running totals, each minute counted exactly once, including
 * minutes that arrive late. Pure: previous state and the poll's points in, next state out.
 *
 * Each point covers [t, t + interval). A point is due once t + interval + ingestDelay <= now.
 * The state keeps a cursor (`coveredUntilMs`, the end of the newest due interval accounted
 * for) and, for due points that were still null, a bitmap of open holes behind the cursor:
 * bit k stands for the point ending at `coveredUntilMs - k × interval`. A later poll whose
 * window covers a hole and finds a value there adds it and clears the bit, so a point is
 * added once whether it arrives on time or late; a point ending at or before the cursor
 * that is not a hole is never added again, so overlapping polls are harmless. A hole older
 * than the late-data horizon is closed and counted as missing (`null`): a point that never
 * arrives is never counted. One bigint per metric holds the bitmap (120 bits for the
 * default 2 h horizon at 60 s), so the state does not grow with the number of holes.
 *
 * Because the cursor is a time and not a point index, a change of interval cannot count a
 * minute twice: a coarser point that starts before the cursor and ends after it is not
 * added (`partial_overlap`), intervals between the cursor and the first point of a
 * response are lost (`window_gap`), and negative or non-finite deltas are skipped
 * (`invalid`): a counter never decreases. Holes on another grid than the response's are
 * closed as missing.
 */

export type MissingReason = 'null' | 'window_gap' | 'partial_overlap' | 'invalid';
export const MISSING_REASONS: readonly MissingReason[] = ['null', 'window_gap', 'partial_overlap', 'invalid'];

export interface DeltaState {
  readonly total: number;
  /** Timers only: running sum of mean × count; 0 otherwise. */
  readonly sum: number;
  readonly coveredUntilMs: number;
  /**
   * The first cursor: the counter holds every minute from here on (it was 0 here). The
   * backfill ends this counter's history exactly here. -Infinity: not known (restored from a
   * state file written before it was kept).
   */
  readonly countingSinceMs: number;
  /** Interval of the points the cursor and the holes are on. */
  readonly intervalMs: number;
  /** Bit k: the point ending at `coveredUntilMs - k × intervalMs` was null when due and may still arrive. */
  readonly holes: bigint;
  /** When the name was last in a response, for the grace period. */
  readonly lastSeenMs: number;
}

/** One point in base units: `value` is what it adds to the total (null: no data yet), `sum` to the timer's sum. */
export interface DeltaPoint {
  readonly t: number;
  readonly value: number | null;
  readonly sum: number;
}

export interface DeltaClock {
  readonly nowMs: number;
  /** Points ending after this are not due yet (now minus the ingest delay). */
  readonly dueUntilMs: number;
  /** Holes ending before this (now minus the late-data horizon) are given up. */
  readonly giveUpBeforeMs: number;
}

/** Counts of one poll, added to by `advanceDelta`. */
export interface DeltaTally {
  readonly missing: Record<MissingReason, number>;
  /** Points added after having been a hole. */
  late: number;
}

export function popcount(bits: bigint): number {
  let n = 0;
  for (let x = bits; x !== 0n; x &= x - 1n) n += 1;
  return n;
}

/** Start of the oldest open hole, or the cursor when there is none. */
export function oldestOpenMs(state: DeltaState): number {
  return openSinceMs(state.coveredUntilMs, state.holes, state.intervalMs);
}

/** `oldestOpenMs` of a state's parts (a packed table reads them without making the state). */
export function openSinceMs(coveredUntilMs: number, holes: bigint, intervalMs: number): number {
  return holes === 0n ? coveredUntilMs : coveredUntilMs - holes.toString(2).length * intervalMs;
}

function addable(total: number, sum: number, point: DeltaPoint & { readonly value: number }): boolean {
  return point.value >= 0 && point.sum >= 0 && Number.isFinite(total + point.value) && Number.isFinite(sum + point.sum);
}

/**
 * The next state of one delta series after a poll, or undefined when it has never had a
 * point (there is no grid to start on yet). First sight starts the total at 0 with the
 * cursor at the end of the newest due interval, instead of adding the whole window: the
 * start value would otherwise depend on the window length and, after an exporter
 * restart, count the window a second time in increase().
 */
export function advanceDelta(
  points: readonly DeltaPoint[],
  intervalMs: number,
  previous: DeltaState | undefined,
  clock: DeltaClock,
  tally: DeltaTally,
): DeltaState | undefined {
  if (!previous) {
    const anchor = points[0];
    if (!anchor) return undefined;
    const coveredUntilMs = anchor.t + Math.floor((clock.dueUntilMs - anchor.t) / intervalMs) * intervalMs;
    return { total: 0, sum: 0, coveredUntilMs, countingSinceMs: coveredUntilMs, intervalMs, holes: 0n, lastSeenMs: clock.nowMs };
  }
  let { total, sum, holes } = previous;
  let covered = previous.coveredUntilMs;
  // Giving the holes up is written out where it happens: a closure here would be made on every call of the hottest function of a poll.
  if (holes !== 0n && previous.intervalMs !== intervalMs) {
    tally.missing.null += popcount(holes);
    holes = 0n;
  }

  for (const p of points) {
    const end = p.t + intervalMs;
    if (end <= covered) {
      if (holes === 0n || p.value === null) continue;
      const k = (covered - end) / intervalMs;
      if (!Number.isInteger(k)) continue;
      const bit = 1n << BigInt(k);
      if ((holes & bit) === 0n) continue;
      holes &= ~bit;
      if (addable(total, sum, p as DeltaPoint & { value: number })) {
        total += p.value;
        sum += p.sum;
        tally.late += 1;
      } else tally.missing.invalid += 1;
      continue;
    }
    if (end > clock.dueUntilMs) break;
    if (p.t < covered) {
      tally.missing.partial_overlap += 1;
      tally.missing.null += popcount(holes);
      holes = 0n;
      covered = end;
      continue;
    }
    if (p.t > covered) {
      const skipped = (p.t - covered) / intervalMs;
      tally.missing.window_gap += Math.ceil(skipped);
      if (Number.isInteger(skipped)) holes <<= BigInt(skipped);
      else {
        tally.missing.null += popcount(holes);
        holes = 0n;
      }
    }
    holes <<= 1n;
    if (p.value === null) holes |= 1n;
    else if (addable(total, sum, p as DeltaPoint & { value: number })) {
      total += p.value;
      sum += p.sum;
    } else tally.missing.invalid += 1;
    covered = end;
  }

  if (holes !== 0n) {
    // Keep bits k whose point ends at or after giveUpBeforeMs: covered - k × interval >= giveUpBeforeMs.
    const kept = covered < clock.giveUpBeforeMs ? 0 : Math.floor((covered - clock.giveUpBeforeMs) / intervalMs) + 1;
    const mask = (1n << BigInt(kept)) - 1n;
    const closed = holes & ~mask;
    if (closed !== 0n) {
      tally.missing.null += popcount(closed);
      holes &= mask;
    }
  }
  return { total, sum, coveredUntilMs: covered, countingSinceMs: previous.countingSinceMs, intervalMs, holes, lastSeenMs: clock.nowMs };
}
