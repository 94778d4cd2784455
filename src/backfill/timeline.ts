import type { SeriesPoint } from '../sources/series/decode.js';
import type { SeriesResult } from '../sources/series/fetch.js';

/**
 * Which windows to ask a host's series for, and how their answers make one history.
 *
 * The series endpoint takes only a relative window (`since`) that always ends now, and its
 * sampling interval follows the window's length (the API document's rule 1): 60 s up to 4 h,
 * 120 s up to a day, 300 s up to 2 days, 900 s up to a week, 3600 s beyond. So the finest
 * history a host has comes from one request per interval class: `240m`, `1d`, `2d`, `7d` and
 * the whole span, each used where no finer one reaches. Pure: answers in, steps out.
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** The interval classes, finest first: the longest window each covers and how it is asked for. */
export const INTERVAL_CLASSES = [
  { upToMs: 4 * HOUR_MS, intervalSeconds: 60, since: '240m' },
  { upToMs: DAY_MS, intervalSeconds: 120, since: '1d' },
  { upToMs: 2 * DAY_MS, intervalSeconds: 300, since: '2d' },
  { upToMs: 7 * DAY_MS, intervalSeconds: 900, since: '7d' },
] as const;
export const COARSEST_INTERVAL_SECONDS = 3600;

export interface HistoryWindow {
  /** The `since` parameter. */
  readonly since: string;
  readonly spanMs: number;
  /** What the API document says the answer's interval will be (the answer's own is used). */
  readonly intervalSeconds: number;
}

/** A relative window in the API's form for a span of whole minutes, in the largest unit that divides it. */
export function relativeWindow(spanMs: number): string {
  const minutes = Math.ceil(spanMs / MINUTE_MS);
  if (minutes % (60 * 24 * 7) === 0) return `${minutes / (60 * 24 * 7)}w`;
  if (minutes % (60 * 24) === 0) return `${minutes / (60 * 24)}d`;
  if (minutes % 60 === 0) return `${minutes / 60}h`;
  return `${minutes}m`;
}

/**
 * The windows a history of `spanMs` back from now takes, finest first, leaving out those
 * that would only repeat a finer one: windows that end before `fromAgoMs` (history already
 * written) cover nothing new, and none starts after `toAgoMs` (the history's end, that long
 * before now) since a window always reaches back from now.
 *
 * @example historyWindows(30 * DAY_MS) // 240m (60 s), 1d (120 s), 2d (300 s), 7d (900 s), 30d (3600 s)
 */
export function historyWindows(spanMs: number, toAgoMs = 0, fromAgoMs = spanMs): HistoryWindow[] {
  const windows: HistoryWindow[] = [];
  let coveredFromAgo = 0;
  for (const c of INTERVAL_CLASSES) {
    const span = Math.min(c.upToMs, spanMs);
    // This class is the finest for [coveredFromAgo, span) ago; skip it when that range is outside [toAgo, fromAgo).
    if (span > toAgoMs && coveredFromAgo < fromAgoMs) windows.push({ since: span === c.upToMs ? c.since : relativeWindow(span), spanMs: span, intervalSeconds: c.intervalSeconds });
    coveredFromAgo = span;
    if (span >= spanMs) return windows;
  }
  if (spanMs > toAgoMs && coveredFromAgo < fromAgoMs) windows.push({ since: relativeWindow(spanMs), spanMs, intervalSeconds: COARSEST_INTERVAL_SECONDS });
  return windows;
}

/** One point in time of a host's history: every name's value for the bucket [t, t + interval). */
export interface HistoryStep {
  readonly t: number;
  readonly intervalMs: number;
  readonly points: Readonly<Record<string, SeriesPoint>>;
}

/** One window's answer, reduced to what assembling needs. */
interface Answer {
  readonly intervalMs: number;
  /** Bucket starts present in the answer, ascending. */
  readonly times: readonly number[];
  /**
   * The first bucket every batch of the window has: the latest batch's first. A window's names
   * go out in batches one after the other, each reaching back from when it was answered, so a
   * batch sent after a slow answer starts minutes after the first one.
   */
  readonly start: number;
  /** By bucket start, each name's point there. */
  readonly at: ReadonlyMap<number, Record<string, SeriesPoint>>;
}

function answerOf(result: SeriesResult): Answer | undefined {
  const at = new Map<number, Record<string, SeriesPoint>>();
  /** By the `since` its batch reported, the batch's first bucket. */
  const batchStarts = new Map<string, number>();
  let intervalSeconds: number | undefined;
  for (const [name, series] of Object.entries(result.series)) {
    intervalSeconds ??= series.intervalSeconds;
    // A batch answered at another interval than the rest (never seen) is left out rather than mixed in.
    if (series.intervalSeconds !== intervalSeconds) continue;
    for (const point of series.points.toPoints()) {
      const t = Date.parse(point.timestamp);
      if (!Number.isFinite(t)) continue;
      let row = at.get(t);
      if (!row) at.set(t, (row = {}));
      row[name] = point;
      batchStarts.set(series.since, Math.min(batchStarts.get(series.since) ?? Infinity, t));
    }
  }
  if (intervalSeconds === undefined || at.size === 0) return undefined;
  return { intervalMs: intervalSeconds * 1000, times: [...at.keys()].sort((a, b) => a - b), start: Math.max(...batchStarts.values()), at };
}

/**
 * One history from the answers of `historyWindows` (any order): each bucket from the finest
 * answer that has it, coarse buckets up to where the next finer answer takes over, the
 * handover at a time both grids share so that no minute is counted twice or left out, and
 * only whole buckets in [fromMs, untilMs): a bucket not yet ended by `untilMs` is left for
 * later, as live polling leaves a point not yet due.
 */
export function assembleHistory(results: readonly SeriesResult[], fromMs: number, untilMs: number): HistoryStep[] {
  const answers = results
    .map(answerOf)
    .filter((a): a is Answer => a !== undefined)
    .sort((a, b) => b.intervalMs - a.intervalMs || (a.times[0] as number) - (b.times[0] as number));
  const steps: HistoryStep[] = [];
  let cursor = fromMs;
  answers.forEach((answer, i) => {
    const finer = answers.slice(i + 1).find((a) => a.intervalMs < answer.intervalMs);
    const limit = finer === undefined ? untilMs : Math.min(untilMs, handover(answer, finer, cursor));
    for (const t of answer.times) {
      if (t < cursor || t + answer.intervalMs > limit) continue;
      steps.push({ t, intervalMs: answer.intervalMs, points: answer.at.get(t) as Record<string, SeriesPoint> });
    }
    if (finer !== undefined) cursor = Math.max(cursor, limit);
  });
  return steps;
}

/**
 * Where the finer answer takes over from a coarser one, for all its names at once: the first
 * end of a coarse bucket at or after the finer answer's start (where its latest batch begins)
 * that is also a bucket start of the finer grid. Grids that never meet hand over at the first
 * coarse end past the finer start, and the finer buckets begin at the first one after it (the
 * minutes between are a `window_gap`).
 */
function handover(coarse: Answer, finer: Answer, cursor: number): number {
  const finerStart = finer.start;
  const finerStarts = new Set(finer.times);
  let fallback: number | undefined;
  for (const t of coarse.times) {
    const end = t + coarse.intervalMs;
    if (end < finerStart || end < cursor) continue;
    fallback ??= end;
    if (finerStarts.has(end)) return end;
  }
  return fallback ?? Math.max(cursor, finerStart);
}
