import type { AgentMetricKind as MetricKind } from '../catalogue.js';
import { MAX_TRUTH_MINUTES, type DeltaTruth, type TruthQuery } from '../late-data.js';
import { MINUTE_MS } from './agents.js';
import type { HostProfile } from './hosts.js';
import { blockFor } from './minutes.js';
import type { Signal } from './signals.js';

/**
 * Turns per-minute values into what the series endpoint reports for a bucket.
 *
 * A bucket [start, start + interval) covers the minutes that begin inside it. Each minute is
 * readable or not at `nowMs` (ingest delay, agent outages and their 2-hour buffer, lost
 * reports, retention, host creation). A bucket reports what is readable:
 * - delta: the sum of the readable minutes, so the one-minute buckets of an hour add up to
 *   the hour's bucket once all its minutes are in;
 * - gauge: the mean of the readable minutes, taken over at most GAUGE_SAMPLES of them,
 *   evenly spread, when the bucket is large;
 * - null when no minute is readable, so the newest bucket stays null until data arrives.
 */

const GAUGE_SAMPLES = 6;

export interface SeriesQuery {
  readonly profile: HostProfile;
  readonly kind: MetricKind;
  readonly signal: Signal;
  readonly retentionMs: number;
}

function firstReadableMinute(q: SeriesQuery, nowMs: number): number {
  return Math.max(q.profile.firstMinute, Math.ceil((nowMs - q.retentionMs) / MINUTE_MS));
}

/** The minute's value if it is readable at `nowMs`, else NaN. */
function readableValue(q: SeriesQuery, minute: number, nowMs: number): number {
  const b = blockFor(q.profile, minute);
  const i = minute - b.first;
  return (b.readableFrom[i] ?? Infinity) <= nowMs ? q.signal(q.profile, b, i) : NaN;
}

export function bucketValue(q: SeriesQuery, bucketStartMs: number, intervalS: number, nowMs: number): number | null {
  const from = Math.ceil(bucketStartMs / MINUTE_MS);
  const to = Math.ceil((bucketStartMs + intervalS * 1000) / MINUTE_MS);
  const lo = Math.max(from, firstReadableMinute(q, nowMs));
  if (lo >= to) return null;

  if (q.kind === 'delta') {
    let sum = 0;
    let seen = false;
    for (let m = lo; m < to; m++) {
      const v = readableValue(q, m, nowMs);
      if (Number.isNaN(v)) continue;
      sum += v;
      seen = true;
    }
    return seen ? sum : null;
  }

  const span = to - lo;
  if (span > GAUGE_SAMPLES) {
    const mean = gaugeMean(q, nowMs, lo, span / GAUGE_SAMPLES, GAUGE_SAMPLES);
    if (mean !== null) return mean;
  }
  // Small buckets, and large ones whose sampled minutes all happen to be unreadable.
  return gaugeMean(q, nowMs, lo, 1, span);
}

/** Mean over `count` readable minutes lo + floor((k + 0.5)·stride), k = 0..count-1. */
function gaugeMean(q: SeriesQuery, nowMs: number, lo: number, stride: number, count: number): number | null {
  let sum = 0;
  let n = 0;
  for (let k = 0; k < count; k++) {
    const v = readableValue(q, lo + Math.floor((k + 0.5) * stride), nowMs);
    if (Number.isNaN(v)) continue;
    sum += v;
    n++;
  }
  if (n === 0) return null;
  // Keep integers integral (mem bytes, status) and trim float noise from means.
  return Math.round((sum / n) * 1e6) / 1e6;
}

/** The newest readable minute at `nowMs` and its value. */
export function latestValue(q: SeriesQuery, nowMs: number): { timestampMs: number | null; value: number | null } {
  const oldest = firstReadableMinute(q, nowMs);
  for (let m = Math.floor(nowMs / MINUTE_MS); m >= oldest; m--) {
    const value = readableValue(q, m, nowMs);
    if (!Number.isNaN(value)) return { timestampMs: m * MINUTE_MS, value };
  }
  return { timestampMs: null, value: null };
}

/**
 * The sum of the minutes starting in [fromMs, toMs) whose report ever arrives (or has arrived
 * by `asOfMs`), and when the last of them does, whatever the time now (late-data.ts). Minutes
 * never arriving are counted apart. Retention is not applied: this is what the agent
 * reports, not what is still kept.
 */
export function minuteTruth(p: HostProfile, signal: Signal, query: TruthQuery): DeltaTruth {
  if (!Number.isFinite(query.fromMs) || !Number.isFinite(query.toMs) || query.toMs <= query.fromMs) {
    throw new RangeError(`truth: the range must have from < to, got [${query.fromMs}, ${query.toMs})`);
  }
  const first = Math.ceil(query.fromMs / MINUTE_MS);
  const end = Math.ceil(query.toMs / MINUTE_MS);
  if (end - first > MAX_TRUTH_MINUTES) throw new RangeError(`truth: at most ${MAX_TRUTH_MINUTES} minutes per query, got ${end - first}`);
  let sum = 0;
  let points = 0;
  let missing = 0;
  let pending = 0;
  let completeAtMs: number | null = null;
  const minutes: { minuteMs: number; value: number; arrivesAtMs: number | null }[] = [];
  for (let m = first; m < end; m++) {
    const b = blockFor(p, m);
    const i = m - b.first;
    const arrives = b.readableFrom[i] ?? Infinity;
    const value = signal(p, b, i);
    if (query.detail) minutes.push({ minuteMs: m * MINUTE_MS, value, arrivesAtMs: Number.isFinite(arrives) ? arrives : null });
    if (!Number.isFinite(arrives)) {
      missing++;
      continue;
    }
    completeAtMs = Math.max(completeAtMs ?? arrives, arrives);
    if (query.asOfMs !== undefined && arrives > query.asOfMs) {
      pending++;
      continue;
    }
    sum += value;
    points++;
  }
  return { sum, points, missing, pending, completeAtMs, ...(query.detail ? { minutes } : {}) };
}
