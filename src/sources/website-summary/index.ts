import { MINUTE } from '../../config/schema.js';
import { endpoint } from '../../upstream/monitoring/client.js';
import { every, groupName, type MonitoringSource } from '../source.js';
import { decodeWebsiteSummary, WEBSITE_SUMMARY_FIELDS, type WebsiteSummary } from '../websites/decode.js';
import { SELECTED_WEBSITES } from '../websites/topics.js';
import { mapWebsiteSummary } from './map.js';
import { WEBSITE_SUMMARIES } from './topics.js';

export const WEBSITE_SUMMARY_ENDPOINT = endpoint('/websites/{id}', decodeWebsiteSummary);

/**
 * `/websites/{id}`, once per selected website (paused ones included) at a slow cadence (uptime and TTFB aggregates,
 * TLS and the certificate's expiry change slowly): its longer uptime windows are published
 * here; its 24-hour aggregates and certificate expiry complete the websites and checks
 * series (see map.ts).
 */
export const websiteSummarySource: MonitoringSource = {
  name: 'website_summary',
  section: 'account',
  toggle: { default: { sameAs: 'websites' } },
  // Uptime over days, TTFB aggregates and certificate expiry change slowly; one request per website.
  cadences: { website_summary: { default: '15m', minMs: 5 * MINUTE } },
  needs: { websites: 'the website list says which websites to fetch summaries for' },
  endpoints: [WEBSITE_SUMMARY_ENDPOINT],
  fields: WEBSITE_SUMMARY_FIELDS,
  priority: 'bulk',
  // Its one family, the uptime windows, is the websites source's (declared there; this source needs that one).
  families: [],
  // Paused websites too: no checks are made, but the certificate still expires and the summary says when.
  reads: [SELECTED_WEBSITES],
  create(ctx) {
    // The website list and the checks read the answers at their next poll; no job follows
    // them, so they are provided once and kept up to date in place.
    const summaries = new Map<number, WebsiteSummary>();
    ctx.provide(WEBSITE_SUMMARIES, summaries);
    const group = (key: string) => groupName('website_summary', ctx.unit.name, key);
    return {
      scope: 'target',
      targets: () => ctx.read(SELECTED_WEBSITES),
      cadence: () => every(ctx.cadenceMs('website_summary')),
      requestsPerRun: () => 1,
      async poll(website: { readonly id: number; readonly name: string }, signal) {
        const { value } = await ctx.upstream.get(WEBSITE_SUMMARY_ENDPOINT, { id: website.id });
        if (signal.aborted) return;
        summaries.set(website.id, value);
        ctx.sink.publish(group(String(website.id)), mapWebsiteSummary(value, { account: ctx.unit.name, websiteId: website.id, websiteName: website.name }));
      },
      forget(key) {
        summaries.delete(Number(key));
        ctx.sink.retract(group(key));
      },
    };
  },
};
