import { afterEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../src/sources/hosts/decode.js';
import { HOSTS_ENDPOINT, hostsSource } from '../../../src/sources/hosts/index.js';
import { HOSTS_LACKING, POLLED_HOSTS } from '../../../src/sources/hosts/topics.js';
import { changingClient, startSourceHarness, type SourceHarness } from '../../support/sim-harness.js';
import { hostDetailsSource } from '../../../src/sources/host-details/index.js';

let harness: SourceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const signal = () => new AbortController().signal;

/** A service whose host list carries only uuid and online state, like a paged summary list. */
const TerseHostList = changingClient(HOSTS_ENDPOINT, (list) => ({ ...list, hosts: list.hosts.map((h) => ({ uuid: h.uuid, online: h.online, allowed: h.allowed })) }));

describe('host details', () => {
  it('asks nothing when the host list is complete', async () => {
    harness = await startSourceHarness();
    await harness.unitSource(hostsSource).poll(signal());
    expect(harness.targetSource(hostDetailsSource).targets().size).toBe(0);
  });

  it('completes a terse host list from /hosts/{uuid}: names, tags and the tag filters', async () => {
    harness = await startSourceHarness({ accountYaml: '    tag_labels: [env]\n    hosts:\n      include_tags: ["env:*"]\n' });
    const h = harness;
    const client = h.client(TerseHostList);
    const hosts = h.unitSource(hostsSource, client);
    const details = h.targetSource<Host>(hostDetailsSource, client);

    await hosts.poll(signal());
    const listed = h.simAccount.hosts(h.clock.now()).filter((x) => x.allowed);
    // Without tags no host passes the tag filter yet, but each still gets a details job.
    expect(h.read(POLLED_HOSTS).size).toBe(0);
    expect([...details.targets().keys()].sort()).toEqual(listed.map((x) => x.uuid).sort());
    expect(h.read(HOSTS_LACKING).get(listed[0]?.uuid ?? '')?.missing).toEqual(['hostname', 'type', 'agent_version', 'last_seen', 'server_kinds', 'tags', 'created_at']);

    for (const target of details.targets().values()) await details.poll(target, signal());
    await hosts.poll(signal());

    const lines = h.sink.lines('hosts/sim');
    for (const host of listed) {
      expect(lines).toContainEqual(expect.stringContaining(`host_uuid="${host.uuid}",hostname="${host.hostname}"`));
    }
    const withEnv = listed.filter((x) => x.tags.some((t) => t.startsWith('env:')));
    expect(withEnv.length).toBeGreaterThan(0);
    expect([...h.read(POLLED_HOSTS).keys()].sort()).toEqual(withEnv.map((x) => x.uuid).sort());
    expect(h.read(POLLED_HOSTS).get(withEnv[0]?.uuid ?? '')?.hostname).toBe(withEnv[0]?.hostname);
    // Polled at the slow cadence, one request each.
    const [first] = details.targets().values();
    if (!first) throw new Error('no target');
    expect(details.cadence(first).everyMs).toBe(h.account.sources.host_details?.cadenceMs.host_details);
    expect(details.requestsPerRun(first)).toBe(1);
  });
});
