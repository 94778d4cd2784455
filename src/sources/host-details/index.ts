import { MINUTE } from '../../config/schema.js';
import { endpoint } from '../../upstream/monitoring/client.js';
import { decodeHost, HOST_DETAIL_DECLS, type Host } from '../hosts/decode.js';
import { HOSTS_LACKING } from '../hosts/topics.js';
import { every, type MonitoringSource } from '../source.js';
import { HOST_DETAILS } from './topics.js';

export const HOST_ENDPOINT = endpoint('/hosts/{uuid}', decodeHost);

/**
 * `/hosts/{uuid}`, only for hosts whose `/hosts` item lacks fields the host metrics use
 * (hostname, type, agent version, last seen, online, allowed, server kinds, tags, created).
 * The document's list items carry every field, so against such a service this source has
 * no targets and costs nothing. Otherwise each such host is asked at a slow cadence, and the
 * hosts source completes its list item with the answer (host filters included: a host whose
 * tags only the details carry is selected once they arrive). It publishes nothing itself.
 */
export const hostDetailsSource: MonitoringSource = {
  name: 'host_details',
  section: 'account',
  toggle: { default: { sameAs: 'hosts' } },
  // Only hosts whose list item lacks fields are asked; their names and tags rarely change.
  cadences: { host_details: { default: '1h', minMs: 5 * MINUTE } },
  needs: { hosts: 'the host list says which hosts lack details' },
  endpoints: [HOST_ENDPOINT],
  fields: HOST_DETAIL_DECLS,
  priority: 'normal',
  families: [],
  reads: [HOSTS_LACKING],
  create(ctx) {
    // The host list reads the answers at its next poll; no job follows them, so they are
    // provided once and kept up to date in place.
    const answers = new Map<string, Host>();
    ctx.provide(HOST_DETAILS, answers);
    return {
      scope: 'target',
      targets: () => new Map([...ctx.read(HOSTS_LACKING)].map(([uuid, { host }]) => [uuid, host])),
      cadence: () => every(ctx.cadenceMs('host_details')),
      requestsPerRun: () => 1,
      async poll(host: Host, signal) {
        const { value } = await ctx.upstream.get(HOST_ENDPOINT, { uuid: host.uuid });
        if (signal.aborted) return;
        answers.set(host.uuid, { ...value, uuid: host.uuid });
      },
      forget(uuid) {
        answers.delete(uuid);
      },
    };
  },
};
