/**
 * Checks a node-cron expression, measures the shortest gap between two consecutive fire
 * times (so a schedule that would poll a cached endpoint faster than its cache can be
 * refused at load time), and finds the next fire time after any instant (the scheduler runs
 * scheduled jobs at those times, on whatever clock it is given).
 *
 * Everything is node-cron's own: `validateDetailed` expands the fields, and a task's `match`
 * decides which days match (`L`, `15W`, `L-2`, `5L`, `1#2`, and day-of-month AND
 * day-of-week), so an expression means here exactly what it means to node-cron. Every
 * matching day fires at the same times of day, so the shortest gap is either between two
 * times of one day or between the last time of a matching day and the first time of the next
 * matching day. Matching days are found by scanning 28 years plus a week, the period after
 * which the Gregorian calendar repeats (weekdays and leap years) within 1901-2099, so monthly
 * and yearly rules are covered too.
 */
import { createTask, validate, validateDetailed } from 'node-cron';

/** The scheduler must run release schedules in this zone: the gap check assumes no DST jumps. */
export const CRON_TIMEZONE = 'Etc/UTC';

const DAY_SECONDS = 86_400;
const SCAN_START = Date.UTC(2001, 0, 1);
const SCAN_DAYS = 28 * 365 + 7 + 7;

const FIELD_LABELS: Record<string, string> = {
  second: 'second',
  minute: 'minute',
  hour: 'hour',
  dayOfMonth: 'day-of-month',
  month: 'month',
  dayOfWeek: 'day-of-week',
};

export type CronAnalysis =
  | { readonly ok: true; readonly firesPerMatchingDay: number; readonly shortestGapMs: number | undefined }
  | { readonly ok: false; readonly error: string };

/** A valid expression, ready to say when it fires. */
export interface CronSchedule {
  readonly expression: string;
  /** The first fire time strictly after `afterMs` (UTC), or undefined if none within 28 years. */
  nextFireMs(afterMs: number): number | undefined;
}

interface Parsed {
  /** Seconds of the day at which a matching day fires, ascending. */
  readonly secondsOfDay: readonly number[];
  /** node-cron's matcher, for the day rules. */
  matchesDay(dayStartMs: number): boolean;
}

const parsedCache = new Map<string, Parsed | { readonly error: string }>();

function parse(expression: string): Parsed | { readonly error: string } {
  const cached = parsedCache.get(expression);
  if (cached !== undefined) return cached;
  const detailed = validateDetailed(expression);
  const fields = detailed.fields;
  let result: Parsed | { readonly error: string };
  if (!validate(expression) || !detailed.valid || fields === undefined) {
    const first = detailed.errors[0];
    const reason =
      first === undefined
        ? 'node-cron rejects it'
        : first.message.includes('impossible')
          ? `day-of-month ${JSON.stringify(first.value)} never occurs in the months it names`
          : first.field in FIELD_LABELS
          ? `the ${FIELD_LABELS[first.field]} field ${JSON.stringify(first.value)} is malformed or out of range`
          : first.message;
    result = {
      error: `${JSON.stringify(expression)} is not a valid cron expression: ${reason} (5 fields "minute hour day-of-month month day-of-week", or 6 with seconds first)`,
    };
  } else {
    const secondsOfDay: number[] = [];
    for (const hour of fields.hour) {
      for (const minute of fields.minute) {
        for (const second of fields.second) secondsOfDay.push(hour * 3600 + minute * 60 + second);
      }
    }
    secondsOfDay.sort((a, b) => a - b);
    // Never started: only its matcher is used.
    const task = createTask(expression, () => undefined, { timezone: CRON_TIMEZONE });
    const firstSecond = secondsOfDay[0];
    result = firstSecond === undefined
      ? { error: `${JSON.stringify(expression)} never fires` }
      : { secondsOfDay, matchesDay: (dayStartMs) => task.match(new Date(dayStartMs + firstSecond * 1000)) };
  }
  parsedCache.set(expression, result);
  return result;
}

/**
 * `analyseCron('17 *\/2 * * *')` → `{ok: true, firesPerMatchingDay: 12, shortestGapMs: 7_200_000}`.
 * `shortestGapMs` is undefined for a schedule that fires once in 28 years or less.
 */
export function analyseCron(expression: string): CronAnalysis {
  const parsed = parse(expression);
  if ('error' in parsed) return { ok: false, error: parsed.error };
  const { secondsOfDay } = parsed;
  const first = secondsOfDay[0] ?? 0;
  const lastTime = secondsOfDay[secondsOfDay.length - 1] ?? 0;
  let shortest = Infinity;
  for (let i = 1; i < secondsOfDay.length; i++) {
    shortest = Math.min(shortest, (secondsOfDay[i] ?? 0) - (secondsOfDay[i - 1] ?? 0));
  }
  let previousMatchingDay: number | undefined;
  let matchingDays = 0;
  for (let day = 0; day < SCAN_DAYS; day++) {
    if (!parsed.matchesDay(SCAN_START + day * DAY_SECONDS * 1000)) continue;
    matchingDays++;
    if (previousMatchingDay !== undefined) shortest = Math.min(shortest, (day - previousMatchingDay) * DAY_SECONDS + first - lastTime);
    previousMatchingDay = day;
  }
  if (matchingDays === 0) return { ok: false, error: `${JSON.stringify(expression)} never fires: no date matches its day and month fields` };
  return { ok: true, firesPerMatchingDay: secondsOfDay.length, shortestGapMs: Number.isFinite(shortest) ? shortest * 1000 : undefined };
}

/** The schedule of a valid expression; throws on an invalid one (configuration validation refuses those first). */
export function cronSchedule(expression: string): CronSchedule {
  const parsed = parse(expression);
  if ('error' in parsed) throw new TypeError(parsed.error);
  return {
    expression,
    nextFireMs(afterMs) {
      const dayMs = DAY_SECONDS * 1000;
      const firstDay = Math.floor(afterMs / dayMs) * dayMs;
      for (let day = 0; day < SCAN_DAYS; day++) {
        const dayStart = firstDay + day * dayMs;
        const second = parsed.secondsOfDay.find((s) => dayStart + s * 1000 > afterMs);
        if (second === undefined) continue;
        // A matching day fires at every time of its day, so the first one after the instant is the answer.
        if (parsed.matchesDay(dayStart)) return dayStart + second * 1000;
      }
      return undefined;
    },
  };
}
