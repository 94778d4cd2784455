import type { RequestListener } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { DEFAULT_SELF_METRICS_MAX_AGE_MS, SelfMetricsCache, buildScrapeBody } from '../exposition/scrape.js';
import type { MetricStore } from '../exposition/store.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { requestFailureLogger } from './request-failures.js';
import { processRedactor, type Redactor } from '../lib/redact.js';
import { EXPORTER_VERSION } from '../version.js';
import { mountLifecycle, type LifecycleRoutes } from './lifecycle.js';
import { pageRoutes } from './pages.js';
import type { StatusProvider } from './status.js';
import { DEFAULT_MAX_CONCURRENT_SCRAPES, scrapeObserver, telemetryHandler, telemetryPathMatcher, type ScrapeObserver } from './telemetry.js';

export { DEFAULT_MAX_CONCURRENT_SCRAPES } from './telemetry.js';
export { parseListenAddress, startHttpServer, type ListenAddress, type RunningServer } from './listen.js';
export type { StatusProvider } from './status.js';
export type { FailingSource } from '../scheduler/source-health.js';
export type { LifecycleRoutes } from './lifecycle.js';

export interface ServerOptions {
  readonly store: MetricStore;
  /** Self-metrics (prom-client); rendered after the store's data, shared by scrapes within `selfMetricsMaxAgeMs`. */
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
  /** The exporter's clock (a fake one in tests); ages the self-metrics cache. */
  readonly clock?: Clock;
  /** `POST /-/reload`; without it the path is not found. */
  readonly lifecycle?: LifecycleRoutes;
  /** Scrubs the pages that quote what the exporter was told (/status, /, /-/ready, reload answers). Default: the process's. */
  readonly redactor?: Redactor;
}

export const DEFAULT_TELEMETRY_PATH = '/metrics';
const FIXED_PATHS = ['/', '/-/healthy', '/-/ready', '/-/reload', '/status'];
const SAFE_PATH = /^\/[A-Za-z0-9._~/-]*$/;

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

function text(res: Response, status: number, body: string): void {
  res.status(status).type('text/plain; charset=utf-8').send(body);
}

function methodNotAllowed(_req: Request, res: Response): void {
  res.setHeader('Allow', 'GET, HEAD');
  text(res, 405, 'Method Not Allowed\n');
}

/**
 * The exporter's HTTP interface: the telemetry path (content negotiation, gzip, HEAD), a
 * landing page, health and readiness probes and the status (HTML for browsers, JSON
 * otherwise). Scrapes only write bytes the store already rendered and compressed, plus the
 * few self-metrics.
 */
export function createServer(options: ServerOptions): RequestListener {
  return createServerParts(options).listener;
}

/** What serving threads need of the interface: the pages apart from the telemetry path, and what a scrape writes. */
export interface ServerParts {
  /** Every route. */
  readonly listener: RequestListener;
  /** Every route but the telemetry path. */
  readonly pages: RequestListener;
  readonly telemetryPath: string;
  readonly maxConcurrentScrapes: number;
  readonly store: MetricStore;
  /** The self-metrics rendering the scrapes share. */
  readonly selfMetrics: SelfMetricsCache;
  /** The scrape metrics of the self-metrics registry. */
  readonly observer: ScrapeObserver;
}

export function createServerParts(options: ServerOptions): ServerParts {
  const { store, selfRegistry, status, log } = options;
  const telemetryPath = validateTelemetryPath(options.telemetryPath ?? DEFAULT_TELEMETRY_PATH);
  const version = options.version ?? EXPORTER_VERSION;
  const clock = options.clock ?? systemClock;
  const startedMs = clock.now();
  // Shared with the scrapes, so the pages count the self-metrics' series without rendering them again.
  const selfMetrics = new SelfMetricsCache(store, selfRegistry, options.selfMetricsMaxAgeMs ?? DEFAULT_SELF_METRICS_MAX_AGE_MS, clock);
  const observer = scrapeObserver(selfRegistry);
  const maxConcurrentScrapes = options.maxConcurrentScrapes ?? DEFAULT_MAX_CONCURRENT_SCRAPES;
  const serveTelemetry = telemetryHandler({ body: (negotiated) => buildScrapeBody(store, selfMetrics, negotiated), observer, log, maxConcurrentScrapes, clock: options.clock });
  const isTelemetryPath = telemetryPathMatcher(telemetryPath);
  const redactor = options.redactor ?? processRedactor;
  const scrub = (text: string) => redactor.scrub(text);

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  const notReadyReason = (): string => status.notReadyReason?.() ?? 'no data collected yet';

  const pages = pageRoutes({ store, status, version, telemetryPath, redactor, clock, startedMs, notReadyReason, selfSeries: () => selfMetrics.series() });
  app.get('/', pages.landing);
  app.all('/', methodNotAllowed);

  app.get('/-/healthy', (_req: Request, res: Response) => text(res, 200, 'OK\n'));
  app.all('/-/healthy', methodNotAllowed);

  app.get('/-/ready', (_req: Request, res: Response) => {
    if (status.ready()) text(res, 200, 'OK\n');
    else text(res, 503, scrub(`Not ready: ${notReadyReason()}\n`));
  });
  app.all('/-/ready', methodNotAllowed);

  app.get('/status', pages.status);
  app.all('/status', methodNotAllowed);

  if (options.lifecycle) mountLifecycle(app, options.lifecycle, scrub);

  app.use((_req: Request, res: Response) => text(res, 404, 'Not Found\n'));

  // Express recognises an error handler by its four parameters.
  const failed = requestFailureLogger(log, options.clock);
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    failed(error, req.path);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    text(res, 500, 'Internal Server Error\n');
  });

  return {
    listener: (req, res) => {
      if (isTelemetryPath(req.url)) serveTelemetry(req, res);
      else app(req, res);
    },
    pages: app,
    telemetryPath,
    maxConcurrentScrapes,
    store,
    selfMetrics,
    observer,
  };
}
