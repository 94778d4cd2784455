/**
 * Late data. The agent samples every 20 s, sends once a minute and buffers about 2 hours
 * when it cannot send, so a minute's point is often still null when first read and filled
 * in later (upstream facts). The simulator always models the ordinary ingest delay, agent
 * outages and their 2-hour buffer; the late-data mode adds, per (host, minute):
 *
 * - a share of minutes that arrive late, each by its own lateness, uniform from one minute
 *   up to `maxLatenessMinutes` (at most 2 hours) after it would have arrived;
 * - a share of minutes that never arrive (permanent gaps).
 *
 * All of a minute's metrics arrive together, as the agent sends them in one report. Every
 * decision is a hash of (host, minute), so the same seed and settings give the same
 * arrivals in any order of requests.
 */

export interface LateDataSettings {
  /** Share of minutes (0-1) that arrive late. */
  readonly lateShare: number;
  /** Longest lateness in whole minutes, 1-120. */
  readonly maxLatenessMinutes: number;
  /** Share of minutes (0-1) that never arrive. `lateShare + neverShare` is at most 1. */
  readonly neverShare: number;
}

export const LATE_DATA_DEFAULTS: LateDataSettings = { lateShare: 0.2, maxLatenessMinutes: 120, neverShare: 0.01 };
export const MAX_LATENESS_MINUTES = 120;

/** Settings with defaults filled in. @throws RangeError naming the setting that is out of range */
export function lateDataSettings(input: Partial<LateDataSettings> = {}): LateDataSettings {
  const settings = { ...LATE_DATA_DEFAULTS, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) };
  const share = (name: 'lateShare' | 'neverShare'): void => {
    const value = settings[name];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
      throw new RangeError(`late data: ${name} must be a share from 0 to 1, got ${String(value)}`);
    }
  };
  share('lateShare');
  share('neverShare');
  if (settings.lateShare + settings.neverShare > 1) {
    throw new RangeError(`late data: lateShare + neverShare must be at most 1, got ${settings.lateShare + settings.neverShare}`);
  }
  const max = settings.maxLatenessMinutes;
  if (!Number.isInteger(max) || max < 1 || max > MAX_LATENESS_MINUTES) {
    throw new RangeError(`late data: maxLatenessMinutes must be a whole number of minutes from 1 to ${MAX_LATENESS_MINUTES}, got ${String(max)}`);
  }
  return settings;
}

/** What the agent eventually reports for one delta metric of one host over [fromMs, toMs). */
export interface DeltaTruth {
  /** Sum of the one-minute values that arrive, sooner or later (by `asOfMs`, when given). */
  readonly sum: number;
  /** Minutes in the range whose report arrives (by `asOfMs`, when given). */
  readonly points: number;
  /** With `asOfMs`: minutes whose report arrives, but only after `asOfMs`. 0 otherwise. */
  readonly pending: number;
  /** Minutes in the range whose report never arrives (permanent gaps, or before the host existed). */
  readonly missing: number;
  /** When the last of the arriving minutes becomes readable; null when none arrives. */
  readonly completeAtMs: number | null;
  /** Per minute, with `detail`: its start, its value, and when it arrives (null: never). */
  readonly minutes?: readonly { readonly minuteMs: number; readonly value: number; readonly arrivesAtMs: number | null }[];
}

export interface TruthQuery {
  readonly hostUuid: string;
  readonly metric: string;
  /** Minutes that start in [fromMs, toMs) are counted. */
  readonly fromMs: number;
  readonly toMs: number;
  /** Count only what has arrived by this instant: the sum the API shows then (within retention). */
  readonly asOfMs?: number;
  /** Also list every minute. */
  readonly detail?: boolean;
}

/** At most 31 days of minutes per query: enough for any test, bounded for the control surface. */
export const MAX_TRUTH_MINUTES = 31 * 1440;
