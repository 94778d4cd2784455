import { performance } from 'node:perf_hooks';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';
import { VARY, negotiate } from '../exposition/negotiate.js';
import { DEFAULT_SELF_METRICS_MAX_AGE_MS, SelfMetricsCache, buildScrapeBody } from '../exposition/scrape.js';
import type { MetricStore } from '../exposition/store.js';
import { EXPORTER_VERSION } from '../version.js';
import { landingPage } from './landing.js';
import type { StatusProvider } from './status.js';

export { parseListenAddress, startHttpServer, type ListenAddress, type RunningServer } from './listen.js';
export type { StatusProvider } from './status.js';

export interface ServerOptions {
  readonly store: MetricStore;
  /** Self-metrics (prom-client); rendered on each scrape after the store's data. */
  readonly selfRegistry: Registry;
  /** Default `/metrics`. */
  readonly telemetryPath?: string;
  readonly status: StatusProvider;
  readonly log?: Logger;
  /** Shown on the landing page; defaults to the version in package.json. */
  readonly version?: string;
  /**
   * Scrapes of the telemetry path served at once; more get 503 with Retry-After. Each one
   * in flight keeps the snapshot it started with in memory until its last byte is sent.
   * 0 means no limit. Default 10.
   */
  readonly maxConcurrentScrapes?: number;
  /** Scrapes within this long share one rendering of the self-metrics. Default 1000 ms. */
  readonly selfMetricsMaxAgeMs?: number;
}

export const DEFAULT_MAX_CONCURRENT_SCRAPES = 10;
/** A scrape whose socket accepts no byte for this long is cut off, freeing the snapshot it holds. */
const STALLED_SCRAPE_MS = 60_000;

export const DEFAULT_TELEMETRY_PATH = '/metrics';
const FIXED_PATHS = ['/', '/-/healthy', '/-/ready', '/status'];
const SAFE_PATH = /^\/[A-Za-z0-9._~/-]*$/;
const SCRAPE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];


function validateTelemetryPath(path: string): string {
  if (!SAFE_PATH.test(path) || path.length < 2) {
    throw new RangeError(`invalid telemetry path ${JSON.stringify(path)}: must start with / and use only letters, digits and . _ ~ - /`);
  }
  const normalised = path.replace(/\/+$/, '');
  if (FIXED_PATHS.includes(normalised.toLowerCase())) {
    throw new RangeError(`invalid telemetry path ${JSON.stringify(path)}: clashes with a built-in route`);
  }
  return normalised;
}

interface ScrapeMetrics {
  readonly duration: Histogram<'format' | 'encoding'>;
  readonly scrapes: Counter<'format' | 'encoding'>;
  readonly bytes: Counter<'format' | 'encoding'>;
  readonly rejected: Counter;
}

function scrapeMetrics(registry: Registry): ScrapeMetrics {
  // Reuse what an earlier createServer on the same registry registered: prom-client throws on a second registration.
  const existing = (name: string): unknown => registry.getSingleMetric(name);
  const labelNames = ['format', 'encoding'] as const;
  return {
    duration:
      (existing('monapi_exporter_scrape_duration_seconds') as Histogram<'format' | 'encoding'> | undefined) ??
      new Histogram({
        name: 'monapi_exporter_scrape_duration_seconds',
        help: 'Time to answer a scrape of the telemetry path, from request to the last byte handed to the socket.',
        labelNames,
        buckets: SCRAPE_BUCKETS,
        registers: [registry],
      }),
    scrapes:
      (existing('monapi_exporter_scrapes_total') as Counter<'format' | 'encoding'> | undefined) ??
      new Counter({
        name: 'monapi_exporter_scrapes_total',
        help: 'Scrapes of the telemetry path, by negotiated format and content encoding.',
        labelNames,
        registers: [registry],
      }),
    bytes:
      (existing('monapi_exporter_scrape_sent_bytes_total') as Counter<'format' | 'encoding'> | undefined) ??
      new Counter({
        name: 'monapi_exporter_scrape_sent_bytes_total',
        help: 'Body bytes sent in answer to scrapes, after compression, by format and content encoding.',
        labelNames,
        registers: [registry],
      }),
    rejected:
      (existing('monapi_exporter_scrapes_rejected_total') as Counter | undefined) ??
      new Counter({
        name: 'monapi_exporter_scrapes_rejected_total',
        help: 'Scrapes of the telemetry path answered 503 because the maximum of concurrent scrapes was being served.',
        registers: [registry],
      }),
  };
}

function text(res: Response, status: number, body: string): void {
  res.status(status).type('text/plain; charset=utf-8').send(body);
}

function methodNotAllowed(_req: Request, res: Response): void {
  res.setHeader('Allow', 'GET, HEAD');
  text(res, 405, 'Method Not Allowed\n');
}

/**
 * The exporter's HTTP interface: the telemetry path (content negotiation, gzip, HEAD), a
 * landing page, health and readiness probes and a JSON status. Scrapes only write bytes
 * the store already rendered and compressed, plus the few self-metrics.
 */
export function createServer(options: ServerOptions): express.Express {
  const { store, selfRegistry, status, log } = options;
  const telemetryPath = validateTelemetryPath(options.telemetryPath ?? DEFAULT_TELEMETRY_PATH);
  const version = options.version ?? EXPORTER_VERSION;
  const metrics = scrapeMetrics(selfRegistry);

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  const notReadyReason = (): string => status.notReadyReason?.() ?? 'no data collected yet';

  const maxScrapes = options.maxConcurrentScrapes ?? DEFAULT_MAX_CONCURRENT_SCRAPES;
  if (!Number.isInteger(maxScrapes) || maxScrapes < 0) throw new RangeError(`maxConcurrentScrapes must be a whole number >= 0, got ${maxScrapes}`);
  const selfMetrics = new SelfMetricsCache(store, selfRegistry, options.selfMetricsMaxAgeMs ?? DEFAULT_SELF_METRICS_MAX_AGE_MS);
  let scrapesInFlight = 0;

  app.get(telemetryPath, async (req: Request, res: Response) => {
    if (maxScrapes > 0 && scrapesInFlight >= maxScrapes) {
      metrics.rejected.inc();
      res.setHeader('Retry-After', '1');
      text(res, 503, `Too many concurrent scrapes (at most ${maxScrapes}); retry in a second\n`);
      return;
    }
    scrapesInFlight++;
    res.once('close', () => scrapesInFlight--);
    const started = performance.now();
    const negotiated = negotiate(req.get('accept'), req.get('accept-encoding'));
    const labels = { format: negotiated.format, encoding: negotiated.gzip ? 'gzip' : 'identity' };
    metrics.scrapes.inc(labels);
    const body = await buildScrapeBody(store, selfMetrics, negotiated);
    res.status(200);
    res.setHeader('Content-Type', negotiated.contentType);
    res.setHeader('Vary', VARY);
    res.setHeader('Cache-Control', 'no-store');
    if (negotiated.gzip) res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', body.length);
    res.once('finish', () => {
      metrics.duration.observe(labels, (performance.now() - started) / 1000);
      if (req.method !== 'HEAD') metrics.bytes.inc(labels, body.length);
      res.socket?.setTimeout(0);
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.setTimeout(STALLED_SCRAPE_MS, () => res.destroy());
    // The buffers are queued as they are, never copied: a slow scraper holds references to the
    // snapshot it started with, not a copy of it. Corked, they leave in as few writes as possible.
    res.cork();
    for (const chunk of body.chunks) res.write(chunk);
    res.end();
    res.uncork();
  });
  app.all(telemetryPath, methodNotAllowed);

  app.get('/', (_req: Request, res: Response) => {
    res
      .status(200)
      .type('text/html; charset=utf-8')
      .send(
        landingPage({
          version,
          telemetryPath,
          ready: status.ready(),
          notReadyReason: status.ready() ? undefined : notReadyReason(),
          generation: store.generation,
          series: store.snapshot().series,
        }),
      );
  });
  app.all('/', methodNotAllowed);

  app.get('/-/healthy', (_req: Request, res: Response) => text(res, 200, 'OK\n'));
  app.all('/-/healthy', methodNotAllowed);

  app.get('/-/ready', (_req: Request, res: Response) => {
    if (status.ready()) text(res, 200, 'OK\n');
    else text(res, 503, `Not ready: ${notReadyReason()}\n`);
  });
  app.all('/-/ready', methodNotAllowed);

  app.get('/status', (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json(status.status());
  });
  app.all('/status', methodNotAllowed);

  app.use((_req: Request, res: Response) => text(res, 404, 'Not Found\n'));

  // Express recognises an error handler by its four parameters.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    log?.error({ err: error, path: req.path }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    text(res, 500, 'Internal Server Error\n');
  });

  return app;
}
