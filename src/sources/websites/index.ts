import { globList, section, SECOND } from '../../config/schema.js';
import type { SettingsInput } from '../../config/source-spec.js';
import { endpoint } from '../../upstream/monitoring/client.js';
import { every, familyNames, groupName, type MonitoringSource } from '../source.js';
import { WEBSITE_SUMMARIES } from '../website-summary/topics.js';
import { decodeWebsites, WEBSITE_FIELDS, type Website } from './decode.js';
import { mapWebsites, selectWebsites, WEBSITE_FAMILIES, withSummary, type WebsiteFilters } from './map.js';
import { SELECTED_WEBSITES } from './topics.js';

export const WEBSITES_ENDPOINT = endpoint('/websites', decodeWebsites);

/**
 * `/websites`: the 24-hour aggregates of every website, and the websites the per-website
 * sources poll: those the website filters select; those upstream does not check
 * (`enabled: false`) are asked for their summary only, since they cannot have new checks.
 */
export const websitesSource: MonitoringSource<WebsiteFilters> = {
  name: 'websites',
  section: 'account',
  toggle: { default: true },
  cadences: { websites: { default: '60s', minMs: 30 * SECOND } },
  keys: { websites: section({ include_names: globList('name', []), exclude_names: globList('name', []) }) },
  settings: ({ section: raw }: SettingsInput): WebsiteFilters => {
    // The schema above made this key; the loader hands every section over untyped.
    const { websites } = raw as { websites: { include_names: string[]; exclude_names: string[] } };
    return { includeNames: websites.include_names, excludeNames: websites.exclude_names };
  },
  endpoints: [WEBSITES_ENDPOINT],
  fields: WEBSITE_FIELDS,
  readsList: WEBSITES_ENDPOINT.decode.list !== undefined,
  priority: 'high',
  families: familyNames(WEBSITE_FAMILIES),
  reads: [WEBSITE_SUMMARIES],
  create(ctx) {
    let polledCount = 0;
    return {
      scope: 'unit',
      cadence: () => every(ctx.cadenceMs('websites')),
      status: () => ({ websites_polled: polledCount }),
      async poll() {
        const { value } = await ctx.upstream.get(WEBSITES_ENDPOINT, {}, {}, 'high');
        const summaries = ctx.read(WEBSITE_SUMMARIES);
        const websites = value.websites.map((site) => withSummary(site, summaries.get(site.id)));
        ctx.sink.publish(groupName('websites', ctx.unit.name), mapWebsites(websites, { account: ctx.unit.name }));
        const selected = new Map<string, Website>();
        for (const website of selectWebsites(websites, ctx.settings)) if (!selected.has(String(website.id))) selected.set(String(website.id), website);
        polledCount = [...selected.values()].filter((website) => website.enabled !== false).length;
        ctx.provide(SELECTED_WEBSITES, selected);
      },
    };
  },
};
