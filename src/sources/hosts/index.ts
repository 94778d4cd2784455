import { createHostFilter } from '../../config/patterns.js';
import { detailsOf, familyNames, groupName, type AccountSource, type SourceContext } from '../types.js';
import { completeHost, HOST_FAMILIES, inventoryHost, mapHosts, missingHostFields } from './map.js';

/**
 * `/hosts`: host info and state for every host, and the inventory of hosts that per-host
 * sources poll (not refused by the plan, and selected by the host filters). Where a list item
 * lacks fields, the host_details source's `/hosts/{uuid}` answer completes it.
 */
export function createHostsSource(ctx: SourceContext): AccountSource {
  const selected = createHostFilter(ctx.account.hosts);
  const tagKeys = ctx.account.tagLabels.map((t) => t.tagKey);
  return {
    name: 'hosts',
    toggle: 'hosts',
    families: familyNames(HOST_FAMILIES),
    scope: 'account',
    priority: 'high',
    cadence: 'hosts',
    async poll() {
      const { value } = await ctx.client.hosts();
      const details = detailsOf(ctx.inventory);
      const now = ctx.clock.now();
      const hosts = value.hosts.map((listed) => completeHost(listed, details.hosts.get(listed.uuid), now));
      ctx.sink.publish(groupName('hosts', ctx.account.name), mapHosts(hosts, { account: ctx.account.name, tagLabels: tagKeys }));

      const listedUuids = new Set(value.hosts.map((h) => h.uuid));
      for (const uuid of details.hosts.keys()) if (!listedUuids.has(uuid)) details.hosts.delete(uuid);
      details.hostsLacking.clear();
      for (const listed of value.hosts) {
        const missing = missingHostFields(listed);
        if (missing.length > 0 && listed.allowed !== false) details.hostsLacking.set(listed.uuid, { host: listed, missing });
      }

      const polled = new Map(hosts.filter((h) => h.allowed !== false).map(inventoryHost).filter(selected).map((h) => [h.uuid, h]));
      ctx.inventory.hosts.clear();
      for (const [uuid, host] of polled) ctx.inventory.hosts.set(uuid, host);
      for (const uuid of ctx.inventory.metricNames.keys()) {
        if (!polled.has(uuid)) ctx.inventory.metricNames.delete(uuid);
      }
      ctx.inventoryChanged();
      ctx.versions?.agents([...polled.values()]);
    },
  };
}
