import type { Labels, ScalarSample } from '../../exposition/model.js';
import { labelKey } from './families.js';

/**
 * Counters keyed by label set, kept across polls by a pure mapper (checks by cache status,
 * alert events by source). A series that appears after the first poll is exposed at 0 for
 * one poll before its value: Prometheus sees no increase in a series' first sample, so a
 * series born at 1 would hide its first event from rate() and increase(). Born at 0, the
 * step to its value is an ordinary increase. (A scrape interval longer than the poll
 * interval may miss the 0; then the first events are lost as they would be anyway.)
 */

export interface CounterEntry {
  readonly labels: Labels;
  readonly value: number;
  /** Created in the latest poll and exposed at 0 until the next one. */
  readonly held: boolean;
}

export type CounterTable = ReadonlyMap<string, CounterEntry>;

export const EMPTY_COUNTER_TABLE: CounterTable = new Map();

/** One poll's worth of changes to a table; `finish()` gives the next state. */
export class CounterTableUpdate {
  private readonly entries = new Map<string, CounterEntry>();

  /**
   * @param previous the table after the last poll
   * @param holdNew  expose series created in this poll at 0 until the next poll (false on
   *                 a first poll, whose series are only seeded, so there is nothing to hide)
   */
  constructor(
    previous: CounterTable,
    private readonly holdNew: boolean,
  ) {
    // Series held at 0 last poll show their value from now on.
    for (const [key, entry] of previous) this.entries.set(key, entry.held ? { ...entry, held: false } : entry);
  }

  /** Adds `by` (0 only makes sure the series exists) to the series with these labels. */
  add(labels: Labels, by: number): void {
    const key = labelKey(labels);
    const entry = this.entries.get(key);
    if (entry) this.entries.set(key, { ...entry, value: entry.value + by });
    else this.entries.set(key, { labels, value: by, held: this.holdNew });
  }

  finish(): CounterTable {
    return this.entries;
  }
}

/** The samples to expose for a table: held series at 0. */
export function counterSamples(table: CounterTable): ScalarSample[] {
  return [...table.values()].map((entry) => ({ labels: entry.labels, value: entry.held ? 0 : entry.value }));
}
