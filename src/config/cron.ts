/**
 * Checks a node-cron expression and measures the shortest gap between two consecutive
 * fire times, so a schedule that would poll a cached endpoint faster than its cache can be
 * refused at load time.
 *
 * Fields are expanded by node-cron's own `validateDetailed` (the parser the scheduler
 * uses, so names, ranges, steps and wrap-around mean exactly what they will mean at run
 * time). Which days match (`L`, `15W`, `L-2`, `5L`, `1#2`, and day-of-month AND day-of-week,
 * which is node-cron's rule) is evaluated here. The gap is computed exactly instead of by
 * sampling a week of fire times: every matching day fires at the same times of day, so
 * the shortest gap is either between two times of one day or between the last time of a
 * matching day and the first time of the next matching day. Matching days are found by
 * scanning 28 years plus a week, the period after which the Gregorian calendar repeats
 * (weekdays and leap years) within 1901-2099, so monthly and yearly rules are covered too.
 */
import { validate, validateDetailed } from 'node-cron';

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

/**
 * `analyseCron('17 *\/2 * * *')` → `{ok: true, firesPerMatchingDay: 12, shortestGapMs: 7_200_000}`.
 * `shortestGapMs` is undefined for a schedule that fires once in 28 years or less.
 */
export function analyseCron(expression: string): CronAnalysis {
  const detailed = validateDetailed(expression);
  const fields = detailed.fields;
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
    return {
      ok: false,
      error: `${JSON.stringify(expression)} is not a valid cron expression: ${reason} (5 fields "minute hour day-of-month month day-of-week", or 6 with seconds first)`,
    };
  }

  const secondsOfDay: number[] = [];
  for (const hour of fields.hour) {
    for (const minute of fields.minute) {
      for (const second of fields.second) secondsOfDay.push(hour * 3600 + minute * 60 + second);
    }
  }
  secondsOfDay.sort((a, b) => a - b);
  const first = secondsOfDay[0];
  const lastTime = secondsOfDay[secondsOfDay.length - 1];
  if (first === undefined || lastTime === undefined) return { ok: false, error: `${JSON.stringify(expression)} never fires` };

  let shortest = Infinity;
  for (let i = 1; i < secondsOfDay.length; i++) {
    shortest = Math.min(shortest, (secondsOfDay[i] ?? 0) - (secondsOfDay[i - 1] ?? 0));
  }

  let previousMatchingDay: number | undefined;
  let matchingDays = 0;
  let dayIndex = 0;
  let weekday = new Date(SCAN_START).getUTCDay();
  const startYear = new Date(SCAN_START).getUTCFullYear();
  scan: for (let year = startYear; ; year++) {
    for (let month = 1; month <= 12; month++) {
      const last = lastDayOfMonth(year, month);
      const monthMatches = fields.month.includes(month);
      for (let day = 1; day <= last; day++, dayIndex++, weekday = (weekday + 1) % 7) {
        if (dayIndex >= SCAN_DAYS) break scan;
        if (!monthMatches) continue;
        if (!matchesDayOfMonth(fields.dayOfMonth, year, month, day, last)) continue;
        if (!matchesDayOfWeek(fields.dayOfWeek, day, last, weekday)) continue;
        matchingDays++;
        if (previousMatchingDay !== undefined) {
          shortest = Math.min(shortest, (dayIndex - previousMatchingDay) * DAY_SECONDS + first - lastTime);
        }
        previousMatchingDay = dayIndex;
      }
    }
  }
  if (matchingDays === 0) return { ok: false, error: `${JSON.stringify(expression)} never fires: no date matches its day and month fields` };

  return {
    ok: true,
    firesPerMatchingDay: secondsOfDay.length,
    shortestGapMs: Number.isFinite(shortest) ? shortest * 1000 : undefined,
  };
}

/**
 * Whether the schedule fires at a given instant (whole seconds, UTC), by the same rules
 * the gap analysis uses; undefined for an invalid expression. Exposed so tests can hold
 * the day rules against node-cron's own matcher.
 */
export function cronFiresAt(expression: string): ((epochMs: number) => boolean) | undefined {
  if (!validate(expression)) return undefined;
  const fields = validateDetailed(expression).fields;
  if (fields === undefined) return undefined;
  return (epochMs) => {
    const date = new Date(epochMs);
    const year = date.getUTCFullYear();
    const month = date.getUTCMonth() + 1;
    const day = date.getUTCDate();
    const last = lastDayOfMonth(year, month);
    return (
      date.getUTCMilliseconds() === 0 &&
      fields.second.includes(date.getUTCSeconds()) &&
      fields.minute.includes(date.getUTCMinutes()) &&
      fields.hour.includes(date.getUTCHours()) &&
      fields.month.includes(month) &&
      matchesDayOfMonth(fields.dayOfMonth, year, month, day, last) &&
      matchesDayOfWeek(fields.dayOfWeek, day, last, date.getUTCDay())
    );
  };
}

function lastDayOfMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The weekday nearest to `target` inside the month (the `W` rule), or -1. */
function nearestWeekday(year: number, month: number, target: number): number {
  const last = lastDayOfMonth(year, month);
  if (target < 1 || target > last) return -1;
  const weekday = new Date(Date.UTC(year, month - 1, target)).getUTCDay();
  if (weekday === 6) return target === 1 ? target + 2 : target - 1;
  if (weekday === 0) return target === last ? target - 2 : target + 1;
  return target;
}

function matchesDayOfMonth(field: readonly (number | string)[], year: number, month: number, day: number, last: number): boolean {
  return field.some((value) => {
    if (typeof value === 'number') return value === day;
    if (value === 'L') return day === last;
    const weekdayRule = /^(\d{1,2}|L)W$/.exec(value);
    if (weekdayRule) {
      const target = weekdayRule[1] === 'L' ? last : Number(weekdayRule[1]);
      return nearestWeekday(year, month, target) === day;
    }
    const offset = /^L-(\d{1,2})$/.exec(value);
    if (offset) return last - Number(offset[1]) === day;
    return false;
  });
}

function matchesDayOfWeek(field: readonly (number | string)[], day: number, last: number, weekday: number): boolean {
  return field.some((value) => {
    if (typeof value === 'number') return value % 7 === weekday;
    const nth = /^([0-7])#([1-5])$/.exec(value);
    if (nth) return Number(nth[1]) % 7 === weekday && Math.floor((day - 1) / 7) + 1 === Number(nth[2]);
    const lastOfMonth = /^([0-7])L$/i.exec(value);
    if (lastOfMonth) return Number(lastOfMonth[1]) % 7 === weekday && day + 7 > last;
    return false;
  });
}
