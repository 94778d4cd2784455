import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectedAlertEvents } from '../support/truth.js';
import { exportedAlertEvents } from '../support/truth-run.js';
import { recordUpstreamRequests, type UpstreamLog } from '../support/upstream-log.js';
import { deltaOf, familySum, readState, startRig, type Rig, type SavedState } from './harness.js';

/**
 * Item 2 of issue 13: a restart neither loses nor double-counts. The exporter is "killed"
 * (kill -9) at random moments of a simulated run: what survives a kill is exactly the state
 * file on disk at that instant (written atomically, so the last completed save), which this
 * test copies at the moment of the kill and puts back before the restart, whatever the dying
 * process did after. Between runs the exporter stays down for a while; the simulator keeps
 * producing data, some of it late (late-data mode). At the end every counter must equal the
 * simulator's ground truth over the time it covers, and no scrape may ever see a counter go
 * down (Prometheus would read a decrease as a reset and count the difference twice).
 */

const MINUTE = 60_000;
const METRIC = 'system.net.bytes_rcvd';
const FAMILY = 'monapi_system_network_receive_bytes_total';

let rig: Rig | undefined;
let log: UpstreamLog | undefined;
afterEach(async () => {
  log?.stop();
  log = undefined;
  await rig?.close();
  rig = undefined;
});

/** A small deterministic generator, so a failing run can be repeated with its seed. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const deltaOfMetric = (state: SavedState, uuid: string) => deltaOf(state, uuid, METRIC);

describe('kill -9 at random moments, downtime, restart from the state file', () => {
  it.each([1, 3])('seed %i: final counters equal the ground truth, and no scrape ever sees one go down', async (seed) => {
    const random = mulberry32(seed);
    rig = await startRig({
      simulator: { hosts: 3, websites: 3, seed: `restart-${seed}`, lateData: { lateShare: 0.3, maxLatenessMinutes: 30, neverShare: 0.05 }, rateLimitPerMinute: 100_000, burst: 10_000 },
      yaml: (sim) =>
        `accounts:\n  - name: pro\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: SIM_PRO_KEY\n    metrics:\n      include: ["${METRIC}", "system.cpu.user"]\n    sources:\n      components: false\n      alert_rules: false\n`,
    });
    const r = rig;
    const stateFile = join(r.dir, 'state.json');
    const simAccount = r.sim.world.accountByKey(r.sim.keys.pro);
    if (!simAccount) throw new Error('no simulated account');

    log = recordUpstreamRequests(r.clock);
    await r.start({ stateFile });
    // The cursor each counter started from: read right after the first poll of each host.
    const startCursor = new Map<string, number>();
    let checksStart = new Map<string, { checkedAtMs: number; id: number } | null>();
    for (let second = 0; second < 5 * 60; second += 10) {
      await r.advance(10_000);
      await r.exporter?.saveState();
      if (!existsSync(stateFile)) continue;
      const state = readState(stateFile);
      for (const host of (state.accounts.pro?.sources.series ?? [])) {
        const delta = deltaOfMetric(state, host.uuid);
        if (delta && !startCursor.has(host.uuid)) {
          expect(delta.total).toBe(0);
          startCursor.set(host.uuid, delta.coveredUntilMs);
        }
      }
      if (checksStart.size === 0) checksStart = new Map((state.accounts.pro?.sources.checks ?? []).map((w) => [w.id, w.state.cursor]));
    }
    const hosts = [...startCursor.keys()];
    expect(hosts.length).toBeGreaterThan(0);
    // Three websites, the last one paused: two are polled for checks.
    expect(checksStart.size).toBe(2);

    let kills = 0;
    for (let round = 0; round < 6; round++) {
      // Run for a while, then die at a random second: the disk holds the last completed save.
      await r.advance(Math.floor((2 + random() * 12) * MINUTE + random() * 59_000));
      const seen = familySum(await r.scrape(), FAMILY);
      expect(seen).toBeGreaterThan(0);
      const onDisk = existsSync(stateFile) ? readFileSync(stateFile) : undefined;
      const kept = join(r.dir, 'at-kill.json');
      if (onDisk) {
        copyFileSync(stateFile, kept);
        // What Prometheus has seen is never ahead of what a restart resumes from.
        const saved = readState(kept);
        const onDiskTotal = hosts.reduce((sum, uuid) => sum + (deltaOfMetric(saved, uuid)?.total ?? 0), 0);
        expect(onDiskTotal, `round ${round}: /metrics showed more than the state file holds`).toBeGreaterThanOrEqual(seen);
      }
      await r.exporter?.stop();
      r.exporter = undefined;
      kills++;
      if (onDisk) copyFileSync(kept, stateFile);
      // Down for 1 to 25 minutes; the agents keep reporting meanwhile.
      await r.advance(Math.floor((1 + random() * 24) * MINUTE));
      await r.start({ stateFile });
      await r.advance(2 * MINUTE);
      const body = await r.scrape();
      const after = familySum(body, FAMILY);
      expect(after, `round ${round}: a counter went down across the restart`).toBeGreaterThanOrEqual(seen);
    }
    expect(kills).toBe(6);

    // Long enough for every late minute of the run to arrive (at most 30 minutes late).
    await r.advance(40 * MINUTE);
    await r.exporter?.saveState();
    const final = readState(stateFile);
    for (const uuid of hosts) {
      const delta = deltaOfMetric(final, uuid);
      if (!delta) throw new Error(`no final state for host ${uuid}`);
      const truth = r.sim.truth({ key: r.sim.keys.pro, hostUuid: uuid, metric: METRIC, fromMs: startCursor.get(uuid) ?? NaN, toMs: delta.coveredUntilMs, asOfMs: delta.lastSeenMs });
      expect(truth.points).toBeGreaterThan(60);
      expect(delta.total, `host ${uuid}`).toBe(truth.sum);
    }
    for (const site of (final.accounts.pro?.sources.checks ?? [])) {
      const from = checksStart.get(site.id);
      const to = site.state.cursor;
      if (!from || !to) throw new Error(`website ${site.id} has no cursor`);
      const counted = site.state.results.reduce((sum, row) => sum + row.value, 0);
      expect(counted, `website ${site.id}`).toBe(simAccount.checkCount(Number(site.id), from.checkedAtMs + 1, to.checkedAtMs));
      expect(counted).toBeGreaterThan(10);
    }
    // Alert events: each one the simulator raised after the first read counted once, across all the kills.
    const expectedEvents = expectedAlertEvents(simAccount, log, r.clock.now());
    expect(Object.fromEntries(exportedAlertEvents(await r.scrape(), 'pro'))).toEqual(Object.fromEntries(expectedEvents ?? []));
    expect([...(expectedEvents?.values() ?? [])].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  }, 180_000);
});

describe('a restart shows what it restored at once', () => {
  it('every restored counter (series and website checks) is on /metrics before any poll has succeeded', async () => {
    rig = await startRig({
      simulator: { hosts: 6, websites: 2, seed: 'restore-at-once', rateLimitPerMinute: 100_000, burst: 10_000 },
      yaml: (sim) =>
        `accounts:\n  - name: pro\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: SIM_PRO_KEY\n    metrics:\n      include: ["${METRIC}", "system.cpu.user"]\n    sources:\n      components: false\n      alert_rules: false\n`,
    });
    const r = rig;
    const stateFile = join(r.dir, 'state.json');
    await r.start({ stateFile });
    await r.advance(6 * MINUTE);
    await r.exporter?.saveState();
    const before = await r.scrape();
    const counterLines = (body: string, family: string) => body.split('\n').filter((l) => l.startsWith(`${family}{`)).sort();
    expect(counterLines(before, FAMILY).length).toBeGreaterThanOrEqual(3);
    expect(familySum(before, 'monapi_website_checks_total')).toBeGreaterThan(0);
    await r.exporter?.stop();
    r.exporter = undefined;

    // From now on every request fails: whatever counter /metrics shows comes from the state file.
    r.sim.faults.apply({ target: 'monitoring', error_503: 1 });
    await r.start({ stateFile });
    await r.advance(1_000);
    const after = await r.scrape();
    expect(after).toMatch(/^monapi_up\{account="pro"\} 0$/m);
    expect(after).toMatch(/^monapi_up_reason\{account="pro",reason="pending"\} 1$/m);
    expect(counterLines(after, FAMILY)).toEqual(counterLines(before, FAMILY));
    expect(counterLines(after, 'monapi_website_checks_total')).toEqual(counterLines(before, 'monapi_website_checks_total'));
  }, 60_000);

  it('a restored host the host list no longer names leaves /metrics at the first poll', async () => {
    rig = await startRig({
      simulator: { hosts: 4, websites: 1, seed: 'restore-gone', rateLimitPerMinute: 100_000, burst: 10_000 },
      yaml: (sim) => `accounts:\n  - name: pro\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: SIM_PRO_KEY\n    metrics:\n      include: ["${METRIC}"]\n    sources:\n      components: false\n      alert_rules: false\n`,
    });
    const r = rig;
    const stateFile = join(r.dir, 'state.json');
    await r.start({ stateFile });
    await r.advance(5 * MINUTE);
    await r.exporter?.saveState();
    const hostsOf = (body: string) => new Set([...body.matchAll(new RegExp(`^${FAMILY}\\{[^}]*host_uuid="([^"]+)"`, 'gm'))].map((m) => m[1]));
    const before = hostsOf(await r.scrape());
    expect(before.size).toBeGreaterThanOrEqual(2);
    await r.exporter?.stop();
    r.exporter = undefined;
    const account = r.sim.world.accountByKey(r.sim.keys.pro);
    account?.removeHosts(1, r.clock.now());
    const restarted = await r.start({ stateFile });
    await r.advance(1_000);
    expect(hostsOf(await r.scrape())).toEqual(before);
    await r.advance(2 * MINUTE);
    await restarted.saveState();
    const after = hostsOf(await r.scrape());
    expect(after.size).toBe(before.size - 1);
    expect([...after].every((uuid) => before.has(uuid))).toBe(true);
  }, 60_000);
});
