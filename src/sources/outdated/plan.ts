import { lookupKey, type Install } from './map.js';

/**
 * Planning of the release lookups, pure: which (project, line) pairs the installed
 * versions need, and which lookups one round of the release runtime makes.
 */

/** One lookup the installed versions need, however many hosts have it. */
export interface WantedLine {
  /** `lookupKey(project, line)`. */
  readonly key: string;
  readonly project: string;
  readonly line: string | undefined;
  /** The software names that need it, sorted. */
  readonly software: readonly string[];
  /** How many installs need it. */
  readonly installs: number;
}

/** The distinct lines the installs need, sorted by key. Installs of unknown version need none. */
export function wantedLines(installs: Iterable<Install>): WantedLine[] {
  const lines = new Map<string, { project: string; line: string | undefined; software: Set<string>; installs: number }>();
  for (const item of installs) {
    if (item.version === undefined) continue;
    const key = lookupKey(item.project, item.line);
    let entry = lines.get(key);
    if (entry === undefined) {
      entry = { project: item.project, line: item.line, software: new Set(), installs: 0 };
      lines.set(key, entry);
    }
    entry.software.add(item.software);
    entry.installs++;
  }
  return [...lines]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, e]) => ({ key, project: e.project, line: e.line, software: [...e.software].sort(), installs: e.installs }));
}

/** When a key was last asked, and whether by a scheduled run. */
export interface LookupRecord {
  readonly atMs: number;
  readonly scheduled: boolean;
}

export interface RoundOptions {
  /** A run of the cron schedule, or a lookup outside it (at start, or for lines just seen). */
  readonly scheduled: boolean;
  readonly nowMs: number;
  /**
   * The shortest time between two asks of one key outside the schedule's own rhythm: the
   * free endpoint's 2-hour cache (asking sooner only re-reads it), 0 for the marketplace or
   * when the operator allowed faster polling.
   */
  readonly minGapMs: number;
}

/**
 * The lookups of one round, each key once:
 * - outside the schedule, only keys never asked (a line just seen is looked up soon, not
 *   at the next run, which may be hours away);
 * - on the schedule, every key, except one asked outside the schedule less than `minGapMs`
 *   ago. A key last asked by the previous run is always due: configuration validation
 *   guarantees free-mode runs are at least the cache time apart.
 */
export function lookupsDue<T extends { readonly key: string }>(wanted: readonly T[], history: ReadonlyMap<string, LookupRecord>, opts: RoundOptions): T[] {
  const seen = new Set<string>();
  return wanted.filter((item) => {
    if (seen.has(item.key)) return false;
    seen.add(item.key);
    const last = history.get(item.key);
    if (last === undefined) return true;
    if (!opts.scheduled) return false;
    return last.scheduled || opts.nowMs - last.atMs >= opts.minGapMs;
  });
}
