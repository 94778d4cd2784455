import { afterEach, describe, expect, it } from 'vitest';
import type { Priority } from '../../../src/budget/types.js';
import type { Decoded } from '../../../src/upstream/decode.js';
import { MonitoringClient } from '../../../src/upstream/monitoring/client.js';
import type { HostList } from '../../../src/upstream/monitoring/resources/hosts.js';
import { createHostsSource } from '../../../src/sources/hosts/index.js';
import { detailsOf } from '../../../src/sources/types.js';
import { startSourceHarness, type SourceHarness } from '../../support/sim-harness.js';
import { createHostDetailsSource } from '../../../src/sources/host-details/index.js';

let harness: SourceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const signal = () => new AbortController().signal;

/** A service whose host list carries only uuid and online state, like a paged summary list. */
class TerseHostList extends MonitoringClient {
  override async hosts(priority?: Priority): Promise<Decoded<HostList>> {
    const answer = await super.hosts(priority);
    return { ...answer, value: { ...answer.value, hosts: answer.value.hosts.map((h) => ({ uuid: h.uuid, online: h.online, allowed: h.allowed })) } };
  }
}

describe('host details', () => {
  it('asks nothing when the host list is complete', async () => {
    harness = await startSourceHarness();
    await harness.source(createHostsSource).poll(signal());
    expect(harness.source(createHostDetailsSource).targets().size).toBe(0);
  });

  it('completes a terse host list from /hosts/{uuid}: names, tags and the tag filters', async () => {
    harness = await startSourceHarness({ accountYaml: '    tag_labels: [env]\n    hosts:\n      include_tags: ["env:*"]\n' });
    const h = harness;
    const client = h.client(TerseHostList);
    const hosts = h.source(createHostsSource, client);
    const details = h.source(createHostDetailsSource, client);

    await hosts.poll(signal());
    const listed = h.simAccount.hosts(h.clock.now()).filter((x) => x.allowed);
    // Without tags no host passes the tag filter yet, but each still gets a details job.
    expect(h.inventory.hosts.size).toBe(0);
    expect([...details.targets().keys()].sort()).toEqual(listed.map((x) => x.uuid).sort());
    expect(detailsOf(h.inventory).hostsLacking.get(listed[0]?.uuid ?? '')?.missing).toEqual(['hostname', 'type', 'agent_version', 'last_seen', 'server_kinds', 'tags', 'created_at']);

    for (const target of details.targets().values()) await details.poll(target, signal());
    await hosts.poll(signal());

    const lines = h.sink.lines('hosts/sim');
    for (const host of listed) {
      expect(lines).toContainEqual(expect.stringContaining(`host_uuid="${host.uuid}",hostname="${host.hostname}"`));
    }
    const withEnv = listed.filter((x) => x.tags.some((t) => t.startsWith('env:')));
    expect(withEnv.length).toBeGreaterThan(0);
    expect([...h.inventory.hosts.keys()].sort()).toEqual(withEnv.map((x) => x.uuid).sort());
    expect(h.inventory.hosts.get(withEnv[0]?.uuid ?? '')?.hostname).toBe(withEnv[0]?.hostname);
    // Polled at the slow cadence, one request each.
    const [first] = details.targets().values();
    if (!first) throw new Error('no target');
    expect(details.cadenceMs(first)).toBe(h.account.cadenceMs.hostDetails);
    expect(details.requestsPerRun(first)).toBe(1);
  });
});
