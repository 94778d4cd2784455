import { MINUTE } from '../../config/schema.js';
import { endpoint } from '../../upstream/monitoring/client.js';
import { POLLED_HOSTS } from '../hosts/topics.js';
import { metricNameSelector, sortedUnique } from '../series/map.js';
import { seriesSource } from '../series/index.js';
import { every, groupName, type MonitoringSource } from '../source.js';
import { decodeMetricNames, METRIC_CATALOGUE_FIELDS } from './decode.js';
import { SharedNameLists } from './name-lists.js';
import { METRIC_NAMES } from './topics.js';

export const METRIC_CATALOGUE_ENDPOINT = endpoint('/hosts/{uuid}/metrics', decodeMetricNames);

/**
 * `/hosts/{uuid}/metrics`: which metric names each host has. Rarely polled; the metric
 * filters of the series source are applied here, so names an operator excluded never cost
 * a series request. On whenever the series source is.
 */
export const metricCatalogueSource: MonitoringSource = {
  name: 'metric_catalogue',
  section: 'account',
  enabledWith: 'series',
  cadences: { metric_catalogue: { default: '1h', minMs: 5 * MINUTE } },
  endpoints: [METRIC_CATALOGUE_ENDPOINT],
  fields: METRIC_CATALOGUE_FIELDS,
  readsList: METRIC_CATALOGUE_ENDPOINT.decode.list !== undefined,
  priority: 'normal',
  families: [],
  reads: [POLLED_HOSTS],
  create(ctx) {
    const lists = new SharedNameLists();
    const names = new Map<string, readonly string[]>();
    const select = metricNameSelector(ctx.settingsOf(seriesSource)?.metrics ?? { include: ['*'], exclude: [] });
    return {
      scope: 'target',
      targets: () => ctx.read(POLLED_HOSTS),
      cadence: () => every(ctx.cadenceMs('metric_catalogue')),
      requestsPerRun: () => 1,
      async poll(host: { readonly uuid: string }, signal) {
        const { value } = await ctx.upstream.get(METRIC_CATALOGUE_ENDPOINT, { uuid: host.uuid });
        if (signal.aborted) return;
        const picked = select(value.metrics);
        const before = names.get(host.uuid);
        if (before !== undefined && lists.holdsExactly(before, picked)) return;
        names.set(host.uuid, lists.share(sortedUnique(picked), () => names.values()));
        ctx.provide(METRIC_NAMES, names);
      },
      forget(uuid) {
        if (names.delete(uuid)) ctx.provide(METRIC_NAMES, names);
        ctx.sink.retract(groupName('metric_catalogue', ctx.unit.name, uuid));
      },
    };
  },
};
