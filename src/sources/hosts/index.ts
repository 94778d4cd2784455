import { createHostFilter } from '../../config/patterns.js';
import { familyNames, groupName, type AccountSource, type MonitoringSourceFactory } from '../types.js';
import { HOST_FAMILIES, mapHosts } from './map.js';

/**
 * `/hosts`: host info and state for every host, and the inventory of hosts that per-host
 * sources poll (allowed, and selected by the host filters).
 */
export const createHostsSource: MonitoringSourceFactory = (ctx): AccountSource => {
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
      ctx.sink.publish(groupName('hosts', ctx.account.name), mapHosts(value.hosts, { account: ctx.account.name, tagLabels: tagKeys }));

      const polled = new Map(value.hosts.filter((h) => h.allowed && selected(h)).map((h) => [h.uuid, h]));
      ctx.inventory.hosts.clear();
      for (const [uuid, host] of polled) ctx.inventory.hosts.set(uuid, host);
      for (const uuid of ctx.inventory.metricNames.keys()) {
        if (!polled.has(uuid)) ctx.inventory.metricNames.delete(uuid);
      }
      ctx.inventoryChanged();
    },
  };
};
