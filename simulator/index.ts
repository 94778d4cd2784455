import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Request } from 'express';
import { systemClock, type Clock } from '../src/lib/clock.js';
import { FaultController } from './faults.js';
import { presentedKey } from './monitoring/http/auth.js';
import { createControlRouter } from './monitoring/http/control.js';
import { StatsRecorder, type SimStats } from './monitoring/http/stats.js';
import { API_PREFIX, createMonitoringApp, rateLimitMessage } from './monitoring/server.js';
import { createWorld } from './monitoring/world.js';
import { lateDataSettings, type DeltaTruth, type LateDataSettings, type TruthQuery } from './monitoring/late-data.js';
import { SIM_KEYS, type MonitoringWorld } from './monitoring/world-types.js';
import { TokenBucketLimiter } from './rate-limit.js';
import { createMarketplaceApp, createReleasesApp, MARKETPLACE_KEY_HEADER } from './releases/index.js';
import { SHAPE_ENDPOINTS, SHAPE_SETS, ShapeController, type ShapeEndpoint, type ShapeSet } from './shapes/shapes.js';
import { LAYOUT_OFF, LayoutController, type LayoutUpdate, type PageCounts } from './layouts/layout.js';
import { listTotals, type ListTotals } from './layouts/totals.js';

export { SIM_KEYS } from './monitoring/world-types.js';
export { LATE_DATA_DEFAULTS, type DeltaTruth, type LateDataSettings, type TruthQuery } from './monitoring/late-data.js';
export type { SimStats, ClientStats } from './monitoring/http/stats.js';
export { FaultController, type FaultSetView, type FaultTarget, type FaultUpdate } from './faults.js';
export { SHAPE_ENDPOINTS, SHAPE_SETS, ShapeController, type ShapeEndpoint, type ShapeSet } from './shapes/shapes.js';
export {
  DEFAULT_PAGE_SIZE,
  LAYOUT_ENVELOPES,
  LayoutController,
  PAGED_LISTS,
  type LayoutEnvelope,
  type LayoutSettings,
  type LayoutUpdate,
  type LayoutView,
  type PageCounts,
  type PagedList,
} from './layouts/layout.js';
export type { ListTotals } from './layouts/totals.js';

export interface SimulatorOptions {
  /** 0 picks any free port. Default 8081. */
  monitoringPort?: number;
  /** Default 8082. */
  releasesPort?: number;
  /** Default 8083. */
  marketplacePort?: number;
  /** Default 127.0.0.1. */
  listenHost?: string;
  /** Hosts per account. Default 12. */
  hosts?: number;
  /** Websites per account. Default 6. */
  websites?: number;
  /** Default 'monapi'. */
  seed?: string;
  /** Monitoring API requests per minute per key. Default 120. */
  rateLimitPerMinute?: number;
  /** Monitoring API burst. Default 30. */
  burst?: number;
  /** Send Retry-After on the monitoring API's 429. Default true. */
  retryAfter?: boolean;
  /**
   * Shape set of every body the seeds leave "not shown": `standard` (default), `alt` or
   * `nested`, the same data in other legal envelopes and encodings (docs/simulator.md).
   */
  shapes?: ShapeSet;
  /** Per-endpoint shape sets that override `shapes`, e.g. `{ websites: 'alt' }`. */
  shapeOverrides?: Partial<Record<ShapeEndpoint, ShapeSet>>;
  /**
   * Late data: a share of minutes arrive up to 2 hours late, a share never. `true` takes
   * the defaults (`LATE_DATA_DEFAULTS`); an object sets any of them. Off when absent.
   */
  lateData?: boolean | Partial<LateDataSettings>;
  /**
   * List layout and paging, orthogonal to the shape sets: `envelope` `none` (default), `hal`,
   * `jsonapi` or `envelope` (a `{success, result, result_info}` wrapper); `paged` splits the
   * list endpoints into pages of `pageSize` (default 3); `pageFailAfter` answers 503 for
   * later pages (docs/simulator.md, "Layouts and pages"). Off when absent.
   */
  layout?: LayoutUpdate;
  clock?: Clock;
  /** Source of fault decisions, uniform in [0, 1). Default Math.random. */
  random?: () => number;
}

export interface RunningSimulator {
  /** e.g. `http://127.0.0.1:8081/api/v2` */
  readonly monitoringBaseUrl: string;
  /** The free Release Lookup endpoint, e.g. `http://127.0.0.1:8082` */
  readonly releasesBaseUrl: string;
  /** The marketplace endpoints, e.g. `http://127.0.0.1:8083` */
  readonly marketplaceBaseUrl: string;
  /** The control surface, e.g. `http://127.0.0.1:8081/_sim` */
  readonly adminUrl: string;
  readonly keys: typeof SIM_KEYS;
  readonly world: MonitoringWorld;
  readonly limiter: TokenBucketLimiter;
  readonly faults: FaultController;
  /** The shape selection; switch it at run time with `set` (or `POST /_sim/shapes`). */
  readonly shapes: ShapeController;
  /** The list layout and paging; switch it with `set` (or `POST /_sim/layout`). */
  readonly layout: LayoutController;
  /** The late-data settings, or undefined when the mode is off. */
  readonly lateData: LateDataSettings | undefined;
  /**
   * Ground truth for a delta metric (also `GET /_sim/truth`): the sum of what the agent of
   * `hostUuid` in the account of `key` eventually reports for the minutes starting in
   * [fromMs, toMs), without the minutes that never arrive, and `completeAtMs`, when the last
   * of them arrives. Independent of the time now. @throws Error naming what is unknown
   */
  truth(query: TruthQuery & { key: string }): DeltaTruth;
  /**
   * Item counts of every list endpoint of the account of `key`, at `nowMs` (default the
   * clock's now): the truth a client that walks every page must reach. @throws Error for an unknown key
   */
  listTotals(key: string, nowMs?: number): ListTotals;
  stats(): SimStats;
  /** List requests answered, per account, list and page number (`served`), and those failed by `pageFailAfter` (`failed`). Reset with `resetStats`. */
  pageStats(): PageCounts;
  resetStats(): void;
  close(): Promise<void>;
}

export const SIMULATOR_DEFAULTS = {
  monitoringPort: 8081,
  releasesPort: 8082,
  marketplacePort: 8083,
  listenHost: '127.0.0.1',
  hosts: 12,
  websites: 6,
  seed: 'monapi',
  rateLimitPerMinute: 120,
  burst: 30,
  retryAfter: true,
  shapes: 'standard',
} as const satisfies Partial<SimulatorOptions>;

/**
 * Starts the three simulated listeners: the Monitoring API (with `/_sim` control), the free
 * Release Lookup endpoint and the marketplace endpoints. Port 0 picks a free port.
 *
 * @example
 * const sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, clock });
 * await fetch(`${sim.monitoringBaseUrl}/hosts`, { headers: { 'X-Api-Key': sim.keys.pro } });
 * await sim.close();
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const o = { ...SIMULATOR_DEFAULTS, ...definedOnly(options) };
  for (const [name, port] of [['monitoringPort', o.monitoringPort], ['releasesPort', o.releasesPort], ['marketplacePort', o.marketplacePort]] as const) {
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new RangeError(`simulator ${name} must be an integer 0-65535, got ${port}`);
  }
  if (!(SHAPE_SETS as readonly string[]).includes(o.shapes)) throw new RangeError(`simulator shapes must be one of ${SHAPE_SETS.join(', ')}, got ${String(o.shapes)}`);
  for (const [endpoint, set] of Object.entries(options.shapeOverrides ?? {})) {
    if (!(SHAPE_ENDPOINTS as readonly string[]).includes(endpoint) || !(SHAPE_SETS as readonly string[]).includes(set)) {
      throw new RangeError(`simulator shapeOverrides: ${endpoint}=${String(set)} is not <${SHAPE_ENDPOINTS.join('|')}>=<${SHAPE_SETS.join('|')}>`);
    }
  }
  const clock = options.clock ?? systemClock;
  const lateData = options.lateData ? lateDataSettings(options.lateData === true ? {} : options.lateData) : undefined;
  const world = createWorld({ seed: o.seed, hosts: o.hosts, websites: o.websites, ...(lateData ? { lateData } : {}) });
  const truth = (query: TruthQuery & { key: string }): DeltaTruth => {
    const account = world.accountByKey(query.key);
    if (!account) throw new Error('truth: no simulated account has that key');
    return account.deltaTruth(query);
  };
  const limiter = new TokenBucketLimiter({ clock, perMinute: o.rateLimitPerMinute, burst: o.burst });
  const faults = new FaultController({ clock, ...(options.random ? { random: options.random } : {}) });
  const stats = new StatsRecorder(clock);
  const shapes = new ShapeController({ default: o.shapes, endpoints: { ...options.shapeOverrides } });
  const layout = new LayoutController(LAYOUT_OFF);
  if (options.layout) layout.set(options.layout);
  const totalsOf = (key: string, nowMs: number = clock.now()): ListTotals => {
    const account = world.accountByKey(key);
    if (!account) throw new Error('listTotals: no simulated account has that key');
    return listTotals(account, nowMs);
  };

  const monitoringApp = createMonitoringApp({
    world,
    clock,
    limiter,
    retryAfter: o.retryAfter,
    shapes,
    layout,
    control: createControlRouter({ world, clock, faults, stats, limiter, shapes, layout, lateData }),
    middleware: [
      stats.middleware('monitoring', (req) => monitoringClient(world, req)),
      faults.middleware('monitoring', { stormBody: () => ({ error: 'rate_limited', message: rateLimitMessage(limiter) }) }),
    ],
  });

  const releasesApp = express();
  releasesApp.disable('x-powered-by');
  releasesApp.use(stats.middleware('releases', (req) => req.ip ?? req.socket.remoteAddress ?? 'unknown'));
  releasesApp.use(faults.middleware('releases'));
  releasesApp.use(createReleasesApp({ clock, shapes }));

  const marketplaceApp = express();
  marketplaceApp.disable('x-powered-by');
  marketplaceApp.use(stats.middleware('marketplace', marketplaceClient));
  marketplaceApp.use(faults.middleware('marketplace'));
  marketplaceApp.use(createMarketplaceApp({ clock, key: SIM_KEYS.marketplace, unsubscribedKey: SIM_KEYS.marketplaceUnsubscribed, shapes }));

  const servers: Server[] = [];
  const close = async (): Promise<void> => {
    faults.shutdown();
    await Promise.all(
      servers.map(async (server) => {
        if (!server.listening) return;
        const closed = once(server, 'close');
        server.close();
        // Hung requests and keep-alive sockets would otherwise hold close() open forever.
        server.closeAllConnections();
        await closed;
      }),
    );
  };

  try {
    const monitoring = await listen(monitoringApp, o.monitoringPort, o.listenHost, servers);
    const releases = await listen(releasesApp, o.releasesPort, o.listenHost, servers);
    const marketplace = await listen(marketplaceApp, o.marketplacePort, o.listenHost, servers);
    return {
      monitoringBaseUrl: `${monitoring}${API_PREFIX}`,
      releasesBaseUrl: releases,
      marketplaceBaseUrl: marketplace,
      adminUrl: `${monitoring}/_sim`,
      keys: SIM_KEYS,
      world,
      limiter,
      faults,
      shapes,
      layout,
      lateData,
      truth,
      listTotals: totalsOf,
      stats: () => stats.snapshot(),
      pageStats: () => layout.pages(),
      resetStats: () => {
        stats.reset();
        layout.resetPages();
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function listen(app: express.Express, port: number, host: string, servers: Server[]): Promise<string> {
  const server = createServer(app);
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      server.off('listening', onListening);
      reject(new Error(`simulator cannot listen on ${host}:${port}: ${error.message}`, { cause: error }));
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
  const address = server.address() as AddressInfo;
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${hostPart}:${address.port}`;
}

/** Monitoring requests are counted per account (`pro`, `business`, `starter`), or `invalid` / `none`. */
function monitoringClient(world: MonitoringWorld, req: Request): string {
  const presented = presentedKey(req);
  if (!presented.ok) return presented.reason === 'missing' ? 'none' : 'invalid';
  return world.accountByKey(presented.key)?.plan ?? 'invalid';
}

function marketplaceClient(req: Request): string {
  const key = req.get(MARKETPLACE_KEY_HEADER);
  if (key === undefined) return 'none';
  if (key === SIM_KEYS.marketplaceUnsubscribed) return 'unsubscribed';
  return key === SIM_KEYS.marketplace ? 'marketplace' : 'invalid';
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
