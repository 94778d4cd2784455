import { Agent, request, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import pino from 'pino';
import type { ChunksMessage } from '../exposition/builder.js';
import type { CompressedTail } from '../exposition/gzip.js';
import type { ExpositionFormat } from '../exposition/negotiate.js';
import { scrapeBodyOf, type ScrapeBody } from '../exposition/scrape.js';
import { PendingReplies } from '../lib/pending-replies.js';
import type { RunningServer } from './listen.js';
import { PAGES_TOKEN_HEADER, type FromServingThread, type ServingEvents, type ServingThreadData, type ToServingThread } from './serving-threads.js';
import { SnapshotInbox } from './snapshot-inbox.js';
import { garbageCollection, noCollectionWarning, SharedMemoryCollector } from '../lib/shared-memory-collector.js';
import { telemetryHandler, telemetryPathMatcher } from './telemetry.js';
import type { AuthOutcome, PasswordGate } from './web-config.js';
import { startWebServer } from './web-server.js';

/**
 * A serving thread (see serving-threads.ts): listens on the exporter's port beside the other
 * serving threads, writes /metrics from the chunks the builder thread sends (in the layout of
 * the snapshots the main thread announces), and passes
 * every other path to the main thread's pages once TLS and basic auth have let it through.
 */

const port = parentPort;
if (!port) throw new Error('serving-thread.ts runs as a worker thread (see serving-threads.ts)');
const data = workerData as ServingThreadData;
const post = (message: FromServingThread): void => port.postMessage(message);

const log = pino(
  { level: data.logLevel, base: { thread: `serving-${data.index}` } },
  new Writable({
    write(line: Buffer, _encoding, done) {
      post({ type: 'log', line: line.toString('utf8') });
      done();
    },
  }),
);

const loop = monitorEventLoopDelay({ resolution: data.loopResolutionMs });
loop.enable();

const gcForSharedMemory = garbageCollection();
if ('unavailable' in gcForSharedMemory) log.warn(noCollectionWarning('serving thread', gcForSharedMemory.unavailable));
const sharedMemory = 'collect' in gcForSharedMemory ? new SharedMemoryCollector(gcForSharedMemory.collect) : undefined;
const inbox = new SnapshotInbox((dropped, held) => {
  sharedMemory?.dropped(dropped, held);
  sharedMemory?.collectIfDue();
});
let chunkPort: MessagePort | undefined;
const tails = new Map<ExpositionFormat, { readonly tail: CompressedTail; readonly at: number }>();
const tailWaiters = new Map<ExpositionFormat, ((tail: CompressedTail) => void)[]>();
const tailAsked = new Map<ExpositionFormat, number>();
/** A tail older than this is not served while a fresher one is on its way: the main thread is stuck, not busy. */
const STALE_TAIL_MS = 10_000;

const viewOf = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

function askTail(format: ExpositionFormat): void {
  const now = Date.now();
  if (now - (tailAsked.get(format) ?? 0) < data.tailMaxAgeMs) return;
  tailAsked.set(format, now);
  post({ type: 'want-tail', format });
}

function tailFor(format: ExpositionFormat): CompressedTail | Promise<CompressedTail> {
  const held = tails.get(format);
  const age = held ? Date.now() - held.at : Infinity;
  if (age > data.tailMaxAgeMs) askTail(format);
  if (held && age <= STALE_TAIL_MS) return held.tail;
  return new Promise<CompressedTail>((resolve) => tailWaiters.set(format, [...(tailWaiters.get(format) ?? []), resolve]));
}

function bodyFor(format: ExpositionFormat, gzip: boolean): ScrapeBody | Promise<ScrapeBody> {
  const current = inbox.current;
  if (!current) throw new Error('no complete snapshot yet');
  const prefix = format === 'openmetrics' ? current.openMetrics : current.text;
  const tail = tailFor(format);
  return tail instanceof Promise ? tail.then((t) => scrapeBodyOf(prefix, t, gzip, current.generation)) : scrapeBodyOf(prefix, tail, gzip, current.generation);
}

/** What this thread counted since its last report to the main thread's metrics: the report, while it fills. */
type Counted = { -readonly [K in keyof ServingEvents]: ServingEvents[K] extends readonly (infer Item)[] ? Item[] : ServingEvents[K] };
const nothingCounted = (): Counted => ({ scraped: [], finished: [], rejected: 0, closed: [], throttled: 0, reloads: [] });
let counted = nothingCounted();
let reportTimer: NodeJS.Timeout | undefined;
const REPORT_MS = 100;

function report(): void {
  reportTimer = undefined;
  post({ type: 'events', events: counted });
  counted = nothingCounted();
}

/** Counts into the batch the next report sends. */
function count(add: (batch: Counted) => void): void {
  add(counted);
  reportTimer ??= setTimeout(report, REPORT_MS);
}

const serveTelemetry = telemetryHandler({
  body: (negotiated) => bodyFor(negotiated.format, negotiated.gzip),
  observer: {
    scraped: (labels) => count((batch) => batch.scraped.push(labels)),
    finished: (labels, seconds, bytes) => count((batch) => batch.finished.push({ labels, seconds, bytes })),
    rejected: () => count((batch) => batch.rejected++),
  },
  log,
  maxConcurrentScrapes: data.maxConcurrentScrapes,
});

const pagesAgent = new Agent({ keepAlive: true });
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function withoutHopByHop(headers: IncomingMessage['headers']): OutgoingHttpHeaders {
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value;
  return kept;
}

/** Hands a request to the main thread's pages and its answer back. */
function toPages(req: IncomingMessage, res: ServerResponse): void {
  const forwarded = request(
    {
      host: '127.0.0.1',
      port: data.pagesPort,
      agent: pagesAgent,
      method: req.method,
      path: req.url,
      headers: { ...withoutHopByHop(req.headers), [PAGES_TOKEN_HEADER]: data.pagesToken },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, withoutHopByHop(answer.headers));
      answer.pipe(res);
      answer.once('error', () => res.destroy());
    },
  );
  forwarded.once('error', (error) => {
    log.error({ err: { message: error.message }, path: req.url }, 'the main thread did not answer a request a serving thread passed on');
    if (res.headersSent) res.destroy();
    else {
      res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end('Bad Gateway: the exporter\'s main thread did not answer\n');
    }
  });
  res.once('close', () => {
    if (!forwarded.writableFinished) forwarded.destroy();
  });
  req.pipe(forwarded);
}

/** Passwords this thread does not know to be right are checked by the main thread, where every thread's failures meet one throttle. */
const passwordAnswers = new PendingReplies<AuthOutcome>();
const passwordGate: PasswordGate = {
  check: (password, hash, address) => passwordAnswers.ask((request) => post({ type: 'check-password', request, password, hash, address })),
};

/** A snapshot that does not add up is not served (the last good one is), and said. */
function receive(apply: () => void): void {
  try {
    apply();
  } catch (error) {
    log.error({ err: { message: error instanceof Error ? error.message : String(error) } }, 'a snapshot of the bodies could not be put together; the last one is served');
  }
}

const isTelemetryPath = telemetryPathMatcher(data.telemetryPath);
let server: RunningServer | undefined;

port.on('message', (message: ToServingThread) => {
  switch (message.type) {
    case 'chunk-port':
      chunkPort?.close();
      chunkPort = message.port;
      chunkPort.on('message', (chunks: ChunksMessage) => receive(() => inbox.chunksArrived(chunks.build, chunks.chunks)));
      return;
    case 'snapshot':
      receive(() => inbox.snapshotArrived(message));
      return;
    case 'tail': {
      // Views, not copies: the bytes came in memory of this thread's own (moved, or copied by the posting).
      const tail: CompressedTail = { raw: viewOf(message.raw), crc32: message.crc32, deflated: viewOf(message.deflated) };
      tails.set(message.format, { tail, at: Date.now() });
      tailAsked.delete(message.format);
      const waiting = tailWaiters.get(message.format) ?? [];
      tailWaiters.delete(message.format);
      for (const resolve of waiting) resolve(tail);
      return;
    }
    case 'loop': {
      const ms = (ns: number): number => ns / 1e6;
      post({ type: 'loop', request: message.request, thread: `serving-${data.index}`, p50Ms: ms(loop.percentile(50)), p99Ms: ms(loop.percentile(99)), maxMs: ms(loop.max), samples: loop.count });
      if (message.reset) loop.reset();
      return;
    }
    case 'password-checked':
      passwordAnswers.answer(message.request, message.outcome);
      return;
    case 'close':
      void (async () => {
        await server?.close(message.timeoutMs);
        if (reportTimer) {
          clearTimeout(reportTimer);
          report();
        }
        loop.disable();
        chunkPort?.close();
        pagesAgent.destroy();
        post({ type: 'closed' });
        port.close();
      })();
      return;
  }
});

try {
  // Not before the first complete snapshot: a thread started again while a build is on its way
  // would answer scrapes with an error until its chunks came. (At start, the store's first
  // snapshot is empty, and complete at once.)
  await inbox.firstComplete;
  server = await startWebServer(
    (req, res) => {
      if (isTelemetryPath(req.url)) serveTelemetry(req, res);
      else toPages(req, res);
    },
    {
      listenAddress: `${data.host === undefined ? '' : data.host.includes(':') ? `[${data.host}]` : data.host}:${data.port}`,
      webConfigFile: data.webConfigFile,
      log,
      reusePort: true,
      passwordGate,
      events: {
        closed: (reason) => count((batch) => batch.closed.push(reason)),
        throttled: () => count((batch) => batch.throttled++),
        reloaded: (ok, atSeconds) => count((batch) => batch.reloads.push({ ok, atSeconds })),
      },
    },
  );
  post({ type: 'listening', port: (server.server.address() as AddressInfo).port, url: server.url });
} catch (error) {
  post({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  // Nothing may keep the thread alive: the main thread starts another once this one is gone.
  chunkPort?.close();
  port.close();
}
