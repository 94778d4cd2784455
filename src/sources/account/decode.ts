import { readObject, type JsonDecoder } from '../../upstream/tolerant/body.js';
import type { Fields } from '../../upstream/tolerant/fields.js';
import { integer, nonEmptyString, number, type ValueReader } from '../../upstream/tolerant/values.js';
import { durationSeconds } from '../alert-rules/decode.js';

/**
 * `/account`: "plan, limits, usage and rate limit", body not shown. Every field is optional
 * (none is needed to know the account answers); the body must be an object, at the top
 * level or under `account` or `data`. The plan may be a string or an object with a name;
 * the rate limit may be per minute (`requests_per_minute`, `per_minute`, `rpm`), per second,
 * or a `limit` over a `window`.
 */
export interface Account {
  readonly plan?: string;
  readonly limits: { readonly hosts?: number; readonly websites?: number; readonly retention_days?: number };
  readonly usage: { readonly hosts?: number; readonly websites?: number; readonly api_requests_today?: number };
  readonly rate_limit: { readonly requests_per_minute?: number; readonly burst?: number; readonly remaining?: number };
}

const SECONDS_PER_DAY = 86_400;

/** Days as a number, or a duration such as `30d`. */
const days: ValueReader<number> = (raw) => {
  if (typeof raw === 'string' && /[smhdw]\s*$/i.test(raw)) {
    const weeks = /^\s*(\d+)\s*w\s*$/i.exec(raw);
    if (weeks) return { ok: true, value: Number(weeks[1]) * 7 };
    const read = durationSeconds(raw);
    return read.ok ? { ok: true, value: read.value / SECONDS_PER_DAY } : read;
  }
  return number(raw);
};

const count = (f: Fields, names: readonly string[]) => {
  const value = f.optional(names, integer);
  return value !== undefined && value >= 0 ? value : undefined;
};

function requestsPerMinute(f: Fields): number | undefined {
  const perMinute = f.optional(
    ['rate_limit.requests_per_minute', 'rate_limit.per_minute', 'rate_limit.rpm', 'rate_limit_per_minute', 'requests_per_minute', 'limits.requests_per_minute', 'limits.rate_limit', 'rate_limit'],
    number,
  );
  if (perMinute !== undefined) return perMinute;
  const perSecond = f.optional(['rate_limit.requests_per_second', 'rate_limit.per_second', 'requests_per_second'], number);
  if (perSecond !== undefined) return perSecond * 60;
  const limit = f.optional(['rate_limit.limit', 'rate_limit.requests'], number);
  if (limit === undefined) return undefined;
  const window = f.optional(['rate_limit.window_seconds', 'rate_limit.window', 'rate_limit.period', 'rate_limit.interval'], durationSeconds);
  return window === undefined || window <= 0 ? limit : (limit * 60) / window;
}

export function readAccount(f: Fields): Account {
  const plan = f.optional(['plan', 'plan.name', 'plan.tier', 'plan.id', 'plan_name', 'tier', 'subscription.plan', 'subscription.plan.name'], nonEmptyString);
  const rate = requestsPerMinute(f);
  const burst = f.optional(['rate_limit.burst', 'rate_limit.burst_limit', 'rate_limit.max_burst', 'burst'], number);
  const remaining = f.optional(['rate_limit.remaining'], number);
  const retention = f.optional(['limits.retention_days', 'retention_days', 'plan.retention_days', 'limits.retention', 'retention'], days);
  return {
    plan,
    limits: {
      hosts: count(f, ['limits.hosts', 'limits.max_hosts', 'limits.host_limit', 'host_limit', 'max_hosts', 'plan.max_hosts', 'plan.hosts']),
      websites: count(f, ['limits.websites', 'limits.max_websites', 'limits.website_limit', 'website_limit', 'max_websites', 'plan.max_websites', 'plan.websites']),
      retention_days: retention !== undefined && retention > 0 ? retention : undefined,
    },
    usage: {
      hosts: count(f, ['usage.hosts', 'usage.hosts_used', 'usage.host_count', 'hosts_used', 'host_count']),
      websites: count(f, ['usage.websites', 'usage.websites_used', 'usage.website_count', 'websites_used', 'website_count']),
      api_requests_today: count(f, ['usage.api_requests_today', 'usage.requests_today', 'usage.api_requests', 'api_requests_today']),
    },
    rate_limit: {
      requests_per_minute: rate !== undefined && rate > 0 ? rate : undefined,
      burst: burst !== undefined && burst >= 1 ? Math.floor(burst) : undefined,
      remaining: remaining !== undefined && remaining >= 0 ? remaining : undefined,
    },
  };
}

export const decodeAccount: JsonDecoder<Account> = (raw, context) => {
  const { value, notes } = readObject(raw, context, {
    what: 'account',
    keys: ['account'],
    signature: ['plan', 'limits', 'usage', 'rate_limit', 'tier'],
    read: readAccount,
  });
  return { value, dropped: [], notes };
};
