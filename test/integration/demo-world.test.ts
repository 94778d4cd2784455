import { describe, expect, it } from 'vitest';
import { parseDemoArgs } from '../../scripts/demo.js';
import { createWorld } from '../../simulator/monitoring/world.js';

/** What the Hosts dashboard has a row for (mixin/dashboards/hosts.ts), besides the system metrics every host has. */
const DASHBOARD_SOFTWARE = [['nginx'], ['php-fpm'], ['mysql', 'mariadb'], ['varnish']];

describe('npm run demo', () => {
  it('shows every component the dashboards have a row for, with its default options', () => {
    const options = parseDemoArgs([]);
    if (options === 'help') throw new Error('no arguments asked for help');
    const world = createWorld({ seed: options.seed, hosts: options.hosts, websites: options.websites });
    const now = Date.parse('2026-11-28T12:00:00Z');
    // The demo's configuration polls the Pro and the Business account (demoConfigYaml).
    const software = new Set<string>();
    for (const account of world.accounts().filter((a) => a.plan === 'pro' || a.plan === 'business')) {
      for (const host of account.hosts(now)) {
        // A host beyond the plan's limit reports no metrics.
        if (Object.keys(account.metricCatalogue(host.uuid) ?? {}).length === 0) continue;
        for (const component of account.components(host.uuid) ?? []) software.add(component.software);
      }
    }
    for (const names of DASHBOARD_SOFTWARE) expect(names.some((name) => software.has(name)), `${names.join(' or ')} among ${[...software].join(', ')}`).toBe(true);
  });
});
