import type { SimAccount } from '../monitoring/world-types.js';

/** How many items each list endpoint of one account holds: what a client walking every page must end up with. */
export interface ListTotals {
  hosts: number;
  websites: number;
  alertRules: number;
  /** Components per host uuid. */
  components: Record<string, number>;
  /** Items of `/hosts/{uuid}/metrics` per host uuid: component groups (a page holds whole groups). */
  metrics: Record<string, number>;
  /** Metric names per host uuid, all groups together. */
  metricNames: Record<string, number>;
}

/** The account's list totals at `nowMs`; the lists are the same for one `nowMs` whatever the layout. */
export function listTotals(account: SimAccount, nowMs: number): ListTotals {
  const hosts = account.hosts(nowMs);
  const totals: ListTotals = { hosts: hosts.length, websites: account.websites(nowMs).length, alertRules: account.alertRules().length, components: {}, metrics: {}, metricNames: {} };
  for (const { uuid } of hosts) {
    const catalogue = account.metricCatalogue(uuid) ?? {};
    totals.components[uuid] = account.components(uuid)?.length ?? 0;
    totals.metrics[uuid] = Object.keys(catalogue).length;
    totals.metricNames[uuid] = Object.values(catalogue).flat().length;
  }
  return totals;
}
