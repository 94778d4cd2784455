import { familyNames, groupName, type AccountSource, type MonitoringSourceFactory } from '../types.js';
import { ACCOUNT_FAMILIES, mapAccount } from './map.js';

/**
 * `/account`: plan, limits, usage and rate limit; rarely changes, so polled rarely. The rate
 * limit it states goes to the runtime, which lowers the request budget to it when it is
 * below the configured one.
 */
export const createAccountSource: MonitoringSourceFactory = (ctx): AccountSource => ({
  name: 'account',
  toggle: 'account',
  families: familyNames(ACCOUNT_FAMILIES),
  scope: 'account',
  priority: 'high',
  cadence: 'account',
  async poll() {
    const { value } = await ctx.client.account();
    ctx.sink.publish(groupName('account', ctx.account.name), mapAccount(value, { account: ctx.account.name }));
    ctx.upstreamRateLimit?.({ requestsPerMinute: value.rate_limit.requests_per_minute, burst: value.rate_limit.burst });
  },
});
