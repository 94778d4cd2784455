import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderText } from '../../exposition/render-text.js';
import type { Website, WebsiteSummary } from './decode.js';
import { mapWebsites, selectWebsites, WEBSITE_FAMILIES, withSummary } from './map.js';

function site(overrides: Partial<Website> = {}): Website {
  return { id: 40001, name: 'shop.example.com', url: 'https://shop.example.com/', ...overrides };
}

const ID = 'account="prod",website_id="40001",website="shop.example.com"';

/** The sample lines of the rendered exposition text, sorted. */
function lines(families: Parameters<typeof renderText>[0]): string[] {
  return renderText(families)
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .sort();
}
const LAST = Date.UTC(2026, 10, 22, 11, 59) / 1000;

describe('mapWebsites', () => {
  it.each([
    {
      name: 'every field present, converted to base units',
      input: [
        site({
          enabled: true,
          check_interval: 60,
          up: true,
          last_checked_at: '2026-11-22T11:59:00Z',
          last_status_code: 200,
          checks_24h: 1440,
          failures_24h: 3,
          uptime_24h: 0.99792,
          ttfb_avg_24h: 0.1824,
          ttfb_p95_24h: 0.42,
        }),
      ],
      want: [
        `monapi_website_check_interval_seconds{${ID}} 60`,
        `monapi_website_checks_24h{${ID}} 1440`,
        `monapi_website_enabled{${ID}} 1`,
        `monapi_website_failures_24h{${ID}} 3`,
        `monapi_website_info{${ID},url="https://shop.example.com/"} 1`,
        `monapi_website_last_check_timestamp_seconds{${ID}} ${LAST}`,
        `monapi_website_last_status_code{${ID}} 200`,
        `monapi_website_ttfb_24h_avg_seconds{${ID}} 0.1824`,
        `monapi_website_ttfb_24h_p95_seconds{${ID}} 0.42`,
        `monapi_website_up{${ID}} 1`,
        `monapi_website_uptime_ratio{${ID},window="24h"} 0.99792`,
      ],
    },
    {
      name: 'only the seed-certain fields: info alone',
      input: [site()],
      want: [`monapi_website_info{${ID},url="https://shop.example.com/"} 1`],
    },
    {
      name: 'absent aggregates (a website never checked yet) give no series; a down site with status 0',
      input: [site({ up: false, enabled: false, last_status_code: 0 })],
      want: [
        `monapi_website_enabled{${ID}} 0`,
        `monapi_website_info{${ID},url="https://shop.example.com/"} 1`,
        `monapi_website_last_status_code{${ID}} 0`,
        `monapi_website_up{${ID}} 0`,
      ],
    },
    {
      name: 'out-of-range values are dropped: a ratio above 1, negative durations',
      input: [site({ uptime_24h: 1.005, ttfb_avg_24h: -1, ttfb_p95_24h: -0.0005 })],
      want: [`monapi_website_info{${ID},url="https://shop.example.com/"} 1`],
    },
    {
      name: 'edges of the ranges are kept; huge counts are kept as sent',
      input: [site({ uptime_24h: 0, ttfb_avg_24h: 0, checks_24h: 2 ** 53 - 1 })],
      want: [
        `monapi_website_checks_24h{${ID}} 9007199254740991`,
        `monapi_website_info{${ID},url="https://shop.example.com/"} 1`,
        `monapi_website_ttfb_24h_avg_seconds{${ID}} 0`,
        `monapi_website_uptime_ratio{${ID},window="24h"} 0`,
      ],
    },
    {
      name: 'empty name and URL stay as empty label values; a repeated id counts once',
      input: [site({ name: '', url: '', up: true }), site({ name: 'again', up: false })],
      want: [
        'monapi_website_info{account="prod",website_id="40001",website="",url=""} 1',
        'monapi_website_up{account="prod",website_id="40001",website=""} 1',
      ],
    },
    {
      name: 'without a URL: an empty url label',
      input: [{ id: 40001, name: 'shop.example.com' }],
      want: [`monapi_website_info{${ID},url=""} 1`],
    },
    {
      name: 'no websites: nothing (every website series is retracted)',
      input: [],
      want: [],
    },
  ])('$name', ({ input, want }) => {
    expect(lines(mapWebsites(input, { account: 'prod' }))).toEqual([...want].sort());
  });

  it('says in HELP where the data comes from and that it is polled', () => {
    const text = renderText(mapWebsites([site({ up: true })], { account: 'prod' }));
    expect(text).toContain('# HELP monapi_website_up 1 when the website\'s latest upstream check succeeded, else 0 (upstream "up"), from /websites (24-hour aggregates it lacks from /websites/{id}), polled in the background.');
    expect(text).toContain('# TYPE monapi_website_info gauge');
  });
});

describe('withSummary', () => {
  const summary: WebsiteSummary = {
    uptime: { '24h': 0.995, '7d': 0.999 },
    uptime_24h: 0.995,
    ttfb_avg_24h: 0.21,
  };
  it('fills the 24-hour aggregates the list lacks from the summary', () => {
    const got = lines(mapWebsites([withSummary(site(), summary)], { account: 'prod' }));
    expect(got).toContain(`monapi_website_uptime_ratio{${ID},window="24h"} 0.995`);
    expect(got).toContain(`monapi_website_ttfb_24h_avg_seconds{${ID}} 0.21`);
    expect(got.some((l) => l.includes('window="7d"'))).toBe(false);
  });

  it('keeps what the list has: it is polled more often', () => {
    const got = withSummary(site({ uptime_24h: 0.98, checks_24h: 10 }), summary);
    expect(got).toEqual(site({ uptime_24h: 0.98, checks_24h: 10, ttfb_avg_24h: 0.21 }));
    expect(withSummary(site(), undefined)).toEqual(site());
  });
});

describe('selectWebsites', () => {
  const list = [site({ id: 1, name: 'shop.example.com' }), site({ id: 2, name: 'status.example.com' }), site({ id: 3, name: 'blog.other.org' })];

  it.each([
    { name: 'no filters: every website', include: [], exclude: [], want: [1, 2, 3] },
    { name: 'include glob', include: ['*.example.com'], exclude: [], want: [1, 2] },
    { name: 'exclude wins over include', include: ['*.example.com'], exclude: ['status.*'], want: [1] },
    { name: 'exclude only', include: [], exclude: ['blog.*'], want: [1, 2] },
    { name: 'include matching nothing', include: ['nope'], exclude: [], want: [] },
    { name: 'matching is anchored and case-sensitive', include: ['Shop.example.com', 'example.com'], exclude: [], want: [] },
  ])('$name', ({ include, exclude, want }) => {
    expect(selectWebsites(list, { includeNames: include, excludeNames: exclude }).map((w) => w.id)).toEqual(want);
  });
});

describe('src/sources/websites/metrics.md', () => {
  it('has one row per family, with the type and unit the code gives it', () => {
    const doc = readFileSync(new URL('./metrics.md', import.meta.url), 'utf8');
    const rows = doc.split('\n').filter((line) => line.startsWith('| monapi_'));
    const specs = Object.values(WEBSITE_FAMILIES);
    expect(rows.map((row) => row.split(' | ')[0]?.slice(2)).sort()).toEqual(specs.map((s) => s.name).sort());
    for (const spec of specs) expect(rows).toContainEqual(expect.stringContaining(`| ${spec.name} | ${spec.type} | ${spec.unit ?? ''} |`));
  });
});
