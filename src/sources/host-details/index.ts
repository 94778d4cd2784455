import type { Host } from '../../upstream/monitoring/resources/hosts.js';
import { detailsOf, type ListedHostSource, type SourceContext } from '../types.js';

/**
 * `/hosts/{uuid}`, only for hosts whose `/hosts` item lacks fields the host metrics use
 * (hostname, type, agent version, last seen, online, allowed, server kinds, tags, created).
 * The document's list items carry every field, so against such a service this source has
 * no targets and costs nothing. Otherwise each such host is asked at a slow cadence, and the
 * hosts source completes its list item with the answer (host filters included: a host whose
 * tags only the details carry is selected once they arrive). It publishes nothing itself.
 */
export function createHostDetailsSource(ctx: SourceContext): ListedHostSource {
  const details = () => detailsOf(ctx.inventory);
  return {
    name: 'host_details',
    toggle: 'hostDetails',
    families: [],
    scope: 'host',
    priority: 'normal',
    targets: () => new Map([...details().hostsLacking].map(([uuid, { host }]) => [uuid, host])),
    cadenceMs: () => ctx.account.cadenceMs.hostDetails,
    requestsPerRun: () => 1,
    async poll(host: Host, signal) {
      const { value } = await ctx.client.host(host.uuid);
      if (signal.aborted) return;
      details().hosts.set(host.uuid, { ...value, uuid: host.uuid });
    },
    forget(uuid) {
      details().hosts.delete(uuid);
    },
  };
}
