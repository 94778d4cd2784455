/**
 * The words of a key, as the field finder compares them. A key is split at separators
 * (`_`, `-`, `.`, spaces), at camelCase humps and between letters and digits where that
 * makes a unit (`uptime24h` → uptime 24h); each word is lowercased and put in its canonical
 * form, so `uptime_24h`, `uptime.24h`, `last_24h.uptime`, `lastDay.uptime` and
 * `uptime_pct_24h` all carry the words `uptime` and `24h` (the last one also `pct`).
 */

/**
 * Periods: the canonical word, and what else means it. A singular word is a period
 * (`per_minute`, `last_day`); a plural one is a unit (`retention_days`, `interval_seconds`).
 */
export const PERIOD_WORDS: Readonly<Record<string, readonly string[]>> = {
  '1s': ['1s', 'second'],
  '1m': ['1m', 'minute', '60s', '1min'],
  '1h': ['1h', 'hour', 'hourly', '60m', '60min', '1hr'],
  '24h': ['24h', '1d', 'day', 'daily', '24hours', '24hrs', '24hr'],
  '7d': ['7d', '1w', 'week', 'weekly', '7days', '168h'],
  '30d': ['30d', 'month', 'monthly', '30days', '1mo', '720h'],
};

/** Units of time: the canonical word, and its spellings. */
export const TIME_UNIT_WORDS: Readonly<Record<string, readonly string[]>> = {
  seconds: ['seconds', 's', 'sec', 'secs'],
  minutes: ['minutes', 'mins'],
  hours: ['hours', 'hrs'],
  days: ['days'],
  weeks: ['weeks'],
};

/** Other words with several spellings. */
const SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  pct: ['pct', 'percent', 'percentage', 'perc', 'percents'],
  ratio: ['ratio', 'fraction', 'rate_ratio'],
  avg: ['avg', 'average', 'mean'],
  p95: ['p95', '95th', 'pctl95', 'percentile95', '95p', 'q95'],
  p99: ['p99', '99th', 'pctl99', 'percentile99', '99p'],
  p50: ['p50', 'median', '50th', 'pctl50'],
  max: ['max', 'maximum', 'peak'],
  min: ['min_value', 'minimum'],
  count: ['count', 'num', 'number', 'total', 'cnt', 'n'],
  id: ['id', 'ids', 'identifier'],
  uuid: ['uuid', 'uuids', 'guid'],
  ttfb: ['ttfb', 'firstbyte', 'first_byte'],
  cert: ['cert', 'certificate', 'certs'],
  tls: ['tls', 'ssl'],
  expires: ['expires', 'expiry', 'expiration', 'expire', 'notafter', 'not_after', 'valid_until', 'validuntil', 'valid_to'],
  failures: ['failures', 'failure', 'failed', 'fails', 'errors', 'down'],
  checks: ['checks', 'check', 'checked'],
  hosts: ['hosts', 'host', 'servers', 'server', 'machines', 'nodes'],
  websites: ['websites', 'website', 'sites', 'site', 'monitors', 'urls'],
  requests: ['requests', 'request', 'req', 'reqs', 'calls', 'call'],
  limit: ['limit', 'limits', 'quota', 'max_allowed', 'allowance', 'allowed_max'],
  retention: ['retention', 'history', 'keep'],
  duration: ['duration', 'for', 'pending'],
  usage: ['usage', 'used', 'consumed', 'in_use', 'inuse'],
};

/** Words that carry no meaning for matching (JSON:API's `attributes` and `relationships`, HAL's `_embedded` are envelopes). */
const FILLER = new Set(['last', 'the', 'of', 'in', 'a', 'an', 'data', 'stats', 'stat', 'info', 'current', 'is', 'has', 'past', 'attributes', 'relationships', 'embedded']);

const CANONICAL = new Map<string, string>();
for (const [canonical, spellings] of [...Object.entries(PERIOD_WORDS), ...Object.entries(TIME_UNIT_WORDS), ...Object.entries(SYNONYMS)]) {
  for (const spelling of spellings) if (!CANONICAL.has(spelling)) CANONICAL.set(spelling, canonical);
}

/** Multi-word spellings without their separators (`validTo`, `NotAfter`), for keys written in one piece. */
const WHOLE = new Map([...CANONICAL].filter(([spelling]) => /[_\s]/.test(spelling)).map(([spelling, canonical]) => [spelling.replace(/[_\s]/g, ''), canonical]));

const PERIODS = new Set(Object.keys(PERIOD_WORDS));

/** Whether a canonical word is a period (1s, 1m, 1h, 24h, 7d, 30d). */
export function isPeriod(word: string): boolean {
  return PERIODS.has(word);
}

/** The length in seconds of a period or of one of a time unit. */
export const WORD_SECONDS: Readonly<Record<string, number>> = {
  '1s': 1,
  '1m': 60,
  '1h': 3_600,
  '24h': 86_400,
  '7d': 604_800,
  '30d': 2_592_000,
  ms: 0.001,
  seconds: 1,
  minutes: 60,
  hours: 3_600,
  days: 86_400,
  weeks: 604_800,
};

const SPLIT = /[\s_.\-/:]+/;

/** `uptimePct24h` → `uptime pct 24h`: camel humps and digit runs become separate raw words. */
function rawWords(key: string): string[] {
  const spaced = key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/(\d)([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    // A digit run with its unit letters is one word (24h, 7d, 30d, 95th, 1min); a word before
    // it is another (uptime24h), but one letter and digits stay one (p95, v2).
    .replace(/([a-zA-Z]{2,})(\d)/g, '$1 $2');
  return spaced.split(SPLIT).filter((w) => w !== '');
}

const cache = new Map<string, readonly string[]>();

/** The canonical words of one key (one segment of a path), fillers left out. */
export function keyWords(key: string): readonly string[] {
  const known = cache.get(key);
  if (known !== undefined) return known;
  const words: string[] = [];
  const raw = rawWords(key).map((w) => w.toLowerCase());
  for (let i = 0; i < raw.length; i++) {
    const word = raw[i] ?? '';
    const next = raw[i + 1];
    // "24 hours", "7 days", "30 days", "95 th": a number and its unit are one word.
    if (/^\d+$/.test(word) && next !== undefined && /^[a-z]+$/.test(next)) {
      const joined = CANONICAL.get(`${word}${next}`) ?? CANONICAL.get(`${word}${next.slice(0, 1)}`);
      if (joined !== undefined) {
        words.push(joined);
        i++;
        continue;
      }
    }
    const canonical = CANONICAL.get(word) ?? word;
    if (!FILLER.has(canonical)) words.push(canonical);
  }
  // A whole key that is itself a known spelling (`first_byte`, `not_after`) counts as that word too.
  const whole = CANONICAL.get(key.toLowerCase()) ?? WHOLE.get(key.toLowerCase().replace(/[\s_.\-/:]+/g, ''));
  if (whole !== undefined && !words.includes(whole)) words.push(whole);
  if (cache.size < 10_000) cache.set(key, words);
  return words;
}
