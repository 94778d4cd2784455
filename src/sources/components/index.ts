import { familyNames, groupName, type HostSource, type MonitoringSourceFactory } from '../types.js';
import { COMPONENT_INFO, mapComponents } from './map.js';

/** `/hosts/{uuid}/components`: detected servers and their versions; rarely polled. */
export const createComponentsSource: MonitoringSourceFactory = (ctx): HostSource => {
  const group = (uuid: string) => groupName('components', ctx.account.name, uuid);
  return {
    name: 'components',
    toggle: 'components',
    families: familyNames({ info: COMPONENT_INFO }),
    scope: 'host',
    priority: 'normal',
    cadenceMs: () => ctx.account.cadenceMs.components,
    requestsPerRun: () => 1,
    async poll(host, signal) {
      const { value } = await ctx.client.components(host.uuid);
      if (signal.aborted) return;
      ctx.sink.publish(group(host.uuid), mapComponents(value, { account: ctx.account.name, hostUuid: host.uuid }));
      ctx.versions?.components(host.uuid, value.components);
    },
    forget(uuid) {
      ctx.sink.retract(group(uuid));
      ctx.versions?.forgetComponents(uuid);
    },
  };
};
