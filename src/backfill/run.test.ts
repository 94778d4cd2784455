import { describe, expect, it } from 'vitest';
import { parseConfig } from '../exporter/config.js';
import { backfillRate } from './run.js';

/** An account whose configuration states this rate limit (and the default headroom, 10 %). */
function account(requestsPerMinute: number, burst: number) {
  const config = parseConfig(`accounts:\n  - name: a\n    base_url: https://monitoring.example.com/api/v2\n    api_key_env: K\n    rate_limit:\n      requests_per_minute: ${requestsPerMinute}\n      burst: ${burst}\n`, {
    env: { K: 'key' },
  });
  const [first] = config.accounts;
  if (first === undefined) throw new Error('no account');
  return first;
}

describe('backfillRate', () => {
  it('takes by default what the live exporter leaves of the key: the limit times the headroom', () => {
    expect(backfillRate(account(120, 30), undefined)).toMatchObject({ ratePerMinute: 12, burst: 3, clampedFrom: undefined });
  });

  it('takes a --requests-per-minute within the limit as it is', () => {
    expect(backfillRate(account(120, 30), 120)).toMatchObject({ ratePerMinute: 120, burst: 30, clampedFrom: undefined });
    expect(backfillRate(account(120, 30), 60)).toMatchObject({ ratePerMinute: 60, burst: 15, clampedFrom: undefined });
  });

  it('holds a --requests-per-minute above the configured limit to it, and says it did', () => {
    expect(backfillRate(account(120, 30), 600)).toMatchObject({ ratePerMinute: 120, burst: 30, clampedFrom: 600, limit: { requestsPerMinute: 120, from: 'configuration' } });
  });

  it('holds the rate to a lower limit /account states than the configuration does', () => {
    const stated = { requestsPerMinute: 120, burst: 30 };
    expect(backfillRate(account(600, 100), 600, stated)).toMatchObject({ ratePerMinute: 120, burst: 30, clampedFrom: 600, limit: { requestsPerMinute: 120, from: '/account' } });
    // The default share is of the key's real limit.
    expect(backfillRate(account(600, 100), undefined, stated)).toMatchObject({ ratePerMinute: 12, burst: 3, clampedFrom: undefined });
    // A higher limit stated than configured: the configuration's holds, as for the live exporter.
    expect(backfillRate(account(120, 30), 600, { requestsPerMinute: 600, burst: 100 })).toMatchObject({ ratePerMinute: 120, clampedFrom: 600, limit: { from: 'configuration' } });
  });
});
