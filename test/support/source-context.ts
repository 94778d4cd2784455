import { pino } from 'pino';
import type { AccountConfig, ExporterConfig } from '../../src/config/types.js';
import type { MetricSink } from '../../src/exposition/model.js';
import type { Clock } from '../../src/lib/clock.js';
import { TopicBoard } from '../../src/scheduler/topics.js';
import type { Poller, SourceDefinition, TargetPoller, UnitPoller } from '../../src/sources/source.js';

export interface PollerWorld<Api> {
  readonly account: AccountConfig;
  readonly exporter?: ExporterConfig;
  readonly upstream: Api;
  readonly sink: MetricSink;
  readonly clock: Clock;
  /** Where the sources' topics live; a test provides what other sources would. */
  readonly board?: TopicBoard;
}

/**
 * One source's poller on a context like the one its unit gives it in the exporter: the
 * account's settings and cadences for it, topics on a board the test holds.
 */
export function buildPoller<Api>(definition: SourceDefinition<Api, unknown>, world: PollerWorld<Api>): Poller {
  const { account } = world;
  const board = world.board ?? new TopicBoard();
  const unit = account.name;
  return definition.create({
    unit: { name: unit, baseUrl: account.baseUrl, counterGraceMs: account.counterGraceMs, shard: { ordinal: 0, total: 1 } },
    exporter: world.exporter ?? { metricPrefix: 'monapi_', sampleTimestamps: false, nullHandling: 'skip' },
    upstream: world.upstream,
    settings: account.sources[definition.name]?.settings,
    cadenceMs: (key) => account.sources[definition.name]?.cadenceMs[key] ?? 0,
    reservedFamilyNames: () => [],
    sink: world.sink,
    clock: world.clock,
    log: pino({ level: 'silent' }),
    events: { nameCollision: () => undefined },
    provide: (topic, value) => board.provide(unit, topic, value),
    read: (topic) => board.read(unit, topic),
    readAll: (topic) => board.readAll(topic),
    settingsOf: <S>(source: SourceDefinition<never, S>) => account.sources[source.name]?.settings as S | undefined,
  });
}

export function unitPoller<Api>(definition: SourceDefinition<Api, unknown>, world: PollerWorld<Api>): UnitPoller {
  const poller = buildPoller(definition, world);
  if (poller.scope !== 'unit') throw new Error(`${definition.name} polls per target`);
  return poller;
}

export function targetPoller<T, Api>(definition: SourceDefinition<Api, unknown>, world: PollerWorld<Api>): TargetPoller<T> {
  const poller = buildPoller(definition, world);
  if (poller.scope !== 'target') throw new Error(`${definition.name} polls the whole unit`);
  // The test names the target type the source polls.
  return poller as TargetPoller<T>;
}
