import { describe, expect, it } from 'vitest';
import type { WebsiteSummary } from '../websites/decode.js';
import { sampleLines } from '../../../test/support/family-lines.js';
import { exactCertExpiryMs, mapWebsiteSummary } from './map.js';

const ID = 'account="prod",website="shop",website_id="7"';
const OPTS = { account: 'prod', websiteId: 7, websiteName: 'shop' };
const summary = (parts: Partial<WebsiteSummary>): WebsiteSummary => ({ uptime: {}, ...parts });

describe('mapWebsiteSummary', () => {
  it.each([
    {
      name: 'the longer windows, as ratios; 24 hours is the list\'s',
      input: summary({ uptime: { '24h': 0.99, '7d': 0.995, '30d': 0.9825 } }),
      want: [`monapi_website_uptime_ratio{${ID},window="30d"} 0.9825`, `monapi_website_uptime_ratio{${ID},window="7d"} 0.995`],
    },
    { name: 'a window out of range gives nothing', input: summary({ uptime: { '7d': 1.01 } }), want: [] },
    { name: 'no windows: nothing', input: summary({}), want: [] },
  ])('$name', ({ input, want }) => {
    expect(sampleLines(mapWebsiteSummary(input, OPTS))).toEqual(want);
  });
});

describe('exactCertExpiryMs', () => {
  it.each<[WebsiteSummary | undefined, number | undefined]>([
    [summary({ tls: { cert_expires_at: '2027-01-02T08:00:00Z' } }), Date.UTC(2027, 0, 2, 8)],
    [summary({ tls: { cert_remaining: 4 * 86400 } }), undefined],
    [undefined, undefined],
  ])('%j → %s', (input, want) => {
    expect(exactCertExpiryMs(input)).toBe(want);
  });
});
