import { Counter, type Registry } from 'prom-client';
import type { FamilySamples, Labels, MetricSink } from '../exposition/model.js';
import type { LimitsConfig } from '../config/types.js';

/**
 * What one account may add to /metrics, enforced where its sources publish (as Prometheus'
 * `sample_limit` and label limits do at scrape time): at most `series` label sets across
 * the account, whole families dropped beyond it; metric names, label names and label values
 * within their lengths, a sample over one of them dropped. Every drop is counted with its
 * reason; the first drop of each reason is logged once. The account's groups are tracked,
 * so an account removed by a reload is retracted whole.
 */

export type LimitReason = 'series_limit' | 'metric_name_length' | 'label_name_length' | 'label_value_length';
export const LIMIT_REASONS: readonly LimitReason[] = ['series_limit', 'metric_name_length', 'label_name_length', 'label_value_length'];

export function createLimitMetrics(registry: Registry): Counter<'account' | 'reason'> {
  return new Counter({
    name: 'monapi_series_limit_dropped_total',
    help: 'Series an account published that were not exposed, by reason: series_limit (whole families beyond limits.series), metric_name_length, label_name_length, label_value_length.',
    labelNames: ['account', 'reason'],
    registers: [registry],
  });
}

export interface LimitEvents {
  /** Series dropped by one publication. */
  dropped(reason: LimitReason, series: number): void;
  /** The first drop of a reason (and the first after the account was back within its limits). */
  firstDrop(reason: LimitReason, detail: Record<string, unknown>): void;
}

/** `Object.hasOwn` in the form V8 folds away in a `for...in` over the same object (see sources/series/decode.ts). */
// eslint-disable-next-line @typescript-eslint/unbound-method
const hasOwn = Object.prototype.hasOwnProperty;

interface LabelledSample {
  readonly labels: Labels;
}

interface LabelProblem {
  readonly reason: LimitReason;
  readonly detail: Record<string, unknown>;
}

export class LimitedAccountSink implements MetricSink {
  private readonly seriesByGroup = new Map<string, number>();
  private total = 0;
  private readonly reported = new Set<LimitReason>();

  constructor(
    private readonly inner: MetricSink,
    private readonly limits: LimitsConfig,
    private readonly events: LimitEvents,
  ) {}

  /** Series (label sets) the account has on /metrics now. */
  get series(): number {
    return this.total;
  }

  publish(group: string, families: readonly FamilySamples[]): void {
    const kept: FamilySamples[] = [];
    const budget = this.limits.series === 0 ? Infinity : this.limits.series - (this.total - (this.seriesByGroup.get(group) ?? 0));
    let used = 0;
    const drops = new Map<LimitReason, number>();
    const drop = (reason: LimitReason, n: number, detail: Record<string, unknown>) => {
      if (n === 0) return;
      drops.set(reason, (drops.get(reason) ?? 0) + n);
      if (!this.reported.has(reason)) {
        this.reported.add(reason);
        this.events.firstDrop(reason, detail);
      }
    };
    for (const family of families) {
      if (this.tooLong(this.limits.metricNameLength, family.spec.name)) {
        drop('metric_name_length', family.samples.length, { family: family.spec.name.slice(0, 80), length: family.spec.name.length, limit: this.limits.metricNameLength });
        continue;
      }
      const samples = this.withinLabelLimits(family.samples, (problem) =>
        drop(problem.reason, 1, { family: family.spec.name, ...problem.detail }),
      );
      if (samples.length === 0 && family.samples.length > 0) continue;
      if (used + samples.length > budget) {
        drop('series_limit', samples.length, { family: family.spec.name, group, limit: this.limits.series });
        continue;
      }
      used += samples.length;
      // The samples keep their own type; only the array is new.
      kept.push(samples.length === family.samples.length ? family : ({ ...family, samples } as unknown as FamilySamples));
    }
    for (const [reason, n] of drops) this.events.dropped(reason, n);
    this.total += used - (this.seriesByGroup.get(group) ?? 0);
    // Back within the limit: the next episode is logged again.
    if (!drops.has('series_limit') && this.total < this.limits.series) this.reported.delete('series_limit');
    this.seriesByGroup.set(group, used);
    this.inner.publish(group, kept);
  }

  retract(group: string): void {
    this.total -= this.seriesByGroup.get(group) ?? 0;
    this.seriesByGroup.delete(group);
    this.inner.retract(group);
  }

  groups(prefix: string): string[] {
    return this.inner.groups(prefix);
  }

  /** Retracts every group this account published (the account was removed or replaced). */
  retractAll(): void {
    for (const group of [...this.seriesByGroup.keys()]) this.retract(group);
  }

  private tooLong(limit: number, text: string): boolean {
    return limit > 0 && text.length > limit;
  }

  /**
   * The samples whose labels are within the limits. Nearly every publish has all of them: then
   * the list itself, without a copy; otherwise a copy from the first sample over a limit on.
   */
  private withinLabelLimits(samples: readonly LabelledSample[], dropped: (problem: LabelProblem) => void): readonly LabelledSample[] {
    if (this.limits.labelNameLength === 0 && this.limits.labelValueLength === 0) return samples;
    let kept: LabelledSample[] | undefined;
    for (let i = 0; i < samples.length; i++) {
      const sample = samples[i] as LabelledSample;
      const problem = this.labelProblem(sample.labels);
      if (problem === undefined) kept?.push(sample);
      else {
        kept ??= samples.slice(0, i);
        dropped(problem);
      }
    }
    return kept ?? samples;
  }

  private labelProblem(labels: Labels): LabelProblem | undefined {
    // for...in, not Object.entries: no array per sample on every publish.
    for (const name in labels) {
      if (!hasOwn.call(labels, name)) continue;
      const value = labels[name] as string;
      if (this.tooLong(this.limits.labelNameLength, name)) {
        return { reason: 'label_name_length', detail: { label: name.slice(0, 80), length: name.length, limit: this.limits.labelNameLength } };
      }
      if (this.tooLong(this.limits.labelValueLength, value)) {
        return { reason: 'label_value_length', detail: { label: name, length: value.length, limit: this.limits.labelValueLength } };
      }
    }
    return undefined;
  }
}
