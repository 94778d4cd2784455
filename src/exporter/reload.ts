import type { Logger } from 'pino';
import type { Gauge } from 'prom-client';
import { ConfigError } from '../config/errors.js';
import type { Config } from '../config/types.js';
import type { Clock } from '../lib/clock.js';
import type { ReloadResult } from '../server/lifecycle.js';
import type { ReloadRecord } from './status.js';
import type { UnitSet } from './unit-set.js';


/** SIGHUP and `POST /-/reload`: re-read the configuration, apply what changed, keep the rest running. */
export class Reloader {
  private config: Config;
  private lastReload: ReloadRecord;

  constructor(
    initial: Config,
    private readonly units: UnitSet,
    private readonly metrics: { readonly successful: Gauge; readonly timestamp: Gauge },
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly readConfig: (() => Config) | undefined,
  ) {
    this.config = initial;
    this.lastReload = { ok: true, atMs: clock.now() };
    metrics.successful.set(1);
    metrics.timestamp.set(clock.now() / 1000);
  }

  get current(): { readonly config: Config; readonly lastReload: ReloadRecord } {
    return { config: this.config, lastReload: this.lastReload };
  }

  /** Applies a new configuration: unchanged units keep their state and budget. */
  apply(next: Config): string[] {
    const changed = this.units.apply(next, this.config);
    this.config = next;
    return changed;
  }

  /** Re-reads the configuration and applies it. Never throws: a broken file keeps the previous one in force. */
  reload(): ReloadResult {
    if (!this.readConfig) return { ok: false, error: 'this exporter was started without a configuration file to reload' };
    let next: Config;
    try {
      next = this.readConfig();
    } catch (error) {
      const message = error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error);
      this.lastReload = { ok: false, atMs: this.clock.now(), error: message };
      this.metrics.successful.set(0);
      this.log.error({ err: { message } }, 'configuration reload failed; the previous configuration stays in force');
      return { ok: false, error: message };
    }
    const changed = this.apply(next);
    this.lastReload = { ok: true, atMs: this.clock.now() };
    this.metrics.successful.set(1);
    this.metrics.timestamp.set(this.clock.now() / 1000);
    this.log.info({ changed, unchanged: this.units.all.map((u) => u.name).filter((n) => !changed.includes(n)) }, 'configuration reloaded');
    return { ok: true, changed };
  }
}
