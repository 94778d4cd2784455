import type { Clock, TimerHandle } from './clock.js';

/**
 * Logs an event that repeats by episodes, not by occurrence: a receiver away for twelve minutes
 * made a line per dropped sample (714,557 lines, 88 MB). Here an episode writes one line when it
 * starts (with what caused it), at most one summary per interval while it lasts (the counts of
 * that interval and since the start), and one when it ends; counters carry the exact numbers.
 * Lines are bounded by keys × (2 + duration / interval), whatever the number of events.
 *
 * An episode ends when the caller says so: at once (`end`), or at the next summary time with no
 * event since, after it said the cause is gone (`endWhenQuiet`: a receiver that answers again,
 * then fails again a second later, stays one episode); or, with `quietIntervalsToEnd`, after
 * that many whole intervals without an event.
 */

export type EpisodePhase = 'start' | 'ongoing' | 'end';

type Detail = Readonly<Record<string, unknown>>;

export interface EpisodeLine<D = Detail> {
  readonly key: string;
  readonly phase: EpisodePhase;
  /** What the latest event said (the first one's, for `start`). */
  readonly detail: D;
  /** Events counted since the previous line (the starting event's own count, for `start`). */
  readonly count: number;
  /** Events counted since the episode started. */
  readonly total: number;
  readonly durationSeconds: number;
}

export interface EpisodeLogOptions<D = Detail> {
  readonly clock: Clock;
  /** Default 60 s. */
  readonly intervalMs?: number;
  /** 0 (default): only `end` ends an episode. */
  readonly quietIntervalsToEnd?: number;
  readonly write: (line: EpisodeLine<D>) => void;
}

interface Episode<D> {
  readonly startedMs: number;
  detail: D;
  sinceLine: number;
  total: number;
  quietIntervals: number;
  /** The caller said the cause is gone: the first quiet interval ends the episode. */
  settling: boolean;
  /** When the caller said so: an episode that ends when quiet lasted until then, not until its last interval. */
  settledMs: number | undefined;
  timer: TimerHandle | undefined;
}

export const EPISODE_SUMMARY_INTERVAL_MS = 60_000;

export class EpisodeLog<D = Detail> {
  private readonly episodes = new Map<string, Episode<D>>();
  private readonly intervalMs: number;

  constructor(private readonly options: EpisodeLogOptions<D>) {
    this.intervalMs = options.intervalMs ?? EPISODE_SUMMARY_INTERVAL_MS;
  }

  /** Whether an episode of `key` is under way. */
  active(key: string): boolean {
    return this.episodes.has(key);
  }

  /** Counts `count` events of `key`; the first of an episode is written at once. */
  note(key: string, count: number, detail: D): void {
    const episode = this.episodes.get(key);
    if (episode !== undefined) {
      episode.sinceLine += count;
      episode.total += count;
      episode.detail = detail;
      episode.quietIntervals = 0;
      episode.settling = false;
      episode.settledMs = undefined;
      return;
    }
    const started: Episode<D> = { startedMs: this.options.clock.now(), detail, sinceLine: 0, total: count, quietIntervals: 0, settling: false, settledMs: undefined, timer: undefined };
    this.episodes.set(key, started);
    this.options.write({ key, phase: 'start', detail, count, total: count, durationSeconds: 0 });
    this.arm(key, started);
  }

  /** Ends the episode of `key`, if one is under way, with a line of its totals. */
  end(key: string, detail?: D): void {
    const episode = this.episodes.get(key);
    if (episode === undefined) return;
    if (episode.timer !== undefined) this.options.clock.clearTimeout(episode.timer);
    this.episodes.delete(key);
    this.options.write({ key, phase: 'end', detail: detail ?? episode.detail, count: episode.sinceLine, total: episode.total, durationSeconds: this.seconds(episode) });
  }

  /** Ends the episode of `key` at the next summary time, unless an event comes first. */
  endWhenQuiet(key: string, detail?: D): void {
    const episode = this.episodes.get(key);
    if (episode === undefined) return;
    episode.settling = true;
    episode.settledMs ??= this.options.clock.now();
    if (detail !== undefined) episode.detail = detail;
  }

  /** Ends every episode (a stop), each with its line. */
  close(): void {
    for (const key of [...this.episodes.keys()]) this.end(key);
  }

  /** Forgets every episode without a line (the owner is stopping; its episodes did not end). */
  discard(): void {
    for (const episode of this.episodes.values()) if (episode.timer !== undefined) this.options.clock.clearTimeout(episode.timer);
    this.episodes.clear();
  }

  private arm(key: string, episode: Episode<D>): void {
    episode.timer = this.options.clock.setTimeout(() => {
      episode.timer = undefined;
      if (this.episodes.get(key) !== episode) return;
      if (episode.sinceLine === 0) {
        episode.quietIntervals += 1;
        const quietToEnd = this.options.quietIntervalsToEnd ?? 0;
        if (episode.settling || (quietToEnd > 0 && episode.quietIntervals >= quietToEnd)) {
          this.end(key);
          return;
        }
      } else {
        this.options.write({ key, phase: 'ongoing', detail: episode.detail, count: episode.sinceLine, total: episode.total, durationSeconds: this.seconds(episode) });
        episode.sinceLine = 0;
      }
      this.arm(key, episode);
    }, this.intervalMs);
  }

  private seconds(episode: Episode<D>): number {
    return Math.round(((episode.settledMs ?? this.options.clock.now()) - episode.startedMs) / 1000);
  }
}
