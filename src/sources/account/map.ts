import type { FamilySamples } from '../../exposition/model.js';
import type { Account } from './decode.js';
import { FamilyCollector, gaugeSpec, infoSpec } from '../shared/families.js';

/**
 * Maps `/account` to plan, limits, usage and rate limit. Pure. Absent fields give no series;
 * an account that names no plan has `plan=""`.
 */

const FROM = 'from /account, polled in the background';

export const ACCOUNT_FAMILIES = {
  info: infoSpec('monapi_account_info', `Account plan tier (value 1), ${FROM}.`),
  hostLimit: gaugeSpec('monapi_account_host_limit', `Hosts the plan allows; hosts beyond it are listed with allowed=false, ${FROM}.`),
  websiteLimit: gaugeSpec('monapi_account_website_limit', `Websites the plan allows, ${FROM}.`),
  retention: gaugeSpec('monapi_account_retention_seconds', `Data retention of the plan (upstream days × 86400), ${FROM}.`, 'seconds'),
  hosts: gaugeSpec('monapi_account_hosts', `Hosts the account uses, as upstream counts them, ${FROM}.`),
  websites: gaugeSpec('monapi_account_websites', `Websites the account uses, as upstream counts them, ${FROM}.`),
  rate: gaugeSpec(
    'monapi_account_rate_limit_requests_per_second',
    `Sustained API request rate upstream allows per key (its requests per minute / 60); when below the configured rate limit, the exporter's request budget follows it, ${FROM}.`,
  ),
  burst: gaugeSpec('monapi_account_rate_limit_burst', `API requests allowed in a burst per key, ${FROM}.`),
} as const;

export interface AccountMapOptions {
  readonly account: string;
}

const SECONDS_PER_DAY = 86_400;

export function mapAccount(body: Account, opts: AccountMapOptions): FamilySamples[] {
  const labels = { account: opts.account };
  const c = new FamilyCollector();
  const put = (spec: (typeof ACCOUNT_FAMILIES)[keyof typeof ACCOUNT_FAMILIES], value: number | undefined) => {
    if (value !== undefined) c.add(spec, labels, value);
  };
  c.add(ACCOUNT_FAMILIES.info, { ...labels, plan: body.plan ?? '' }, 1);
  put(ACCOUNT_FAMILIES.hostLimit, body.limits?.hosts);
  put(ACCOUNT_FAMILIES.websiteLimit, body.limits?.websites);
  const days = body.limits?.retention_days;
  put(ACCOUNT_FAMILIES.retention, days === undefined ? undefined : days * SECONDS_PER_DAY);
  put(ACCOUNT_FAMILIES.hosts, body.usage?.hosts);
  put(ACCOUNT_FAMILIES.websites, body.usage?.websites);
  const perMinute = body.rate_limit?.requests_per_minute;
  put(ACCOUNT_FAMILIES.rate, perMinute === undefined ? undefined : perMinute / 60);
  put(ACCOUNT_FAMILIES.burst, body.rate_limit?.burst);
  return c.toFamilies();
}
