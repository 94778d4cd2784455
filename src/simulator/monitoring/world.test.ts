import { describe, expect, it } from 'vitest';

import { catalogueEntry, METRIC_CATALOGUE } from '../../upstream/monitoring/metric-catalogue.js';
import {
  Account,
  AlertEvent,
  AlertRule,
  Component,
  Host,
  MetricCatalogue,
  Website,
  WebsiteCheck,
  WebsiteSummary,
} from '../../upstream/monitoring/schemas.js';
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
        for (const check of a.checks(site.id, NOW - 6 * HOUR, NOW)) WebsiteCheck.parse(check);
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
    expect([...names].sort()).toEqual(METRIC_CATALOGUE.map((e) => e.name).sort());
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

void MINUTE;
void DAY;
