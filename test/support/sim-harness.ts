import { pino } from 'pino';
import { parseConfig } from '../../src/config/load.js';
import type { AccountConfig } from '../../src/config/types.js';
import type { FamilySamples, MetricSink } from '../../src/exposition/model.js';
import { renderText } from '../../src/exposition/render-text.js';
import { FakeClock } from '../../src/lib/clock.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import type { SimAccount } from '../../simulator/monitoring/world-types.js';
import { UndiciTransport } from '../../src/upstream/http/transport.js';
import { MonitoringClient } from '../../src/upstream/monitoring/client.js';
import type { Inventory, SourceContext } from '../../src/sources/types.js';

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
  readonly inventory: Inventory;
  /** How many times a source called `inventoryChanged()`. */
  inventoryChanges(): number;
  /** A source built on the harness's context, optionally with another client. */
  source<S>(factory: (ctx: SourceContext) => S, client?: MonitoringClient): S;
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
  const inventory: Inventory = { hosts: new Map(), websites: new Map(), metricNames: new Map() };
  let changes = 0;
  const log = pino({ level: 'silent' });

  return {
    sim,
    simAccount,
    clock,
    account,
    sink,
    inventory,
    inventoryChanges: () => changes,
    client: (Client) => (Client ? makeClient(Client) : defaultClient),
    source(factory, client = defaultClient) {
      return factory({
        account,
        exporter: { metricPrefix: 'monapi_', sampleTimestamps: false, nullHandling: 'skip' },
        reservedFamilyNames: () => [],
        client,
        sink,
        inventory,
        clock,
        log,
        events: { nameCollision: () => undefined },
        inventoryChanged: () => {
          changes++;
        },
      });
    },
    async close() {
      await transport.close();
      await sim.close();
    },
  };
}
