import { readFieldObject } from '../../upstream/fields/body.js';
import { declareFields } from '../../upstream/fields/declare.js';
import { scaled } from '../../upstream/fields/kinds.js';
import { findersOf } from '../../upstream/fields/resolve.js';
import type { JsonDecoder } from '../../upstream/tolerant/body.js';

/**
 * `/account`: "plan, limits, usage and rate limit", body not shown. Each figure is declared
 * with the words that name it and found wherever it sits: flat (`host_limit`), under a
 * category (`limits.hosts`, `quotas.hosts.max`, `plan.max_hosts`), as a string; the rate
 * limit as requests per minute or second, or a count with its period
 * (`{requests: 120, period: "1m"}`). An answer that carries none of them is a shape failure.
 */
export const ACCOUNT_FIELDS = declareFields({
  plan: {
    kind: 'string',
    about: 'the plan tier (pro, business, ...)',
    words: [['plan', 'name'], ['plan', 'tier'], ['plan'], ['tier'], ['subscription', 'name'], ['subscription']],
    not: ['hosts', 'websites', 'retention', 'limit', 'max', 'requests', 'rate', 'usage', 'at', 'price', 'currency', 'billing', 'url', 'upgrade', 'interval', 'status', 'id', 'features'],
    useful: true,
  },
  host_limit: { kind: 'count', about: 'hosts the plan allows', words: [['hosts', 'limit'], ['max', 'hosts'], ['hosts', 'allowed']], not: ['usage', 'remaining', 'online', 'offline'], useful: true },
  website_limit: { kind: 'count', about: 'websites the plan allows', words: [['websites', 'limit'], ['max', 'websites'], ['websites', 'allowed']], not: ['usage', 'remaining'], useful: true },
  retention: { kind: 'duration', about: 'how long upstream keeps the data', words: [['retention']], unit: 'days', useful: true },
  hosts_used: { kind: 'count', about: 'hosts the account uses', words: [['usage', 'hosts'], ['hosts', 'count'], ['hosts', 'active']], not: ['max', 'allowed', 'remaining'], useful: true },
  websites_used: { kind: 'count', about: 'websites the account uses', words: [['usage', 'websites'], ['websites', 'count'], ['websites', 'active']], not: ['max', 'allowed', 'remaining'], useful: true },
  rate_limit: {
    kind: 'rate',
    about: 'API requests allowed per key, sustained',
    words: [['rate', 'limit'], ['requests', 'limit'], ['rate'], ['requests']],
    not: ['burst', 'remaining', 'reset', 'usage', 'today', 'retry'],
    periodSeconds: 60,
    useful: true,
  },
  burst: { kind: 'count', about: 'API requests allowed in a burst per key', words: [['burst']], not: ['remaining', 'reset'], useful: true },
});

export interface Account {
  readonly plan?: string;
  readonly limits: { readonly hosts?: number; readonly websites?: number; readonly retention_days?: number };
  readonly usage: { readonly hosts?: number; readonly websites?: number };
  readonly rate_limit: { readonly requests_per_minute?: number; readonly burst?: number };
}

const SECONDS_PER_DAY = 86_400;
const accountFinder = findersOf(ACCOUNT_FIELDS);

export const decodeAccount: JsonDecoder<Account> = (raw, context, options) => {
  const { record: r, report, notes } = readFieldObject(raw, context, { what: 'account', keys: ['account'], finder: accountFinder(options?.fieldPaths) });
  const positive = (value: number | undefined) => (value !== undefined && value > 0 ? value : undefined);
  const value: Account = {
    ...(r.plan !== undefined && r.plan.trim() !== '' && { plan: r.plan }),
    limits: {
      hosts: r.host_limit,
      websites: r.website_limit,
      retention_days: r.retention === undefined ? undefined : positive(r.retention / SECONDS_PER_DAY),
    },
    usage: { hosts: r.hosts_used, websites: r.websites_used },
    rate_limit: {
      requests_per_minute: r.rate_limit === undefined ? undefined : positive(scaled(r.rate_limit, 60)),
      burst: r.burst !== undefined && r.burst >= 1 ? r.burst : undefined,
    },
  };
  return { value, dropped: [], notes, fields: report };
};
