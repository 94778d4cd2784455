import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { FamilySamples, MetricSink } from '../exposition/model.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { FieldState } from '../scheduler/field-health.js';
import type { SourceHealth } from '../scheduler/source-health.js';
import { TopicBoard } from '../scheduler/topics.js';
import { selectForShard, type ShardAssignment } from '../sharding/index.js';
import { SOURCES } from '../sources/index.js';
import type { FieldReport } from '../upstream/fields/resolve.js';
import { proxySettingsFromEnv } from '../upstream/http/transport.js';
import { createSelfMetrics } from './self-metrics.js';
import { createAccountUnit, type Unit } from './units.js';

/**
 * The probe command's work: every enabled source of each account polls one target once (the
 * host list, the first host's catalogue, series and components, the first website's summary
 * and checks, ...), through the account's own request budget, and what each answer said of
 * the source's declared fields is kept. Nothing is served and nothing is saved.
 */

export interface ProbeAnswer {
  /** The request path (`/websites/40001`). */
  readonly target: string;
  readonly report: FieldReport;
}

export interface SourceProbe {
  readonly source: string;
  /** Up or failing, with the reason and the last error; `pending` when it never ran (no target). */
  readonly health: SourceHealth | undefined;
  readonly answers: readonly ProbeAnswer[];
  /** Its declared fields: found (where, in what unit, a sample) or missing; empty when it declares none or asked nothing. */
  readonly fields: readonly FieldState[];
  /** Whether the source declares the fields it reads (all but those read by fixed names). */
  readonly declaresFields: boolean;
  /** The field paths the configuration names for it (`fields:`). */
  readonly configuredPaths: Readonly<Record<string, string>>;
}

export interface AccountProbe {
  readonly account: string;
  readonly sources: readonly SourceProbe[];
  /** The pass did not finish within the timeout: some sources may not have run. */
  readonly timedOut: boolean;
}

export interface ProbeOptions {
  readonly log: Logger;
  readonly shard: ShardAssignment;
  readonly timeoutMs: number;
  /** Only these accounts (default: every account this shard polls). */
  readonly accounts?: readonly string[];
  readonly clock?: Clock;
  readonly env?: NodeJS.ProcessEnv;
}

/** Publishes nowhere: the probe looks at the answers, not at the metrics. */
class DiscardingSink implements MetricSink {
  publish(_group: string, _families: readonly FamilySamples[]): void {}
  retract(_group: string): void {}
  groups(_prefix: string): string[] {
    return [];
  }
}

const PASS_POLL_MS = 100;

export async function probeAccounts(config: Config, options: ProbeOptions): Promise<AccountProbe[]> {
  const clock = options.clock ?? systemClock;
  const answers = new Map<string, ProbeAnswer[]>();
  const key = (unit: string, source: string) => `${unit}\u0000${source}`;
  const selected = selectForShard(config.accounts, options.shard).filter((a) => options.accounts === undefined || options.accounts.includes(a.name));
  const deps = {
    exporter: config.exporter,
    clock,
    log: options.log,
    sink: new DiscardingSink(),
    metrics: createSelfMetrics(clock, false),
    board: new TopicBoard(),
    proxy: proxySettingsFromEnv(options.env ?? process.env),
    shard: options.shard,
    probe: {
      targetsPerSource: 1,
      onFieldReport: (unit: string, source: string, target: string, report: FieldReport) => {
        const list = answers.get(key(unit, source)) ?? [];
        if (!list.some((a) => a.target === target)) list.push({ target, report });
        answers.set(key(unit, source), list);
      },
    },
  };
  const units: Unit[] = selected.map((account) => createAccountUnit(account, deps));
  for (const unit of units) unit.runtime.start();
  const deadline = clock.now() + options.timeoutMs;
  const timedOut = new Set<string>();
  try {
    await Promise.all(
      units.map(async (unit) => {
        while (!unit.runtime.passDone()) {
          if (clock.now() >= deadline) {
            timedOut.add(unit.name);
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, PASS_POLL_MS));
        }
      }),
    );
    return units.map((unit) => {
      const config = selected.find((a) => a.name === unit.name);
      const health = unit.runtime.sourceHealth();
      const fields = unit.runtime.fieldStates();
      return {
        account: unit.name,
        timedOut: timedOut.has(unit.name),
        sources: health.map((h) => ({
          source: h.source,
          health: h,
          answers: answers.get(key(unit.name, h.source)) ?? [],
          fields: fields.filter((f) => f.source === h.source),
          declaresFields: SOURCES.some((definition) => definition.name === h.source && definition.fields !== undefined),
          configuredPaths: config?.sources[h.source]?.fieldPaths ?? {},
        })),
      };
    });
  } finally {
    await Promise.all(units.map((unit) => unit.runtime.stop()));
    for (const unit of units) unit.budget.close();
    await Promise.all(units.map((unit) => unit.transport.close()));
  }
}
