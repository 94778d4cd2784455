import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';
import { VARY, negotiate, type Negotiated } from '../exposition/negotiate.js';
import type { ScrapeBody } from '../exposition/scrape.js';
import type { Clock } from '../lib/clock.js';
import { requestFailureLogger } from './request-failures.js';

/**
 * The telemetry path, served by a plain Node handler ahead of express: a scrape is the
 * exporter's hot path, and express's routing and response helpers cost more per request than
 * writing a small gzip body does (measured with bench/scale.ts at 10k series).
 */

export interface TelemetryOptions {
  /** The body of a scrape in the negotiated format: the snapshot's data part and the self-metrics. */
  readonly body: (negotiated: Negotiated) => ScrapeBody | Promise<ScrapeBody>;
  /** Where what the scrapes did is counted: prom-client on the main thread, messages to it from a serving thread. */
  readonly observer: ScrapeObserver;
  readonly log?: Logger;
  /** Scrapes served at once; more get 503 with Retry-After. 0: no limit. */
  readonly maxConcurrentScrapes: number;
  /** Stamps failures in the log; default the system clock. */
  readonly clock?: Clock;
}

export interface ScrapeLabels {
  readonly format: Negotiated['format'];
  readonly encoding: 'gzip' | 'identity';
}

export interface ScrapeObserver {
  /** A scrape was accepted. */
  scraped(labels: ScrapeLabels): void;
  /** Its last byte was handed to the socket; `bytes` undefined for HEAD. */
  finished(labels: ScrapeLabels, seconds: number, bytes: number | undefined): void;
  /** Answered 503: the most concurrent scrapes were being served. */
  rejected(): void;
}

export const DEFAULT_MAX_CONCURRENT_SCRAPES = 10;
/** A scrape whose socket accepts no byte for this long is cut off, freeing the snapshot it holds. */
const STALLED_SCRAPE_MS = 60_000;
const SCRAPE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface ScrapeMetrics {
  readonly duration: Histogram<'format' | 'encoding'>;
  readonly scrapes: Counter<'format' | 'encoding'>;
  readonly bytes: Counter<'format' | 'encoding'>;
  readonly rejected: Counter;
}

/** The scrape metrics of `registry` (registered on first use). */
export function scrapeObserver(registry: Registry): ScrapeObserver {
  const metrics = scrapeMetrics(registry);
  return {
    scraped: (labels) => metrics.scrapes.inc(labels),
    finished: (labels, seconds, bytes) => {
      metrics.duration.observe(labels, seconds);
      if (bytes !== undefined) metrics.bytes.inc(labels, bytes);
    },
    rejected: () => metrics.rejected.inc(),
  };
}

function scrapeMetrics(registry: Registry): ScrapeMetrics {
  // Reuse what an earlier server on the same registry registered: prom-client throws on a second registration.
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

function plainText(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * At most this many bytes of a body are handed to the kernel at once. A whole body in one
 * write lets one writev copy as much as the scraper's receive window takes, many megabytes on
 * loopback: at a million series eight scrapers held the serving thread's event loop for over
 * 100 ms at a time. Between groups the loop serves the other scrapers and its timers, and a
 * group goes only once the socket has taken the one before.
 */
export const WRITE_GROUP_BYTES = 2 * 1024 * 1024;

/**
 * At most a group's worth of bytes a turn of the event loop (WRITE_GROUP_BYTES), for every
 * scrape of the thread together, the scrapes taking turns in the order they asked. Each scrape
 * going on from its own `setImmediate` made eight scrapers at a million series all write in the
 * same turn, up to 16 MiB copied into sockets before the thread's timers and new connections
 * came again: its event loop's p99 was 23 to 72 ms under them, 9 to 13 ms with one group a turn
 * (docs/scaling.md). Bytes, not groups: one small body a turn made 200 scrapers of a small
 * exporter queue up past `--web.max-requests` (test/security/abuse.test.ts). A writer says how
 * many bytes it wrote: one whose scraper has gone uses up nothing.
 */
class WriteTurns {
  private readonly waiting: { readonly write: () => number; readonly budget: number }[] = [];
  /** Bytes written in the current turn. */
  private spent = 0;
  /** A writer is running: one that goes on asks again and waits for a later turn. */
  private writing = false;
  private ticking = false;

  /** Writes now while this turn's bytes (`budget`, a group's) last and none waits; otherwise in a later turn, after those waiting. */
  run(write: () => number, budget: number): void {
    if (this.writing || this.spent >= budget || this.waiting.length > 0) {
      this.waiting.push({ write, budget });
      this.tick();
      return;
    }
    this.tick();
    this.take(write);
  }

  private take(write: () => number): void {
    this.writing = true;
    try {
      this.spent += write();
    } finally {
      this.writing = false;
    }
  }

  private tick(): void {
    if (this.ticking) return;
    this.ticking = true;
    setImmediate(() => {
      this.ticking = false;
      this.spent = 0;
      // Scheduled before a writer runs, so that one that throws never stops the others.
      if (this.waiting.length > 0) this.tick();
      for (let next = this.waiting[0]; next !== undefined && this.spent < next.budget; next = this.waiting[0]) {
        this.waiting.shift();
        this.take(next.write);
      }
    });
  }
}

const writeTurns = new WriteTurns();

/**
 * Writes a body's buffers as they are, never copied: a slow scraper holds references to the
 * snapshot it started with, not a copy of it. Corked, a group of them leaves in one write; the
 * next group follows once the socket has taken it, in a later turn of the loop (WriteTurns). A
 * scraper gone meanwhile (its connection closed while the body was made or sent) gets nothing
 * more: every write to a destroyed response makes an error, and a body has thousands of chunks.
 */
export function sendBody(res: Pick<ServerResponse, 'destroyed' | 'cork' | 'write' | 'end' | 'uncork' | 'once' | 'destroy'>, chunks: readonly Buffer[], groupBytes = WRITE_GROUP_BYTES): boolean {
  if (res.destroyed) return false;
  if (chunks.length === 0) {
    res.end();
    return true;
  }
  let next = 0;
  const writeGroup = (): number => {
    if (res.destroyed) return 0;
    let bytes = 0;
    try {
      res.cork();
      let room = true;
      while (next < chunks.length && bytes < groupBytes) {
        const chunk = chunks[next++] as Buffer;
        bytes += chunk.length;
        room = res.write(chunk);
      }
      if (next === chunks.length) res.end();
      res.uncork();
      if (next < chunks.length) {
        const later = (): void => writeTurns.run(writeGroup, groupBytes);
        if (room) later();
        else res.once('drain', later);
      }
    } catch (error) {
      // In a later turn nothing else would catch it: this scrape ends, the thread goes on.
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    }
    return bytes;
  };
  writeTurns.run(writeGroup, groupBytes);
  return true;
}

/** Answers requests for the telemetry path (any method; only GET and HEAD are served). */
export function telemetryHandler(options: TelemetryOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { log, maxConcurrentScrapes, observer } = options;
  if (!Number.isInteger(maxConcurrentScrapes) || maxConcurrentScrapes < 0) {
    throw new RangeError(`maxConcurrentScrapes must be a whole number >= 0, got ${maxConcurrentScrapes}`);
  }
  const failed = requestFailureLogger(log, options.clock);
  let inFlight = 0;

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const negotiated = negotiate(req.headers.accept, req.headers['accept-encoding']);
    const labels: ScrapeLabels = { format: negotiated.format, encoding: negotiated.gzip ? 'gzip' : 'identity' };
    observer.scraped(labels);
    const body = await options.body(negotiated);
    const headers: Record<string, string | number> = {
      'Content-Type': negotiated.contentType,
      Vary: VARY,
      'Cache-Control': 'no-store',
      'Content-Length': body.length,
    };
    if (negotiated.gzip) headers['Content-Encoding'] = 'gzip';
    res.once('finish', () => {
      observer.finished(labels, (performance.now() - started) / 1000, req.method === 'HEAD' ? undefined : body.length);
      res.socket?.setTimeout(0);
    });
    res.writeHead(200, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.setTimeout(STALLED_SCRAPE_MS, () => res.destroy());
    sendBody(res, body.chunks);
  };

  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      plainText(res, 405, 'Method Not Allowed\n', { Allow: 'GET, HEAD' });
      return;
    }
    if (maxConcurrentScrapes > 0 && inFlight >= maxConcurrentScrapes) {
      observer.rejected();
      plainText(res, 503, `Too many concurrent scrapes (at most ${maxConcurrentScrapes}); retry in a second\n`, { 'Retry-After': '1' });
      return;
    }
    inFlight++;
    res.once('close', () => inFlight--);
    serve(req, res).catch((error: unknown) => {
      failed(error, req.url ?? '');
      if (res.headersSent) res.destroy();
      else plainText(res, 500, 'Internal Server Error\n');
    });
  };
}

/** Matches a request URL to the telemetry path the way express routes do: any case, an optional trailing slash, any query. */
export function telemetryPathMatcher(telemetryPath: string): (url: string | undefined) => boolean {
  const wanted = telemetryPath.toLowerCase();
  return (url) => {
    if (!url) return false;
    const query = url.indexOf('?');
    let path = (query < 0 ? url : url.slice(0, query)).toLowerCase();
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    return path === wanted;
  };
}
