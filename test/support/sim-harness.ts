import { parseConfig } from '../../src/exporter/config.js';
import type { AccountConfig } from '../../src/config/types.js';
import type { FamilySamples, MetricSink } from '../../src/exposition/model.js';
import { renderText } from '../../src/exposition/render-text.js';
import { FakeClock } from '../../src/lib/clock.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import type { SimAccount } from '../../simulator/monitoring/world-types.js';
import { UndiciTransport } from '../../src/upstream/http/transport.js';
import { MonitoringClient, type Endpoint, type PathParams, type QueryValues } from '../../src/upstream/monitoring/client.js';
import type { Priority } from '../../src/budget/types.js';
import type { Decoded } from '../../src/upstream/decode.js';
import type { Poller, SourceDefinition, TargetPoller, Topic, UnitPoller } from '../../src/sources/source.js';
import { TopicBoard } from '../../src/scheduler/topics.js';
import { buildPoller } from './source-context.js';

/**
 * Test helper for the source modules' tests: the real simulator in-process on a FakeClock,
 * a real MonitoringClient over HTTP behind a pass-through gate, and a sink that keeps what
 * was published, so a test polls a source and reads back exposition text.
 */

/** Keeps the families of each group, as the store would serve them. */
export class MemorySink implements MetricSink {
  readonly published = new Map<string, readonly FamilySamples[]>();

  publish(group: string, families: readonly FamilySamples[]): void {
    this.published.set(group, families);
  }

  retract(group: string): void {
    this.published.delete(group);
  }

  groups(prefix: string): string[] {
    return [...this.published.keys()].filter((g) => g.startsWith(prefix));
  }

  /** Sample lines of one group's rendered text (no HELP/TYPE), or [] if it is not held. */
  lines(group: string): string[] {
    const families = this.published.get(group);
    if (!families) return [];
    return renderText(families)
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
  }
}

export interface SourceHarness {
  readonly sim: RunningSimulator;
  readonly simAccount: SimAccount;
  readonly clock: FakeClock;
  readonly account: AccountConfig;
  readonly sink: MemorySink;
  /** A topic as the harness's unit holds it now. */
  read<T>(topic: Topic<T>): T;
  /** How many times a source provided a topic (each is a change the unit's jobs follow). */
  topicChanges(): number;
  /** A source of the whole unit, built on the harness's context, optionally with another client. */
  unitSource(definition: SourceDefinition<MonitoringClient, unknown>, client?: MonitoringClient): UnitPoller;
  /** A per-target source, built on the harness's context, optionally with another client. */
  targetSource<T>(definition: SourceDefinition<MonitoringClient, unknown>, client?: MonitoringClient): TargetPoller<T>;
  /** The harness's client, or a new one of a subclass that changes what an endpoint returns. */
  client(Client?: ClientClass): MonitoringClient;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** YAML lines added to the account (4-space indent), e.g. `    websites:\n      exclude_names: [x]\n`. */
  readonly accountYaml?: string;
  readonly websites?: number;
}

/** A MonitoringClient subclass lets a test change what an endpoint returns. */
export type ClientClass = typeof MonitoringClient;

/** A client whose answers from one endpoint pass through `change` first (a service that sends less, or other items). */
export function changingClient<T>(endpoint: Endpoint<T>, change: (value: T) => T): ClientClass {
  return class extends MonitoringClient {
    override async get<U>(target: Endpoint<U>, params?: PathParams, query?: QueryValues, priority?: Priority): Promise<Decoded<U>> {
      const answer = await super.get(target, params, query, priority);
      // Only the endpoint named above is changed, so U is T here.
      return target === (endpoint as unknown) ? { ...answer, value: change(answer.value as unknown as T) as unknown as U } : answer;
    }
  };
}

export async function startSourceHarness(options: HarnessOptions = {}): Promise<SourceHarness> {
  const clock = new FakeClock();
  const sim = await startSimulator({
    monitoringPort: 0,
    releasesPort: 0,
    marketplacePort: 0,
    websites: options.websites ?? 6,
    rateLimitPerMinute: 1_000_000,
    burst: 1_000_000,
    clock,
  });
  const simAccount = sim.world.accountByKey(sim.keys.pro);
  if (!simAccount) throw new Error('the simulator has no account for its pro key');
  const yaml = `accounts:\n  - name: sim\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: SIM_KEY\n${options.accountYaml ?? ''}`;
  const config = parseConfig(yaml, { env: { SIM_KEY: sim.keys.pro } });
  const account = config.accounts[0];
  if (!account) throw new Error('the harness config has no account');

  const transport = new UndiciTransport();
  const makeClient = (Client: ClientClass = MonitoringClient) =>
    new Client({
      baseUrl: account.baseUrl,
      apiKey: account.apiKey.reveal(),
      transport,
      gate: { run: (_priority, _endpoint, attempt) => attempt(new AbortController().signal) },
      clock,
    });
  const defaultClient = makeClient();
  const sink = new MemorySink();
  const board = new TopicBoard();
  let changes = 0;
  board.onChange(() => changes++);
  const build = (definition: SourceDefinition<MonitoringClient, unknown>, client: MonitoringClient): Poller => buildPoller(definition, { account, upstream: client, sink, clock, board });

  return {
    sim,
    simAccount,
    clock,
    account,
    sink,
    read: (topic) => board.read('sim', topic),
    topicChanges: () => changes,
    client: (Client) => (Client ? makeClient(Client) : defaultClient),
    unitSource(definition, client = defaultClient) {
      const poller = build(definition, client);
      if (poller.scope !== 'unit') throw new Error(`${definition.name} polls per target`);
      return poller;
    },
    targetSource<T>(definition: SourceDefinition<MonitoringClient, unknown>, client = defaultClient) {
      const poller = build(definition, client);
      if (poller.scope !== 'target') throw new Error(`${definition.name} polls the whole unit`);
      // The test names the target type the source polls.
      return poller as TargetPoller<T>;
    },
    async close() {
      await transport.close();
      await sim.close();
    },
  };
}
