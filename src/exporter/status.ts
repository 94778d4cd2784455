import type { Config } from '../config/types.js';
import type { MetricStore } from '../exposition/store.js';
import type { FailingSource } from '../scheduler/source-health.js';
import type { ShardAssignment } from '../sharding/index.js';
import type { MissingField } from '../server/status.js';
import { EXPORTER_VERSION } from '../version.js';
import type { UnitSet } from './unit-set.js';

export interface ReloadRecord {
  readonly ok: boolean;
  readonly atMs: number;
  readonly error?: string;
}

/** What /status, /-/ready and the landing page say of the running exporter. */
export class ExporterStatus {
  private everReady = false;
  stopping = false;

  constructor(
    private readonly units: UnitSet,
    private readonly store: MetricStore,
    private readonly shard: ShardAssignment,
    private readonly current: () => { readonly config: Config; readonly lastReload: ReloadRecord },
  ) {}

  ready(): boolean {
    if (this.stopping) return false;
    // Once ready, a reload that adds or changes an account does not take the pod out of its Service.
    this.everReady ||= this.units.all.every((u) => u.runtime.ready());
    return this.everReady;
  }

  notReadyReason(): string {
    if (this.stopping) return 'shutting down';
    const reasons = this.units.all.map((u) => u.runtime.notReadyReason()).filter((r) => r !== undefined);
    return reasons.join('; ') || 'waiting for the first complete polling cycle';
  }

  failingSources(): FailingSource[] {
    return this.units.all.flatMap((u) => u.runtime.failingSources());
  }

  missingFields(): MissingField[] {
    return this.units.all.flatMap((u) => u.runtime.fieldStates().filter((f) => f.missing).map((f) => ({ account: u.name, source: f.source, field: f.field, about: f.about })));
  }

  status(): Record<string, unknown> {
    const { config, lastReload } = this.current();
    const polled = this.units.accounts.map((u) => u.name);
    const snapshot = this.store.snapshot();
    return {
      version: EXPORTER_VERSION,
      ready: this.ready(),
      accounts: this.units.accounts.map((u) => ({ ...u.runtime.status(), series_exposed: u.sink.series })),
      releases: this.units.releases?.runtime.status(),
      shard: {
        ordinal: this.shard.ordinal,
        total: this.shard.total,
        accounts: polled,
        accounts_on_other_shards: config.accounts.length - polled.length,
        releases: config.releases !== undefined && this.shard.ordinal === 0,
      },
      config: { last_reload_successful: lastReload.ok, last_reload_at: new Date(lastReload.atMs).toISOString(), last_reload_error: lastReload.error },
      exposition: { generation: snapshot.generation, series: snapshot.series, families: snapshot.families, render_seconds: snapshot.renderSeconds },
    };
  }
}
