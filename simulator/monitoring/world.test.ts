import { describe, expect, it } from 'vitest';

import { agentMetric as catalogueEntry, AGENT_METRICS as METRIC_CATALOGUE } from './catalogue.js';
import {
  SimAccountBody as Account,
  SimAlertEvent as AlertEvent,
  SimAlertRule as AlertRule,
  SimComponent as Component,
  SimHost as Host,
  SimMetricCatalogue as MetricCatalogue,
  SimWebsite as Website,
  SimWebsiteCheck as WebsiteCheck,
  SimWebsiteSummary as WebsiteSummary,
} from './schemas.js';
import { createWorld } from './world.js';
import { SIM_KEYS, type SimAccount } from './world-types.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 30);
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

function world(seed = 'test-seed', hosts = 12, websites = 6) {
  return createWorld({ seed, hosts, websites });
}

function pro(seed?: string): SimAccount {
  const account = world(seed).accountByKey(SIM_KEYS.pro);
  if (!account) throw new Error('no pro account');
  return account;
}

/** An allowed host with the given component whose agent is steady enough to have data now. */
function hostWith(account: SimAccount, metric: string): string {
  const found = account
    .hosts(NOW)
    .find((h) => h.allowed && h.online && account.metricCatalogue(h.uuid)?.[catalogueEntry(metric)?.component ?? '']);
  if (!found) throw new Error(`no online host with ${metric}`);
  return found.uuid;
}

describe('accounts', () => {
  it('has the three plans, each found by its key, and no account for the marketplace key', () => {
    const w = world();
    expect(w.accounts().map((a) => a.plan)).toEqual(['pro', 'business', 'starter']);
    expect(w.accountByKey(SIM_KEYS.pro)?.retentionDays).toBe(30);
    expect(w.accountByKey(SIM_KEYS.business)?.retentionDays).toBe(90);
    expect(w.accountByKey(SIM_KEYS.starter)?.plan).toBe('starter');
    expect(w.accountByKey(SIM_KEYS.marketplace)).toBeUndefined();
    expect(w.accountByKey('nope')).toBeUndefined();
  });

  it('rejects bad options with a message naming the field', () => {
    expect(() => createWorld({ seed: 's', hosts: -1, websites: 1 })).toThrow(/hosts/);
    expect(() => createWorld({ seed: 's', hosts: 1, websites: 1.5 })).toThrow(/websites/);
    expect(() => createWorld({ seed: '', hosts: 1, websites: 1 })).toThrow(/seed/);
  });

  it('keeps ids of hosts, websites, rules and events disjoint across accounts', () => {
    const accounts = world().accounts();
    const seen = new Map<string, string>();
    for (const a of accounts) {
      const ids = [
        ...a.hosts(NOW).map((h) => `host:${h.uuid}`),
        ...a.websites(NOW).map((s) => `site:${s.id}`),
        ...a.alertRules().map((r) => `rule:${r.id}`),
        ...a.recentAlerts(NOW, 50).map((e) => `event:${e.id}`),
        ...a.websites(NOW).flatMap((s) => a.checks(s.id, NOW - HOUR, NOW).map((c) => `check:${c.id}`)),
      ];
      for (const id of ids) {
        expect(seen.get(id), id).toBeUndefined();
        seen.set(id, a.id);
      }
    }
    const [first, second] = accounts;
    const someHost = first?.hosts(NOW)[0]?.uuid ?? '';
    const someSite = first?.websites(NOW)[0]?.id ?? 0;
    expect(second?.host(someHost, NOW)).toBeUndefined();
    expect(second?.hasWebsite(someSite)).toBe(false);
  });
});

describe('schema validity', () => {
  it('every object of a whole world passes the API schemas', () => {
    for (const a of world('schemas', 16, 8).accounts()) {
      Account.parse(a.account(NOW));
      for (const host of a.hosts(NOW)) {
        Host.parse(host);
        MetricCatalogue.parse({ host_uuid: host.uuid, metrics: a.metricCatalogue(host.uuid) });
        for (const c of a.components(host.uuid) ?? []) Component.parse(c);
      }
      for (const rule of a.alertRules()) AlertRule.parse(rule);
      for (const event of a.recentAlerts(NOW, 100)) AlertEvent.parse(event);
      for (const site of a.websites(NOW)) {
        Website.parse(site);
        WebsiteSummary.parse(a.websiteSummary(site.id, NOW));
        for (const check of a.checks(site.id, NOW - HOUR, NOW)) WebsiteCheck.parse(check);
      }
    }
  });
});

describe('determinism', () => {
  it('gives the same values for the same seed and time', () => {
    const a = pro('same');
    const b = pro('same');
    expect(b.hosts(NOW)).toEqual(a.hosts(NOW));
    const uuid = hostWith(a, 'system.cpu.user');
    for (const name of ['system.cpu.user', 'system.net.bytes_rcvd', 'system.mem.used']) {
      expect(b.pointValue(uuid, name, NOW - HOUR, 3600, NOW)).toBe(a.pointValue(uuid, name, NOW - HOUR, 3600, NOW));
    }
    expect(b.recentAlerts(NOW, 20)).toEqual(a.recentAlerts(NOW, 20));
    const site = a.websites(NOW)[0]?.id ?? 0;
    expect(b.checks(site, NOW - HOUR, NOW)).toEqual(a.checks(site, NOW - HOUR, NOW));
  });

  it('gives different worlds for different seeds', () => {
    expect(pro('one').hosts(NOW).map((h) => h.uuid)).not.toEqual(pro('two').hosts(NOW).map((h) => h.uuid));
  });
});

describe('metric catalogue', () => {
  it('always has system and agent metrics, plus the components of the server kinds', () => {
    const a = pro();
    for (const host of a.hosts(NOW).filter((h) => h.allowed)) {
      const groups = a.metricCatalogue(host.uuid) ?? {};
      expect(Object.keys(groups)).toEqual(expect.arrayContaining(['system', 'agent']));
      expect('nginx' in groups).toBe(host.server_kinds.includes('web-server'));
      expect('php-fpm' in groups).toBe(host.server_kinds.includes('application-server'));
      expect('mysql' in groups).toBe(host.server_kinds.includes('database'));
      expect('varnish' in groups).toBe(host.server_kinds.includes('cache'));
      for (const [component, names] of Object.entries(groups)) {
        for (const name of names) expect(catalogueEntry(name)?.component).toBe(component);
      }
      const perDevice = (groups.system ?? []).filter((n) => n.includes('|'));
      expect(perDevice.length).toBeGreaterThanOrEqual(6 + 8 + 4);
      expect(perDevice.length).toBeLessThanOrEqual(2 * 6 + 2 * 8 + 3 * 4);
    }
    expect(a.metricCatalogue('0'.repeat(32))).toBeUndefined();
  });

  it('covers every catalogue name on some host of a large world', () => {
    const names = new Set(
      pro()
        .hosts(NOW)
        .flatMap((h) => Object.values(pro().metricCatalogue(h.uuid) ?? {}).flat()),
    );
    const big = createWorld({ seed: 'big', hosts: 60, websites: 1 }).accountByKey(SIM_KEYS.pro);
    for (const h of big?.hosts(NOW) ?? []) for (const n of Object.values(big?.metricCatalogue(h.uuid) ?? {}).flat()) names.add(n);
    expect([...names].filter((n) => !n.includes('|')).sort()).toEqual(METRIC_CATALOGUE.map((e) => e.name).sort());
    const devices = (base: string): string[] => [...names].filter((n) => n.startsWith(`${base}|`)).map((n) => n.split('|')[1]!);
    expect(new Set(devices('system.io.iops_r'))).toEqual(new Set(['vda', 'vdb', 'sda', 'sdb', 'nvme0n1', 'nvme1n1']));
    expect(new Set(devices('system.net.bytes_rcvd'))).toEqual(new Set(['eth0', 'eth1', 'eno1', 'eno2']));
    expect(new Set(devices('system.disk.free'))).toEqual(new Set(['/', '/var', '/data', '/srv', '/home']));
  });
});

describe('hosts', () => {
  it('have 32-hex uuids, role hostnames, agent versions and mostly key:value tags', () => {
    for (const h of pro().hosts(NOW)) {
      expect(h.uuid).toMatch(/^[0-9a-f]{32}$/);
      expect(h.hostname).toMatch(/^[a-z]+-\d+$/);
      expect(h.agent_version).toMatch(/^1\.8\.\d+-\d+$/);
      expect(h.tags.filter((t) => t.includes(':')).length).toBeGreaterThanOrEqual(3);
    }
  });

  it('puts a couple of hosts beyond the plan limit, keeping their place in the list', () => {
    const a = pro();
    const hosts = a.hosts(NOW);
    const denied = hosts.filter((h) => !h.allowed);
    expect(denied).toHaveLength(2);
    expect(hosts.length - denied.length).toBe(a.hostLimit);
    expect(a.account(NOW).limits?.hosts).toBe(a.hostLimit);
  });
});

describe('series values', () => {
  const a = pro('series');
  const allowed = a.hosts(NOW).filter((h) => h.allowed);
  const deltaNames = (uuid: string): string[] =>
    Object.values(a.metricCatalogue(uuid) ?? {})
      .flat()
      .filter((n) => catalogueEntry(n)?.kind === 'delta');

  it('sums of delta buckets agree across intervals for a fully ingested hour', () => {
    const hour = Math.floor((NOW - DAY) / HOUR) * HOUR;
    const problems: string[] = [];
    for (const host of allowed.slice(0, 6)) {
      for (const name of deltaNames(host.uuid)) {
        const sumOf = (intervalS: number): number => {
          let sum = 0;
          for (let t = hour; t < hour + HOUR; t += intervalS * 1000) sum += a.pointValue(host.uuid, name, t, intervalS, NOW) ?? 0;
          return sum;
        };
        const byMinute = sumOf(60);
        for (const intervalS of [120, 300, 900, 3600]) {
          if (sumOf(intervalS) !== byMinute) problems.push(`${host.hostname} ${name} at ${intervalS}s`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('a partly ingested bucket reports what has arrived: its delta is the sum of the readable minutes', () => {
    const hour = Math.floor(NOW / HOUR) * HOUR;
    for (const host of allowed.slice(0, 4)) {
      let sum = 0;
      let any = false;
      for (let t = hour; t < hour + HOUR; t += MINUTE) {
        const v = a.pointValue(host.uuid, 'system.net.bytes_rcvd', t, 60, NOW);
        if (v !== null) any = true;
        sum += v ?? 0;
      }
      expect(a.pointValue(host.uuid, 'system.net.bytes_rcvd', hour, 3600, NOW)).toBe(any ? sum : null);
    }
  });

  it('the newest minutes are still null (ingest delay) while older ones have arrived', () => {
    const minuteStart = Math.floor(NOW / MINUTE) * MINUTE;
    const now = minuteStart + 20_000; // less than the smallest per-host lag of 30 s
    let arrived = 0;
    for (const host of allowed) {
      expect(a.pointValue(host.uuid, 'system.cpu.user', minuteStart, 60, now)).toBeNull();
      expect(a.pointValue(host.uuid, 'system.cpu.user', minuteStart - MINUTE, 60, now)).toBeNull();
      // Ended 140 s ago, more than the largest lag of 100 s.
      if (a.pointValue(host.uuid, 'system.cpu.user', minuteStart - 3 * MINUTE, 60, now) !== null) arrived++;
    }
    expect(arrived).toBeGreaterThanOrEqual(allowed.length - 2);
  });

  it('latest is the newest non-null one-minute point', () => {
    for (const host of allowed) {
      const latest = a.latest(host.uuid, 'system.load.1', NOW);
      if (latest.timestampMs === null) continue;
      expect(a.pointValue(host.uuid, 'system.load.1', latest.timestampMs, 60, NOW)).toBe(latest.value);
      for (let t = latest.timestampMs + MINUTE; t <= NOW; t += MINUTE) {
        expect(a.pointValue(host.uuid, 'system.load.1', t, 60, NOW)).toBeNull();
      }
    }
  });

  it.each([
    [SIM_KEYS.pro, 30],
    [SIM_KEYS.business, 90],
  ])('keeps data only within the retention of %s (%i days)', (key, days) => {
    const account = world('retention').accountByKey(key);
    if (!account) throw new Error(key);
    const hosts = account.hosts(NOW).filter((h) => h.allowed);
    const at = (offsetMs: number, uuid: string): number | null => account.pointValue(uuid, 'system.cpu.user', NOW - offsetMs, 3600, NOW);
    expect(hosts.filter((h) => at(days * DAY - 2 * HOUR, h.uuid) !== null).length).toBeGreaterThan(hosts.length / 2);
    expect(hosts.filter((h) => at(days * DAY + 2 * HOUR, h.uuid) !== null)).toEqual([]);
  });

  it('has no data for hosts beyond the plan limit, nor for names the host does not have', () => {
    const denied = a.hosts(NOW).filter((h) => !h.allowed);
    expect(denied.length).toBeGreaterThan(0);
    for (const host of denied) {
      expect(a.metricCatalogue(host.uuid)).toEqual({});
      expect(a.pointValue(host.uuid, 'system.cpu.user', NOW - DAY, 3600, NOW)).toBeNull();
      expect(a.latest(host.uuid, 'system.cpu.user', NOW)).toEqual({ timestampMs: null, value: null });
    }
    const noNginx = allowed.find((h) => !h.server_kinds.includes('web-server'));
    if (noNginx) expect(a.pointValue(noNginx.uuid, 'nginx.http.request.count', NOW - DAY, 3600, NOW)).toBeNull();
    expect(a.pointValue(allowed[0]?.uuid ?? '', 'no.such.metric', NOW - DAY, 3600, NOW)).toBeNull();
  });
});

describe('online and last_seen', () => {
  it('online means the agent reported within the last 3 minutes, and some agents go quiet', () => {
    const a = createWorld({ seed: 'online', hosts: 80, websites: 0 }).accountByKey(SIM_KEYS.pro);
    if (!a) throw new Error('no account');
    let offline = 0;
    for (let k = 0; k < 24; k++) {
      const now = NOW - k * HOUR - k * 7_000;
      for (const h of a.hosts(now)) {
        const lastSeen = Date.parse(h.last_seen);
        expect(lastSeen).toBeLessThanOrEqual(now);
        expect(h.online).toBe(now - lastSeen <= 3 * MINUTE);
        if (!h.online) offline++;
      }
    }
    expect(offline).toBeGreaterThan(0);
  });
});

describe('alerts', () => {
  const a = pro('alerts');

  it('returns events newest first, at or before now, within the limit', () => {
    const events = a.recentAlerts(NOW, 40);
    expect(events).toHaveLength(40);
    for (let i = 1; i < events.length; i++) {
      const [newer, older] = [events[i - 1], events[i]] as [AlertEvent, AlertEvent];
      expect(newer.id).toBeGreaterThan(older.id);
      expect(Date.parse(newer.occurred_at)).toBeGreaterThanOrEqual(Date.parse(older.occurred_at));
    }
    expect(Date.parse(events[0]?.occurred_at ?? '')).toBeLessThanOrEqual(NOW);
    expect(a.recentAlerts(NOW, 5)).toEqual(events.slice(0, 5));
    expect(a.recentAlerts(NOW, 0)).toEqual([]);
  });

  it('has both kinds, pointing at this account\'s rules, hosts and websites', () => {
    const events = a.recentAlerts(NOW, 100);
    const rules = new Map(a.alertRules().map((r) => [r.id, r]));
    const hosts = new Set(a.hosts(NOW).map((h) => h.uuid));
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['website_down', 'host_alert']));
    for (const e of events) {
      if (e.type === 'host_alert') {
        const rule = rules.get(e.source_id);
        expect(rule?.enabled).toBe(true);
        expect(e.source_name).toBe(rule?.name);
        expect(hosts.has(e.host_uuid ?? '')).toBe(true);
        expect(e.message).toBe(`${rule?.metric} ${rule?.operator} ${rule?.threshold}`);
      } else {
        expect(a.hasWebsite(e.source_id)).toBe(true);
        expect("host_uuid" in e).toBe(false);
        expect(e.message).toMatch(/^(HTTP 5\d\d|timeout)$/);
      }
    }
  });

  it('keeps the same events as time moves on, and adds new ones in front', () => {
    const before = a.recentAlerts(NOW, 10);
    const later = a.recentAlerts(NOW + DAY, 200);
    const oldest = before[before.length - 1]?.id ?? 0;
    expect(later.filter((e) => e.id >= oldest && Date.parse(e.occurred_at) <= NOW)).toEqual(before);
  });

  it('has a handful of rules, some bound to a host, some global', () => {
    const rules = a.alertRules();
    expect(rules.length).toBeGreaterThanOrEqual(3);
    expect(new Set(rules.map((r) => r.id)).size).toBe(rules.length);
  });

  it.each(['alerts', 'monapi', 'test-seed', 'other'])('seed %s: every account has one rule bound to two or three of its allowed hosts, and it fires only for those', (seed) => {
    for (const account of world(seed).accounts()) {
      const scoped = account.alertRules().filter((r) => r.host_uuids !== undefined);
      expect(scoped, account.id).toHaveLength(1);
      const rule = scoped[0]!;
      const allowed = account.hosts(NOW).filter((h) => h.allowed);
      expect(rule.host_uuid).toBeNull();
      expect(rule.host_uuids!.length).toBeGreaterThanOrEqual(2);
      expect(rule.host_uuids!.length).toBeLessThanOrEqual(3);
      expect(new Set(rule.host_uuids).size).toBe(rule.host_uuids!.length);
      const listOrder = allowed.map((h) => h.uuid).filter((uuid) => rule.host_uuids!.includes(uuid));
      expect(rule.host_uuids).toEqual(listOrder);
      const component = catalogueEntry(rule.metric)?.component ?? '';
      const couldTrigger = allowed.filter((h) => account.metricCatalogue(h.uuid)?.[component]);
      expect(couldTrigger.length).toBeGreaterThan(rule.host_uuids!.length);
      if (account.plan !== 'pro' || !rule.enabled) continue;
      const fired = account.recentAlerts(NOW, 500).filter((e) => e.type === 'host_alert' && e.source_id === rule.id);
      expect(fired.length).toBeGreaterThan(0);
      for (const e of fired) expect(rule.host_uuids).toContain(e.type === 'host_alert' ? e.host_uuid : '');
    }
  });

  it('raises no website_down event for a paused website after its pause', () => {
    const site = a.websites(NOW).find((s) => !s.enabled)!;
    const lastCheck = Date.parse(site.last_checked_at!);
    const down = (at: number) => a.recentAlerts(at, 500).filter((e) => e.type === 'website_down' && e.source_id === site.id);
    expect(down(NOW).every((e) => Date.parse(e.occurred_at) <= lastCheck)).toBe(true);
    // Before the pause the same site had outages like any other.
    expect(down(lastCheck).length).toBeGreaterThan(0);
  });
});

describe('addHosts and removeHosts', () => {
  it('adds hosts that exist from now on and removes the last ones', () => {
    const a = pro('faults');
    const before = a.hosts(NOW);
    a.addHosts(2, NOW);
    const after = a.hosts(NOW);
    expect(after).toHaveLength(before.length + 2);
    const added = after.slice(-2);
    for (const h of added) {
      expect(h.created_at).toBe(new Date(NOW).toISOString());
      expect(h.allowed).toBe(true);
      expect(before.some((b) => b.uuid === h.uuid || b.hostname === h.hostname)).toBe(false);
      expect(a.pointValue(h.uuid, 'system.cpu.user', NOW - HOUR, 3600, NOW + HOUR)).toBeNull();
      expect(a.pointValue(h.uuid, 'system.cpu.user', NOW, 3600, NOW + 2 * HOUR)).not.toBeNull();
    }
    expect(a.account(NOW).usage?.hosts).toBe(before.length + 2);

    a.removeHosts(3, NOW);
    const remaining = a.hosts(NOW);
    expect(remaining.map((h) => h.uuid)).toEqual(before.slice(0, -1).map((h) => h.uuid));
    const gone = before[before.length - 1]?.uuid ?? '';
    expect(a.host(gone, NOW)).toBeUndefined();
    expect(a.metricCatalogue(gone)).toBeUndefined();
    expect(() => a.addHosts(-1, NOW)).toThrow(/non-negative integer/);
  });
});
