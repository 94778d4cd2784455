import { MINUTE } from '../../config/schema.js';
import { endpoint } from '../../upstream/monitoring/client.js';
import { POLLED_HOSTS } from '../hosts/topics.js';
import { every, familyNames, groupName, type MonitoringSource } from '../source.js';
import { COMPONENT_FIELDS, decodeComponents, type Component } from './decode.js';
import { COMPONENT_INFO, mapComponents } from './map.js';
import { HOST_COMPONENTS } from './topics.js';

export const COMPONENTS_ENDPOINT = endpoint('/hosts/{uuid}/components', decodeComponents);

/** `/hosts/{uuid}/components`: detected servers and their versions; rarely polled. */
export const componentsSource: MonitoringSource = {
  name: 'components',
  section: 'account',
  toggle: { default: true },
  cadences: { components: { default: '1h', minMs: 5 * MINUTE } },
  needs: { hosts: 'the host list says which hosts to fetch components for' },
  endpoints: [COMPONENTS_ENDPOINT],
  fields: COMPONENT_FIELDS,
  readsList: COMPONENTS_ENDPOINT.decode.list !== undefined,
  priority: 'normal',
  families: familyNames({ info: COMPONENT_INFO }),
  reads: [POLLED_HOSTS],
  create(ctx) {
    const group = (uuid: string) => groupName('components', ctx.unit.name, uuid);
    const byHost = new Map<string, readonly Component[]>();
    return {
      scope: 'target',
      targets: () => ctx.read(POLLED_HOSTS),
      cadence: () => every(ctx.cadenceMs('components')),
      requestsPerRun: () => 1,
      async poll(host: { readonly uuid: string }, signal) {
        const { value } = await ctx.upstream.get(COMPONENTS_ENDPOINT, { uuid: host.uuid });
        if (signal.aborted) return;
        ctx.sink.publish(group(host.uuid), mapComponents(value, { account: ctx.unit.name, hostUuid: host.uuid }));
        byHost.set(host.uuid, value.components);
        ctx.provide(HOST_COMPONENTS, byHost);
      },
      forget(uuid) {
        ctx.sink.retract(group(uuid));
        if (byHost.delete(uuid)) ctx.provide(HOST_COMPONENTS, byHost);
      },
    };
  },
};
