import { groupName, type HostSource, type MonitoringSourceFactory } from '../types.js';
import { selectMetricNames } from '../series/map.js';
import { SharedNameLists } from './name-lists.js';

/**
 * `/hosts/{uuid}/metrics`: which metric names each host has. Rarely polled; the metric
 * filters are applied here, so names an operator excluded never cost a series request.
 */
export const createMetricCatalogueSource: MonitoringSourceFactory = (ctx): HostSource => {
  const lists = new SharedNameLists();
  return {
    name: 'metric_catalogue',
    toggle: 'series',
    families: [],
    scope: 'host',
    priority: 'normal',
    cadenceMs: () => ctx.account.cadenceMs.metricCatalogue,
    requestsPerRun: () => 1,
    async poll(host, signal) {
      const { value } = await ctx.client.metricCatalogue(host.uuid);
      if (signal.aborted) return;
      const names = lists.share(selectMetricNames(value.metrics, ctx.account.metrics), () => ctx.inventory.metricNames.values());
      const before = ctx.inventory.metricNames.get(host.uuid);
      ctx.inventory.metricNames.set(host.uuid, names);
      if (before?.join(',') !== names.join(',')) ctx.inventoryChanged();
    },
    forget(uuid) {
      ctx.inventory.metricNames.delete(uuid);
      ctx.sink.retract(groupName('metric_catalogue', ctx.account.name, uuid));
    },
  };
};
