import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Secret } from '../config/secret.js';
import type { AccountConfig, Config, ReleasesConfig } from '../config/types.js';
import { selectForShard } from '../sharding/index.js';
import type { AccountState } from '../state/state-file.js';
import { forgetAccountSeries } from './self-metrics.js';
import { createAccountUnit, createReleasesUnit, releasesBaseUrl, RELEASES_UNIT, wantsReleasesUnit, type Unit, type UnitDeps } from './units.js';

/** Two unit configurations alike in every setting and every key (keys compare without being revealed). */
function sameConfig(a: AccountConfig | ReleasesConfig, b: AccountConfig | ReleasesConfig): boolean {
  const keysA = secretsOf(a);
  const keysB = secretsOf(b);
  // Secrets keep their value in a private field, which a deep comparison does not see.
  return isDeepStrictEqual(a, b) && keysA.length === keysB.length && keysA.every((key, i) => keysB[i] !== undefined && key.equals(keysB[i]));
}

function secretsOf(config: AccountConfig | ReleasesConfig): Secret[] {
  if ('apiKey' in config) return [config.apiKey];
  return config.mode === 'marketplace' ? [config.marketplaceKey] : [];
}

/** Same upstream and same key: a new unit may continue the old one's counters. */
function sameUpstream(a: AccountConfig | ReleasesConfig, b: AccountConfig | ReleasesConfig): boolean {
  if (!('apiKey' in a) || !('apiKey' in b)) return false;
  return a.baseUrl === b.baseUrl && a.apiKey.equals(b.apiKey);
}

/**
 * The units of the running exporter: one per account this shard polls, and the release
 * lookups when the configuration has any. `apply` makes them follow a new configuration,
 * replacing only the units whose configuration changed.
 */
export class UnitSet {
  private units = new Map<string, Unit>();

  constructor(
    private readonly deps: UnitDeps,
    private readonly registry: Registry,
    private readonly log: Logger,
  ) {}

  get all(): readonly Unit[] {
    return [...this.units.values()];
  }

  get accounts(): readonly Unit[] {
    return this.all.filter((unit) => unit.section === 'account');
  }

  get releases(): Unit | undefined {
    return this.units.get(RELEASES_UNIT);
  }

  /** Builds the units of a configuration (not started), each continuing its saved state when there is one. */
  create(config: Config, restored: (name: string, baseUrl: string) => AccountState | undefined): void {
    for (const account of selectForShard(config.accounts, this.deps.shard)) {
      const saved = restored(account.name, account.baseUrl);
      this.add(createAccountUnit(account, this.depsFor(config), saved?.budget), saved);
    }
    if (wantsReleasesUnit(config.releases)) this.add(createReleasesUnit(config.releases, this.depsFor(config)), restored(RELEASES_UNIT, releasesBaseUrl(config.releases)));
  }

  start(): void {
    for (const unit of this.units.values()) unit.runtime.start();
  }

  /** The state of every unit that keeps some, by unit name (see --state.file). */
  saveState(): Record<string, AccountState> {
    const state: Record<string, AccountState> = {};
    for (const unit of this.units.values()) {
      const sources = unit.runtime.saveState();
      // An account's budget is always kept: a restart must not spend what the upstream has not given back.
      if (unit.section === 'account') state[unit.name] = { baseUrl: unit.runtime.baseUrl, sources, budget: unit.budget.persistentState() };
      else if (Object.keys(sources).length > 0) state[unit.name] = { baseUrl: unit.runtime.baseUrl, sources };
    }
    return state;
  }

  /**
   * Replaces what changed; returns the names of the units started afresh or removed. A unit
   * replaced with the same upstream and key continues the counters of the old one.
   */
  apply(next: Config, previous: Config): string[] {
    const changed: string[] = [];
    const wanted = new Map<string, AccountConfig | ReleasesConfig>(selectForShard(next.accounts, this.deps.shard).map((a) => [a.name, a]));
    if (wantsReleasesUnit(next.releases)) wanted.set(RELEASES_UNIT, next.releases);
    const exporterChanged = !isDeepStrictEqual(next.exporter, previous.exporter);
    const carried = new Map<string, AccountState>();
    const retiring: Promise<void>[] = [];
    for (const [name, unit] of this.units) {
      const config = wanted.get(name);
      if (config !== undefined && !exporterChanged && sameConfig(unit.config, config)) continue;
      if (config !== undefined && sameUpstream(unit.config, config)) carried.set(name, { baseUrl: unit.runtime.baseUrl, sources: unit.runtime.saveState(), budget: unit.budget.handOver() });
      this.units.delete(name);
      // What it provided to other units goes now, before a replacement provides anew.
      this.deps.board.forgetUnit(name);
      retiring.push(this.retire(unit, config === undefined));
      changed.push(name);
    }
    const deps = this.depsFor(next);
    for (const [name, config] of wanted) {
      if (this.units.has(name)) continue;
      const saved = carried.get(name);
      const unit = name === RELEASES_UNIT ? createReleasesUnit(config as ReleasesConfig, deps) : createAccountUnit(config as AccountConfig, deps, saved?.budget);
      this.add(unit, saved);
      unit.runtime.start();
      if (!changed.includes(name)) changed.push(name);
    }
    void Promise.all(retiring).catch((err: unknown) => this.log.error({ err }, 'stopping a replaced unit failed'));
    return changed;
  }

  /** Stops every unit: schedulers first, so the runs the closing budgets reject are not reported as failures. */
  async stop(): Promise<void> {
    const stopped = Promise.all(this.all.map((unit) => unit.runtime.stop()));
    for (const unit of this.units.values()) unit.budget.close();
    await stopped;
  }

  async closeTransports(): Promise<void> {
    await Promise.all(this.all.map((unit) => unit.transport.close()));
  }

  /** No request in flight or waiting to be retried (tests drive a fake clock by it). */
  quiet(): boolean {
    return this.all.every((unit) => {
      const s = unit.budget.snapshot();
      return s.inFlight === 0 && s.waitingToRetry === 0;
    });
  }

  /** No request in flight; retries may be waiting for their time. */
  idle(): boolean {
    return this.all.every((unit) => unit.budget.snapshot().inFlight === 0);
  }

  /** Closes the budgets of units never started (the server failed to listen). */
  abandon(): void {
    for (const unit of this.units.values()) unit.budget.close();
  }

  private depsFor(config: Config): UnitDeps {
    return { ...this.deps, exporter: config.exporter };
  }

  private add(unit: Unit, saved: AccountState | undefined): void {
    this.units.set(unit.name, unit);
    if (saved === undefined) return;
    for (const problem of unit.runtime.restoreState(saved.sources)) {
      this.log.warn({ account: unit.name, problem }, 'part of the saved state could not be read; that source starts afresh');
    }
  }

  private async retire(unit: Unit, removed: boolean): Promise<void> {
    this.deps.metrics.scheduler.untrack(unit.runtime);
    const stopped = unit.runtime.stop();
    unit.budget.close();
    await stopped;
    unit.sink.retractAll();
    await unit.transport.close();
    // A replaced unit gets the same names again at once; only a removed one is forgotten.
    if (removed) await forgetAccountSeries(this.registry, unit.name);
  }
}
