import type { FamilySamples } from '../../exposition/model.js';
import type { UptimeWindow, WebsiteSummary } from '../websites/decode.js';
import { FamilyCollector } from '../shared/families.js';
import { inRange, WEBSITE_FAMILIES, websiteLabels } from '../websites/map.js';

/**
 * Maps `/websites/{id}` to what only the summary has: uptime over its longer windows (7 days,
 * 30 days) in the websites' uptime family. Pure. The summary's 24-hour aggregates fill gaps
 * of the `/websites` list (websites/map.ts `withSummary`) and its TLS certificate expiry
 * makes the check gauges exact (checks/map.ts): they are published there, once.
 */

/** Windows published here; 24h is the list's. */
export const SUMMARY_WINDOWS: readonly UptimeWindow[] = ['7d', '30d'];

export interface WebsiteSummaryMapOptions {
  readonly account: string;
  readonly websiteId: number;
  readonly websiteName: string;
}

export function mapWebsiteSummary(summary: WebsiteSummary, opts: WebsiteSummaryMapOptions): FamilySamples[] {
  const id = websiteLabels(opts.account, { id: opts.websiteId, name: opts.websiteName });
  const c = new FamilyCollector();
  for (const window of SUMMARY_WINDOWS) {
    const ratio = inRange(summary.uptime[window], 0, 1);
    if (ratio !== undefined) c.add(WEBSITE_FAMILIES.uptime, { ...id, window }, ratio);
  }
  return c.toFamilies();
}

/** The certificate's exact expiry in ms, when the summary gives it. */
export function exactCertExpiryMs(summary: WebsiteSummary | undefined): number | undefined {
  const text = summary?.tls?.cert_expires_at;
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}
