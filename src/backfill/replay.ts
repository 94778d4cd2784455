import type { FamilySamples, FamilySpec, Labels, ScalarSample, SummarySample } from '../exposition/model.js';
import type { NullHandling } from '../config/types.js';
import { labelKey } from '../sources/shared/families.js';
import { HostLabels, mapSeries, type SeriesHostState } from '../sources/series/map.js';
import type { SeriesNaming } from '../sources/series/naming.js';
import type { Sample } from '../remote-write/protocol.js';
import type { CounterEnds } from './join.js';
import type { HistoryStep } from './timeline.js';
import { SeriesPoints } from '../sources/series/points.js';

/**
 * A host's history through the live mapping itself: each step of the history is handed to
 * `mapSeries` as the one new point of a poll made just when that point became due, with the
 * counter state the previous step left. So names, labels, units and counters are exactly the
 * live exporter's (a counter starts at 0 at its first point and adds each later point once;
 * a null point is a hole given up after the late-data horizon), and every value gets the
 * time it stands for: a gauge its bucket's start, a counter the end of the time it has
 * counted, as the live exporter stamps them with `sample_timestamps`.
 */

/** Long enough that a name absent from a few steps keeps its counter (history has no churn to forget). */
const HISTORY_GRACE_MS = 400 * 24 * 3_600_000;

export interface ReplayOptions {
  readonly account: string;
  readonly hostUuid: string;
  readonly labels: HostLabels;
  readonly naming: SeriesNaming;
  readonly ingestDelayMs: number;
  readonly lateDataHorizonMs: number;
  readonly nullHandling: NullHandling;
  /** Counters whose live counterpart started earlier than the host's history ends: no sample after their start. */
  readonly counterEnds?: CounterEnds | undefined;
  /**
   * The live exporter stamps its samples (`sample_timestamps`), so its counter's first sample,
   * the 0, has the time history ends at: history's last sample there goes 1 ms before it, or
   * Prometheus keeps only the one it got first and loses the last history minute at the join.
   */
  readonly liveSampleTimestamps?: boolean | undefined;
}

/** One series of history: the sample name (`__name__`), its labels, its family, its samples oldest first. */
export interface HistorySeries {
  readonly family: FamilySpec;
  readonly name: string;
  readonly labels: Labels;
  readonly samples: Sample[];
}

/** History collected between two writes, series by series. */
export class HistoryBuffer {
  private readonly series = new Map<string, HistorySeries>();
  private count = 0;

  get samples(): number {
    return this.count;
  }

  add(family: FamilySpec, name: string, labels: Labels, value: number, timestampMs: number): void {
    const key = `${name}\u0000${labelKey(labels)}`;
    let series = this.series.get(key);
    if (!series) this.series.set(key, (series = { family, name, labels, samples: [] }));
    const last = series.samples[series.samples.length - 1];
    // A counter that did not move on (a step it could not count) keeps its time: one sample is enough.
    if (last !== undefined && last.timestampMs >= timestampMs) return;
    series.samples.push({ value, timestampMs });
    this.count += 1;
  }

  /** Everything collected, and an empty buffer. */
  take(): HistorySeries[] {
    const all = [...this.series.values()];
    this.series.clear();
    this.count = 0;
    return all;
  }
}

/** Runs the steps through the live mapping from `state`; returns the state after the last one. */
export function replayHistory(steps: readonly HistoryStep[], state: SeriesHostState, options: ReplayOptions, into: HistoryBuffer): SeriesHostState {
  let current = state;
  for (const step of steps) {
    const points: Record<string, SeriesPoints> = {};
    for (const name in step.points) points[name] = SeriesPoints.of([step.points[name] as HistoryStep['points'][string]]);
    const result = mapSeries({ intervalSeconds: step.intervalMs / 1000, points }, current, {
      account: options.account,
      hostUuid: options.hostUuid,
      labels: options.labels,
      naming: options.naming,
      nowMs: step.t + step.intervalMs + options.ingestDelayMs,
      ingestDelayMs: options.ingestDelayMs,
      lateDataHorizonMs: options.lateDataHorizonMs,
      counterGraceMs: HISTORY_GRACE_MS,
      // The step's own point is the newest there is: never too old to show.
      stalenessMs: step.intervalMs + options.ingestDelayMs,
      nullHandling: options.nullHandling,
      sampleTimestamps: true,
    });
    current = result.state;
    collect(result.families, step, into, options.counterEnds, options.liveSampleTimestamps === true);
  }
  return current;
}

function collect(families: readonly FamilySamples[], step: HistoryStep, into: HistoryBuffer, counterEnds: CounterEnds | undefined, beforeLiveStart: boolean): void {
  const end = step.t + step.intervalMs;
  /** The time to stamp a counter sample with, or undefined when it is past where the live counter began. */
  const counted = (name: string, labels: Labels, timestampMs: number): number | undefined => {
    const endMs = counterEnds?.get(labels)?.get(name);
    if (endMs === undefined) return timestampMs;
    if (timestampMs > endMs) return undefined;
    return beforeLiveStart && timestampMs === endMs ? timestampMs - 1 : timestampMs;
  };
  for (const family of families) {
    const { spec } = family;
    if (spec.type === 'summary') {
      for (const sample of family.samples as readonly SummarySample[]) {
        for (const [quantile, value] of sample.quantiles) into.add(spec, spec.name, { ...sample.labels, quantile: String(quantile) }, value, step.t);
        const sumAt = counted(`${spec.name}_sum`, sample.labels, end);
        if (sumAt !== undefined) into.add(spec, `${spec.name}_sum`, sample.labels, sample.sum, sumAt);
        const countAt = counted(`${spec.name}_count`, sample.labels, end);
        if (countAt !== undefined) into.add(spec, `${spec.name}_count`, sample.labels, sample.count, countAt);
      }
      continue;
    }
    if (spec.type === 'histogram') continue;
    for (const sample of family.samples as readonly ScalarSample[]) {
      const timestampMs = sample.timestampMs ?? (spec.type === 'counter' ? end : step.t);
      const at = spec.type === 'counter' ? counted(spec.name, sample.labels, timestampMs) : timestampMs;
      if (at !== undefined) into.add(spec, spec.name, sample.labels, sample.value, at);
    }
  }
}

export { HostLabels };
