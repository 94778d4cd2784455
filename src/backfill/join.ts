import type { AccountConfig } from '../config/types.js';
import type { Labels } from '../exposition/model.js';
import type { HostLabels, SeriesHostState } from '../sources/series/map.js';
import type { SeriesNaming } from '../sources/series/naming.js';
import { decodeSeriesHost } from '../sources/series/state.js';
import type { StateSnapshot } from '../state/state-file.js';

/**
 * Where the live exporter began counting each host, read from its state file, so that the
 * backfill ends history exactly there: every counter's history stops at the minute its live
 * counter started from 0 (`countingSinceMs`), so a window across the join holds every minute
 * once. Gauges have nothing to count twice and end where the last counter of the host does.
 */

export interface LiveStart {
  /** Where the host's history ends: the latest start of its live counters. */
  readonly untilMs: number;
  /** By counter key (a delta's dotted name, a timer's name): where that live counter started. */
  readonly counters: ReadonlyMap<string, number>;
}

/** The live start of one host, or undefined when none of its counters knows its start (a state file older than the field). */
export function liveStartOf(state: SeriesHostState): LiveStart | undefined {
  const counters = new Map<string, number>();
  let untilMs = -Infinity;
  for (const [key, counter] of state.counters) {
    if (!Number.isFinite(counter.countingSinceMs)) continue;
    counters.set(key, counter.countingSinceMs);
    untilMs = Math.max(untilMs, counter.countingSinceMs);
  }
  return counters.size === 0 ? undefined : { untilMs, counters };
}

/** The live starts of every host of the accounts in a state file, by account and host uuid. */
export function liveStartsFrom(snapshot: StateSnapshot, accounts: readonly AccountConfig[]): { starts: Map<string, Map<string, LiveStart>>; problems: string[] } {
  const starts = new Map<string, Map<string, LiveStart>>();
  const problems: string[] = [];
  for (const account of accounts) {
    const saved = snapshot.accounts[account.name];
    if (saved === undefined) {
      problems.push(`account ${account.name}: not in the state file (the exporter has not polled it with this state file)`);
      continue;
    }
    if (saved.baseUrl !== account.baseUrl) {
      problems.push(`account ${account.name}: the state file is of another upstream (${saved.baseUrl})`);
      continue;
    }
    const hosts = new Map<string, LiveStart>();
    starts.set(account.name, hosts);
    const series = saved.sources.series;
    if (series === undefined) continue;
    if (!Array.isArray(series)) {
      problems.push(`account ${account.name}: the series state is not a list of hosts`);
      continue;
    }
    for (const item of series as { uuid?: unknown; state?: unknown }[]) {
      if (typeof item.uuid !== 'string') continue;
      try {
        const start = liveStartOf(decodeSeriesHost(item.state));
        if (start !== undefined) hosts.set(item.uuid, start);
      } catch (error) {
        problems.push(`account ${account.name} host ${item.uuid}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  return { starts, problems };
}

/**
 * The last timestamp each counter sample of a host may have, by the sample's labels object
 * (the host's `HostLabels` give one object per label set) and sample name: a delta's counter,
 * a timer's `_sum` and `_count`.
 */
export type CounterEnds = ReadonlyMap<Labels, ReadonlyMap<string, number>>;

export function counterEnds(start: LiveStart, naming: SeriesNaming, labels: HostLabels): CounterEnds {
  const ends = new Map<Labels, Map<string, number>>();
  for (const [key, endMs] of start.counters) {
    const metric = naming.metric(key);
    const { role } = metric;
    const names = role.kind === 'delta' ? [role.spec.name] : role.kind === 'timer' && role.stat === 'mean' ? [`${role.spec.name}_sum`, `${role.spec.name}_count`] : [];
    if (names.length === 0) continue;
    const of = labels.of(metric);
    let byName = ends.get(of);
    if (!byName) ends.set(of, (byName = new Map<string, number>()));
    for (const name of names) byName.set(name, endMs);
  }
  return ends;
}
