import { describe, expect, it } from 'vitest';
import type { Account } from './decode.js';
import { familyHeads, sampleLines } from '../../../test/support/family-lines.js';
import { mapAccount } from './map.js';

function account(parts: Partial<Account> = {}): Account {
  return { limits: {}, usage: {}, rate_limit: {}, ...parts };
}

describe('mapAccount', () => {
  it.each<{ name: string; input: Account; want: string[] }>([
    {
      name: 'everything present',
      input: account({
        plan: 'business',
        limits: { hosts: 50, websites: 20, retention_days: 90 },
        usage: { hosts: 12, websites: 3 },
        rate_limit: { requests_per_minute: 120, burst: 30 },
      }),
      want: [
        'monapi_account_host_limit{account="prod"} 50',
        'monapi_account_hosts{account="prod"} 12',
        'monapi_account_info{account="prod",plan="business"} 1',
        'monapi_account_rate_limit_burst{account="prod"} 30',
        'monapi_account_rate_limit_requests_per_second{account="prod"} 2',
        `monapi_account_retention_seconds{account="prod"} ${90 * 86400}`,
        'monapi_account_website_limit{account="prod"} 20',
        'monapi_account_websites{account="prod"} 3',
      ],
    },
    { name: 'only the plan', input: account({ plan: 'pro' }), want: ['monapi_account_info{account="prod",plan="pro"} 1'] },
    { name: 'no plan named: an empty plan label', input: account(), want: ['monapi_account_info{account="prod",plan=""} 1'] },
    {
      name: 'partial objects and zero limits',
      input: account({ plan: '', limits: { hosts: 0 }, rate_limit: { requests_per_minute: 90 } }),
      want: [
        'monapi_account_host_limit{account="prod"} 0',
        'monapi_account_info{account="prod",plan=""} 1',
        'monapi_account_rate_limit_requests_per_second{account="prod"} 1.5',
      ],
    },
  ])('$name', ({ input, want }) => {
    expect(sampleLines(mapAccount(input, { account: 'prod' }))).toEqual(want);
  });

  it('declares units where the name carries one', () => {
    expect(familyHeads(mapAccount(account({ plan: 'pro', limits: { retention_days: 30 } }), { account: 'a' }))).toEqual([
      'monapi_account_info info',
      'monapi_account_retention_seconds gauge seconds',
    ]);
  });
});
