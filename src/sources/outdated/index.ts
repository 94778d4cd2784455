import type { Component } from '../components/decode.js';
import { HOST_COMPONENTS } from '../components/topics.js';
import { POLLED_HOSTS } from '../hosts/topics.js';
import { lookupCadence } from '../releases/cadence.js';
import { lookupTiming, projectKey, releasesSource } from '../releases/index.js';
import { familyNames, type ReleaseSource } from '../source.js';
import { OUTDATED_FAMILIES } from './map.js';
import type { WantedLine } from './plan.js';
import { OUTDATED_KEYS, outdatedSettings, outdatedSummary, type OutdatedSettings } from './settings.js';
import { OutdatedTracker, type InstalledVersionsFeed } from './tracker.js';

/**
 * The outdated check (`releases.outdated`): every component and agent version the accounts
 * this process polls report, against the latest release of its line. It reads each account's
 * components and host list, looks up each (project, line) once however many hosts need it,
 * soon after a line first appears and then on the release schedule, and publishes
 * `monapi_component_outdated` per host, the counts per account and the latest release of
 * every line in use.
 */
export const outdatedSource: ReleaseSource<OutdatedSettings> = {
  name: 'outdated',
  section: 'releases',
  keys: OUTDATED_KEYS,
  settings: outdatedSettings,
  enabledBy: (settings) => settings.enabled,
  howToEnable: 'leave outdated.enabled on so that installed components are checked',
  summary: ({ settings, enabled }) => ({ line: outdatedSummary(settings, enabled) }),
  priority: 'normal',
  families: familyNames(OUTDATED_FAMILIES),
  readsEveryUnit: [HOST_COMPONENTS, POLLED_HOSTS],
  holdsReadiness: false,
  create(ctx) {
    const timing = lookupTiming(ctx);
    const tracker = new OutdatedTracker({ rules: ctx.settings.rules, sink: ctx.sink });
    const feeds = new Map<string, InstalledVersionsFeed>();
    const fed = new Map<string, { components: ReadonlyMap<string, unknown>; hosts: unknown }>();
    // A line a configured project also asks for costs no request of its own.
    const configured = new Set(ctx.unit.shard.ordinal === 0 ? (ctx.settingsOf(releasesSource)?.projects ?? []).map(projectKey) : []);
    const dueTimes = new Map<string, number>();
    const project = (line: WantedLine) => (line.line === undefined ? { id: line.project } : { id: line.project, major: line.line });

    /** Tells the tracker what every account's topics say now; it republishes only what changed. */
    const sync = () => {
      const components = ctx.readAll(HOST_COMPONENTS);
      const hosts = ctx.readAll(POLLED_HOSTS);
      const accounts = new Set([...components.keys(), ...hosts.keys()]);
      for (const account of tracker.knownAccounts()) {
        if (!accounts.has(account)) {
          tracker.forgetAccount(account);
          feeds.delete(account);
          fed.delete(account);
        }
      }
      for (const account of accounts) {
        let feed = feeds.get(account);
        if (feed === undefined) feeds.set(account, (feed = tracker.forAccount(account)));
        const before = fed.get(account);
        const byHost: ReadonlyMap<string, readonly Component[]> = components.get(account) ?? new Map<string, readonly Component[]>();
        const polled = hosts.get(account);
        for (const [uuid, list] of byHost) if (before?.components.get(uuid) !== list) feed.components(uuid, list);
        for (const uuid of before?.components.keys() ?? []) if (!byHost.has(uuid)) feed.forgetComponents(uuid);
        if (polled !== undefined && polled !== before?.hosts) feed.agents([...polled.values()]);
        // Providers keep one map and change it in place: copy what was fed to see changes next time.
        fed.set(account, { components: new Map(byHost), hosts: polled });
      }
    };

    return {
      scope: 'target',
      targets: () => {
        sync();
        return new Map(tracker.wantedLines().map((line) => [line.key, line]));
      },
      cadence: (line: WantedLine) => lookupCadence(timing, dueTimes, line.key, () => ctx.upstream.askedAtMs(project(line))),
      requestsPerRun: (line: WantedLine) => (configured.has(line.key) ? 0 : 1),
      async poll(line: WantedLine, signal) {
        try {
          const release = await ctx.upstream.latest(project(line));
          if (!signal.aborted) tracker.record(line.key, { ok: true, version: release.version, tagDate: release.tagDate });
        } catch (error) {
          if (!signal.aborted) tracker.record(line.key, { ok: false, message: error instanceof Error ? error.message : String(error) });
          throw error;
        }
      },
      forget(key) {
        dueTimes.delete(key);
        tracker.forgetLine(key);
      },
      status: () => ({ outdated: tracker.status() }),
    };
  },
};
