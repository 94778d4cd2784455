import { SECOND } from '../../config/schema.js';
import { endpoint } from '../../upstream/monitoring/client.js';
import { HOST_DETAILS } from '../host-details/topics.js';
import { every, familyNames, groupName, type MonitoringSource } from '../source.js';
import { decodeHosts, HOST_FIELDS } from './decode.js';
import { completeHost, createHostFilter, HOST_FAMILIES, inventoryHost, mapHosts, missingHostFields } from './map.js';
import { HOST_KEYS, hostSettings, type HostSettings } from './settings.js';
import { HOSTS_LACKING, POLLED_HOSTS, type InventoryHost } from './topics.js';

export const HOSTS_ENDPOINT = endpoint('/hosts', decodeHosts);

/**
 * `/hosts`: host info and state for every host, and the hosts that per-host sources poll
 * (within the plan's host limit and selected by the host filters). Where a list item lacks
 * fields, the host_details source's `/hosts/{uuid}` answer completes it.
 */
export const hostsSource: MonitoringSource<HostSettings> = {
  name: 'hosts',
  section: 'account',
  toggle: { default: true },
  cadences: { hosts: { default: '60s', minMs: 30 * SECOND } },
  keys: HOST_KEYS,
  settings: hostSettings,
  endpoints: [HOSTS_ENDPOINT],
  fields: HOST_FIELDS,
  readsList: HOSTS_ENDPOINT.decode.list !== undefined,
  priority: 'high',
  families: familyNames(HOST_FAMILIES),
  reads: [HOST_DETAILS],
  create(ctx) {
    const selected = createHostFilter(ctx.settings.filters);
    const tagKeys = ctx.settings.tagLabels.map((t) => t.tagKey);
    let polledCount = 0;
    return {
      scope: 'unit',
      cadence: () => every(ctx.cadenceMs('hosts')),
      status: () => ({ hosts_polled: polledCount }),
      async poll() {
        const { value } = await ctx.upstream.get(HOSTS_ENDPOINT, {}, {}, 'high');
        const details = ctx.read(HOST_DETAILS);
        const now = ctx.clock.now();
        const hosts = value.hosts.map((listed) => completeHost(listed, details.get(listed.uuid), now));
        ctx.sink.publish(groupName('hosts', ctx.unit.name), mapHosts(hosts, { account: ctx.unit.name, tagLabels: tagKeys }));

        const lacking = new Map<string, { host: (typeof value.hosts)[number]; missing: ReturnType<typeof missingHostFields> }>();
        for (const listed of value.hosts) {
          const missing = missingHostFields(listed);
          if (missing.length > 0 && listed.allowed !== false) lacking.set(listed.uuid, { host: listed, missing });
        }
        const polled = new Map<string, InventoryHost>();
        for (const host of hosts) {
          if (host.allowed === false) continue;
          const inventory = inventoryHost(host);
          if (selected(inventory)) polled.set(inventory.uuid, inventory);
        }
        polledCount = polled.size;
        ctx.provide(HOSTS_LACKING, lacking);
        ctx.provide(POLLED_HOSTS, polled);
      },
    };
  },
};
