import type { MonitoringWorld, SimAccount, WorldOptions } from '../../simulator/monitoring/world-types.js';
import { SIM_KEYS } from '../../simulator/monitoring/world-types.js';
import { createWorld } from '../../simulator/monitoring/world.js';

/**
 * A moment of the simulated world worth watching the alert rules at: a host within its
 * plan that stays offline, a website outage that starts a while after and lasts, and a host
 * of every server kind (nginx, PHP-FPM, MySQL, Varnish) online all along, so that every
 * panel of the dashboards has data. The
 * world is a pure function of (seed, time), so the demo started at that moment
 * (`startDemo({ startMs })`) plays exactly this; the search uses only the world's public
 * contract (`SimAccount`), nothing of how outages are drawn.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** The world the mixin's tests and the dashboard pictures watch: every kind of server (nginx, PHP-FPM, MySQL, Varnish) and an agent that goes quiet for hours. */
export const MIXIN_WORLD = { seed: 'mixin', hosts: 8, websites: 3 } as const;

/** Server kinds as `/hosts` reports them, each bringing its panels on the Hosts dashboard. */
export const SERVER_KINDS = ['web-server', 'application-server', 'database', 'cache'] as const;

/** A time at which every initial host of a world exists (they are created during 2025). */
const DEFINITION_MS = Date.UTC(2026, 0, 1);

/** The demo's account names for the simulator's keys. */
export const DEMO_ACCOUNTS = { pro: SIM_KEYS.pro, business: SIM_KEYS.business } as const;
export type DemoAccount = keyof typeof DEMO_ACCOUNTS;

export interface ScenarioHost {
  readonly account: DemoAccount;
  readonly uuid: string;
  readonly hostname: string;
}

export interface ScenarioWebsite {
  readonly account: DemoAccount;
  readonly id: number;
  readonly name: string;
  /** Its first failing check, and its first successful one after. */
  readonly downFromMs: number;
  readonly upAgainMs: number;
}

export interface Scenario {
  readonly startMs: number;
  /** Allowed hosts offline from the start to the end of the window. */
  readonly offlineHosts: readonly ScenarioHost[];
  readonly downWebsite: ScenarioWebsite;
}

export interface ScenarioOptions {
  /** Simulated time from the start to the outage's first failing check. */
  readonly leadMs: number;
  /** Shortest outage. */
  readonly minOutageMs: number;
  /** Simulated time the hosts must stay offline from the start. */
  readonly windowMs: number;
  /** How far from `nearMs` to look, in days either way. */
  readonly maxDays: number;
  /** Server kinds that an allowed host each must run while online throughout the window (default none). */
  readonly onlineKinds?: readonly string[];
}

export function demoAccounts(world: MonitoringWorld): [DemoAccount, SimAccount][] {
  return (Object.keys(DEMO_ACCOUNTS) as DemoAccount[]).map((name) => {
    const account = world.accountByKey(DEMO_ACCOUNTS[name]);
    if (!account) throw new Error(`the simulated world has no account for the ${name} key`);
    return [name, account];
  });
}

/** Outages (runs of failed checks) of every website of the demo's accounts whose first failure is in [fromMs, toMs). */
function outages(world: MonitoringWorld, fromMs: number, toMs: number): ScenarioWebsite[] {
  const found: ScenarioWebsite[] = [];
  for (const [name, account] of demoAccounts(world)) {
    for (const site of account.websites(fromMs)) {
      let downFrom: number | undefined;
      for (const check of account.checks(site.id, fromMs, toMs + 2 * 3_600_000)) {
        const at = Date.parse(check.checked_at);
        if (!check.success && downFrom === undefined && at < toMs) downFrom = at;
        if (check.success && downFrom !== undefined) {
          found.push({ account: name, id: site.id, name: site.name, downFromMs: downFrom, upAgainMs: at });
          downFrom = undefined;
        }
      }
    }
  }
  return found;
}

/** Whether each kind has an allowed host of the demo's accounts that runs it and stays online from `fromMs` to `toMs`. */
function onlineThroughout(world: MonitoringWorld, kinds: readonly string[], fromMs: number, toMs: number): boolean {
  const hosts = demoAccounts(world).flatMap(([, account]) => account.hosts(fromMs).filter((h) => h.allowed).map((host) => ({ account, host })));
  const online = (uuid: string, account: SimAccount): boolean => {
    for (let t = fromMs; t <= toMs; t += MINUTE_MS) if (account.host(uuid, t)?.online !== true) return false;
    return true;
  };
  return kinds.every((kind) => hosts.some(({ account, host }) => host.server_kinds.includes(kind) && online(host.uuid, account)));
}

function offlineThroughout(world: MonitoringWorld, fromMs: number, toMs: number): ScenarioHost[] {
  const hosts: ScenarioHost[] = [];
  for (const [name, account] of demoAccounts(world)) {
    for (const host of account.hosts(fromMs)) {
      if (!host.allowed) continue;
      let offline = true;
      for (let t = fromMs; t <= toMs && offline; t += MINUTE_MS) offline = account.host(host.uuid, t)?.online === false;
      if (offline) hosts.push({ account: name, uuid: host.uuid, hostname: host.hostname });
    }
  }
  return hosts;
}

/** The scenario starting closest to `nearMs`; throws when none is within `maxDays`. */
export function findScenario(world: MonitoringWorld, nearMs: number, options: ScenarioOptions): Scenario {
  for (let k = 0; k <= 2 * options.maxDays; k++) {
    const day = k % 2 === 0 ? k / 2 : -(k + 1) / 2;
    const from = nearMs + day * DAY_MS;
    const candidates = outages(world, from, from + DAY_MS)
      .filter((o) => o.upAgainMs - o.downFromMs >= options.minOutageMs)
      .sort((a, b) => Math.abs(a.downFromMs - nearMs) - Math.abs(b.downFromMs - nearMs));
    for (const website of candidates) {
      const startMs = website.downFromMs - options.leadMs;
      const offlineHosts = offlineThroughout(world, startMs, startMs + options.windowMs);
      if (offlineHosts.length > 0 && onlineThroughout(world, options.onlineKinds ?? [], startMs, startMs + options.windowMs)) return { startMs, offlineHosts, downWebsite: website };
    }
  }
  const kinds = options.onlineKinds?.length ? ` while hosts running ${options.onlineKinds.join(', ')} stay online` : '';
  throw new Error(`no moment within ${options.maxDays} days has a host offline and a website outage of ${options.minOutageMs / MINUTE_MS} minutes or more${kinds}`);
}

/**
 * What a world is, for the pictures' manifest: its options, and the accounts of the demo with
 * their hosts (name, type, server kinds, within the plan) and websites. Its hash changes when
 * the world the pictures show would (another seed or size, hosts made differently), not when
 * the values it reports are tuned.
 */
export function worldDefinition(options: WorldOptions): unknown {
  const world = createWorld(options);
  return {
    options,
    accounts: demoAccounts(world).map(([name, account]) => ({
      name,
      plan: account.plan,
      hostLimit: account.hostLimit,
      hosts: account.hosts(DEFINITION_MS).map((h) => ({ hostname: h.hostname, uuid: h.uuid, type: h.type, serverKinds: h.server_kinds, allowed: h.allowed })),
      websites: account.websites(DEFINITION_MS).map((w) => ({ name: w.name, url: w.url, checkIntervalSeconds: w.check_interval_seconds ?? null })),
    })),
  };
}
