import { detailsOf, familyNames, groupName, type AccountSource, type SourceContext } from '../types.js';
import { mapWebsites, selectWebsites, WEBSITE_FAMILIES, withSummary } from './map.js';

/**
 * `/websites`: the 24-hour aggregates of every website, and the inventory of websites the
 * per-website sources poll: those the website filters select, less those upstream does not
 * check (`enabled: false`), which cannot have new checks.
 */
export function createWebsitesSource(ctx: SourceContext): AccountSource {
  return {
    name: 'websites',
    toggle: 'websites',
    families: familyNames(WEBSITE_FAMILIES),
    scope: 'account',
    priority: 'high',
    cadence: 'websites',
    async poll() {
      const { value } = await ctx.client.websites();
      const summaries = detailsOf(ctx.inventory).websites;
      const websites = value.websites.map((site) => withSummary(site, summaries.get(site.id)));
      ctx.sink.publish(groupName('websites', ctx.account.name), mapWebsites(websites, { account: ctx.account.name }));

      const polled = selectWebsites(websites, ctx.account.websites).filter((w) => w.enabled !== false);
      ctx.inventory.websites.clear();
      for (const website of polled) {
        if (!ctx.inventory.websites.has(website.id)) ctx.inventory.websites.set(website.id, website);
      }
      ctx.inventoryChanged();
    },
  };
}
