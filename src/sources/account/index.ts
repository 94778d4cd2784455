import { MINUTE } from '../../config/schema.js';
import { endpoint } from '../../upstream/monitoring/client.js';
import { every, familyNames, groupName, type MonitoringSource } from '../source.js';
import { ACCOUNT_FIELDS, decodeAccount, type Account } from './decode.js';
import { ACCOUNT_FAMILIES, mapAccount } from './map.js';

export const ACCOUNT_ENDPOINT = endpoint('/account', decodeAccount);

/**
 * `/account`: plan, limits, usage and rate limit; rarely changes, so polled rarely. The rate
 * limit it states goes to the runtime, which lowers the request budget to it when it is
 * below the configured one. `/status` shows the plan and its limits as last stated.
 */
export const accountSource: MonitoringSource = {
  name: 'account',
  section: 'account',
  toggle: { default: true },
  cadences: { account: { default: '5m', minMs: MINUTE } },
  endpoints: [ACCOUNT_ENDPOINT],
  fields: ACCOUNT_FIELDS,
  priority: 'high',
  families: familyNames(ACCOUNT_FAMILIES),
  create(ctx) {
    let latest: Account | undefined;
    return {
      scope: 'unit',
      cadence: () => every(ctx.cadenceMs('account')),
      async poll() {
        const { value } = await ctx.upstream.get(ACCOUNT_ENDPOINT, {}, {}, 'high');
        latest = value;
        ctx.sink.publish(groupName('account', ctx.unit.name), mapAccount(value, { account: ctx.unit.name }));
        ctx.upstreamRateLimit?.({ requestsPerMinute: value.rate_limit.requests_per_minute, burst: value.rate_limit.burst });
      },
      // The plan as the upstream last stated it, for /status (`plan` there is the polling plan).
      status: () =>
        latest && {
          subscription: {
            plan: latest.plan,
            host_limit: latest.limits.hosts,
            website_limit: latest.limits.websites,
            hosts_used: latest.usage.hosts,
            websites_used: latest.usage.websites,
            rate_limit_per_minute: latest.rate_limit.requests_per_minute,
          },
        },
    };
  },
};
