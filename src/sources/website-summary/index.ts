import { detailsOf, groupName, type SourceContext, type WebsiteSource } from '../types.js';
import { mapWebsiteSummary } from './map.js';

/**
 * `/websites/{id}`, once per selected website at a slow cadence (uptime and TTFB aggregates,
 * TLS and the certificate's expiry change slowly): its longer uptime windows are published
 * here; its 24-hour aggregates and certificate expiry complete the websites and checks
 * series (see map.ts).
 */
export function createWebsiteSummarySource(ctx: SourceContext): WebsiteSource {
  const summaries = () => detailsOf(ctx.inventory).websites;
  const group = (key: string) => groupName('website_summary', ctx.account.name, key);
  return {
    name: 'website_summary',
    toggle: 'websiteSummary',
    // Its one family, the uptime windows, is the websites source's (declared there; this source needs that one).
    families: [],
    scope: 'website',
    priority: 'bulk',
    cadenceMs: () => ctx.account.cadenceMs.websiteSummary,
    requestsPerRun: () => 1,
    async poll(website, signal) {
      const { value } = await ctx.client.websiteSummary(website.id);
      if (signal.aborted) return;
      summaries().set(website.id, value);
      ctx.sink.publish(group(String(website.id)), mapWebsiteSummary(value, { account: ctx.account.name, websiteId: website.id, websiteName: website.name }));
    },
    forget(key) {
      summaries().delete(Number(key));
      ctx.sink.retract(group(key));
    },
  };
}
