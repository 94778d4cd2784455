import { createNameFilter } from '../../config/patterns.js';
import type { FamilySamples } from '../../exposition/model.js';
import { SUMMARY_AGGREGATES, type SummaryAggregate, type Website, type WebsiteSummary } from './decode.js';
import { FamilyCollector, gaugeSpec, infoSpec } from '../shared/families.js';
import { boolToNumber, timestampSeconds } from '../shared/units.js';

/**
 * Maps `/websites` (websites with 24-hour aggregates) to website metrics. Pure: no I/O, no
 * clock. A 24-hour aggregate the list lacks is taken from the website's `/websites/{id}`
 * summary when the website_summary source has one (`withSummary`). A field neither sends
 * gives no series; a value outside its meaningful range (a percentage outside 0-100, a
 * negative duration) gives none either.
 */

const FROM = 'from /websites (24-hour aggregates it lacks from /websites/{id}), polled in the background';

export const WEBSITE_FAMILIES = {
  info: infoSpec('monapi_website_info', `Website facts (value 1): name and monitored URL, ${FROM}.`),
  enabled: gaugeSpec('monapi_website_enabled', `1 when upstream checks the website, 0 when its checks are paused, ${FROM}.`),
  interval: gaugeSpec(
    'monapi_website_check_interval_seconds',
    `Time between two upstream checks of the website, ${FROM}.`,
    'seconds',
  ),
  up: gaugeSpec('monapi_website_up', `1 when the website's latest upstream check succeeded, else 0 (upstream "up"), ${FROM}.`),
  uptime: gaugeSpec(
    'monapi_website_uptime_ratio',
    'Share of successful checks over a window, 0-1, as upstream computes it (a percentage upstream sends is divided by 100): window="24h" from /websites, window="7d" and "30d" from /websites/{id} when it reports them; polled in the background.',
    'ratio',
  ),
  ttfbAvg: gaugeSpec(
    'monapi_website_ttfb_24h_avg_seconds',
    `Mean time to first byte over the last 24 hours, as upstream computes it, ${FROM}.`,
    'seconds',
  ),
  ttfbP95: gaugeSpec(
    'monapi_website_ttfb_24h_p95_seconds',
    `95th percentile of the time to first byte over the last 24 hours, as upstream computes it, ${FROM}.`,
    'seconds',
  ),
  checks24h: gaugeSpec('monapi_website_checks_24h', `Checks upstream ran in the last 24 hours, ${FROM}.`),
  failures24h: gaugeSpec(
    'monapi_website_failures_24h',
    `Failed checks in the last 24 hours, ${FROM}.`,
  ),
  lastCheck: gaugeSpec(
    'monapi_website_last_check_timestamp_seconds',
    `Unix time of the website's latest upstream check, ${FROM}.`,
    'seconds',
  ),
  lastStatus: gaugeSpec(
    'monapi_website_last_status_code',
    `HTTP status code of the website's latest upstream check; 0 when it got no response, ${FROM}.`,
  ),
} as const;

export interface WebsiteMapOptions {
  /** The configured account name, put on every series. */
  readonly account: string;
}

/** The labels that identify one website on every website and check series. */
export function websiteLabels(account: string, website: Pick<Website, 'id' | 'name'>): { account: string; website_id: string; website: string } {
  return { account, website_id: String(website.id), website: website.name };
}

export function mapWebsites(list: readonly Website[], opts: WebsiteMapOptions): FamilySamples[] {
  const c = new FamilyCollector();
  const seen = new Set<number>();
  for (const site of list) {
    // An id listed twice (paging overlap) is one website: the first entry wins.
    if (seen.has(site.id)) continue;
    seen.add(site.id);
    const id = websiteLabels(opts.account, site);
    const put = (spec: (typeof WEBSITE_FAMILIES)[keyof typeof WEBSITE_FAMILIES], value: number | null | undefined) => {
      if (value !== undefined && value !== null && Number.isFinite(value)) c.add(spec, id, value);
    };
    c.add(WEBSITE_FAMILIES.info, { ...id, url: site.url ?? '' }, 1);
    if (site.enabled !== undefined) put(WEBSITE_FAMILIES.enabled, boolToNumber(site.enabled));
    put(WEBSITE_FAMILIES.interval, site.check_interval);
    if (site.up !== undefined) put(WEBSITE_FAMILIES.up, boolToNumber(site.up));
    const uptime = inRange(site.uptime_24h, 0, 1);
    if (uptime !== undefined) c.add(WEBSITE_FAMILIES.uptime, { ...id, window: '24h' }, uptime);
    put(WEBSITE_FAMILIES.ttfbAvg, inRange(site.ttfb_avg_24h, 0, Infinity));
    put(WEBSITE_FAMILIES.ttfbP95, inRange(site.ttfb_p95_24h, 0, Infinity));
    put(WEBSITE_FAMILIES.checks24h, site.checks_24h);
    put(WEBSITE_FAMILIES.failures24h, site.failures_24h);
    if (site.last_checked_at) put(WEBSITE_FAMILIES.lastCheck, timestampSeconds(site.last_checked_at, `website ${site.id} last_checked_at`));
    put(WEBSITE_FAMILIES.lastStatus, site.last_status_code);
  }
  return c.toFamilies();
}

/** The list item with the 24-hour aggregates it lacks taken from the website's summary. */
export function withSummary(site: Website, summary: WebsiteSummary | undefined): Website {
  if (summary === undefined) return site;
  const filled: Partial<Record<SummaryAggregate, number>> = {};
  for (const key of SUMMARY_AGGREGATES) {
    const value = summary[key];
    if (site[key] === undefined && value !== undefined) filled[key] = value;
  }
  return { ...site, ...filled };
}

/** The value when it lies within its meaningful range (a ratio 0-1, a duration from 0), else undefined. */
export function inRange(value: number | null | undefined, min: number, max: number): number | undefined {
  if (value === null || value === undefined || value < min || value > max) return undefined;
  return value;
}

export interface WebsiteFilters {
  /** Globs over website names (`shop.*`); empty: every website. */
  readonly includeNames: readonly string[];
  readonly excludeNames: readonly string[];
}

/**
 * The websites to poll checks for, in input order: the name matches an include glob (or
 * there are none) and no exclude glob. Exclusion wins. Website-level metrics (mapWebsites)
 * still cover every website, as host-level metrics cover every host.
 *
 * @example selectWebsites(list, { includeNames: ['*.example.com'], excludeNames: ['status.*'] })
 */
export function selectWebsites<W extends Pick<Website, 'name'>>(websites: readonly W[], filters: WebsiteFilters): W[] {
  const selected = createNameFilter({ include: filters.includeNames, exclude: filters.excludeNames });
  return websites.filter((w) => selected(w.name));
}
