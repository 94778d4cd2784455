/**
 * Durations as operators write them in Prometheus-style configs: one or more
 * `<whole number><unit>` parts, largest unit first (`90s`, `5m`, `1h30m`).
 */

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
type Unit = keyof typeof UNIT_MS;
const UNIT_ORDER: readonly Unit[] = ['d', 'h', 'm', 's', 'ms'];

const WHOLE = /^(?:\d+(?:ms|s|m|h|d))+$/;
const PART = /(\d+)(ms|s|m|h|d)/g;

export const DURATION_HINT = 'write a whole number and a unit (ms, s, m, h, d), e.g. 30s, 5m or 1h30m';

/** `parseDuration('1h30m')` → 5_400_000. Returns an error message instead of throwing. */
export function parseDuration(text: string): { ms: number } | { error: string } {
  const trimmed = text.trim();
  if (!WHOLE.test(trimmed)) return { error: `${JSON.stringify(text)} is not a duration: ${DURATION_HINT}` };
  let ms = 0;
  let previousRank = -1;
  for (const [, amount = '', unit = ''] of trimmed.matchAll(PART)) {
    const rank = UNIT_ORDER.indexOf(unit as Unit);
    if (rank <= previousRank) {
      return { error: `${JSON.stringify(text)} is not a duration: units must go from largest to smallest, each once (e.g. 1h30m)` };
    }
    previousRank = rank;
    ms += Number(amount) * UNIT_MS[unit as Unit];
  }
  if (!Number.isSafeInteger(ms)) return { error: `${JSON.stringify(text)} is too long a duration` };
  return { ms };
}

/** The shortest spelling: 90_000 → `1m30s`, 0 → `0s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let text = '';
  for (const unit of UNIT_ORDER) {
    const size = UNIT_MS[unit];
    const amount = Math.floor(rest / size);
    if (amount > 0) {
      text += `${amount}${unit}`;
      rest -= amount * size;
    }
  }
  return text;
}
