import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { PRIORITIES } from './priority-queue.js';
import { RETRY_REASONS } from './snapshot.js';
import type { BudgetSnapshot } from './snapshot.js';

export interface BudgetSnapshotSource {
  snapshot(): BudgetSnapshot;
}

/**
 * Self-metrics of request budgets. A budget registers itself on construction and leaves
 * on close; every value is read from `snapshot()` at scrape time, so the budget keeps no
 * metric state of its own and the numbers on /metrics match the /status page exactly.
 */
export interface BudgetMetrics {
  track(source: BudgetSnapshotSource): void;
  untrack(source: BudgetSnapshotSource): void;
}

type Read = (s: BudgetSnapshot) => number;

interface GaugeDef {
  name: string;
  help: string;
  read: Read;
}

const GAUGES: readonly GaugeDef[] = [
  { name: 'monapi_budget_tokens', help: 'Tokens in the request bucket of the API key; each upstream request spends one.', read: (s) => s.tokens },
  { name: 'monapi_budget_burst', help: 'Capacity of the request bucket: the documented burst minus headroom.', read: (s) => s.burst },
  {
    name: 'monapi_budget_configured_requests_per_second',
    help: 'Request rate the budget aims at: the documented limit minus headroom.',
    read: (s) => s.configuredRatePerSecond,
  },
  {
    name: 'monapi_budget_effective_requests_per_second',
    help: 'Request rate in force now; below the configured rate after a 429, climbing back.',
    read: (s) => s.effectiveRatePerSecond,
  },
  { name: 'monapi_budget_in_flight_requests', help: 'Upstream requests of the API key in flight.', read: (s) => s.inFlight },
  { name: 'monapi_budget_retry_waiting_requests', help: 'Requests waiting out a retry backoff.', read: (s) => s.waitingToRetry },
  { name: 'monapi_budget_paused', help: '1 while the API key is paused after a 429, else 0.', read: (s) => (s.pausedUntilMs === null ? 0 : 1) },
  {
    name: 'monapi_budget_auth_failed',
    help: '1 while the API key is failing fast after a 401 or 403, else 0.',
    read: (s) => (s.authFailed === null ? 0 : 1),
  },
];

const COUNTERS: readonly GaugeDef[] = [
  { name: 'monapi_budget_attempts_total', help: 'Upstream requests started (first tries and retries): the calls spent.', read: (s) => s.totals.attempts },
  {
    name: 'monapi_budget_failed_fast_total',
    help: 'Requests rejected without an upstream call because the API key had failed authentication.',
    read: (s) => s.totals.failedFast,
  },
  { name: 'monapi_budget_pauses_total', help: 'Pauses of the whole API key started by a 429.', read: (s) => s.totals.pauses },
  { name: 'monapi_budget_paused_seconds_total', help: 'Time the API key has spent paused after 429s.', read: (s) => s.totals.pausedSeconds },
  { name: 'monapi_upstream_rate_limited_total', help: 'Upstream 429 (rate limited) responses seen.', read: (s) => s.totals.rateLimited },
];

/**
 * Creates the budget self-metrics on `registry` (never the global default registry),
 * labelled by `account`, the budget's name.
 *
 * @example
 * const metrics = createBudgetMetrics(registry);
 * const budget = createRequestBudget({ name: 'acme', clock: systemClock, metrics });
 */
export function createBudgetMetrics(registry: Registry): BudgetMetrics {
  const sources = new Map<string, BudgetSnapshotSource>();
  const snapshots = (): BudgetSnapshot[] => [...sources.values()].map((source) => source.snapshot());

  for (const def of GAUGES) {
    new Gauge({
      name: def.name,
      help: def.help,
      labelNames: ['account'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of snapshots()) this.set({ account: s.name }, def.read(s));
      },
    });
  }

  new Gauge({
    name: 'monapi_budget_queued_requests',
    help: 'Requests of the API key waiting for a token or a concurrency slot, by priority.',
    labelNames: ['account', 'priority'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of snapshots()) {
        for (const priority of PRIORITIES) this.set({ account: s.name, priority }, s.queued[priority]);
      }
    },
  });

  for (const def of COUNTERS) {
    new Counter({
      name: def.name,
      help: def.help,
      labelNames: ['account'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of snapshots()) this.inc({ account: s.name }, def.read(s));
      },
    });
  }

  new Counter({
    name: 'monapi_upstream_retries_total',
    help: 'Upstream requests retried, by the outcome that caused the retry.',
    labelNames: ['account', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of snapshots()) {
        for (const reason of RETRY_REASONS) this.inc({ account: s.name, reason }, s.totals.retries[reason]);
      }
    },
  });

  return {
    track(source) {
      const name = source.snapshot().name;
      const existing = sources.get(name);
      if (existing !== undefined && existing !== source) {
        throw new Error(`a request budget for account "${name}" is already tracked; account names must be unique`);
      }
      sources.set(name, source);
    },
    untrack(source) {
      for (const [name, tracked] of sources) if (tracked === source) sources.delete(name);
    },
  };
}
