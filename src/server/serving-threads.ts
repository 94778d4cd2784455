import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { CompressedTail } from '../exposition/gzip.js';
import type { ExpositionFormat } from '../exposition/negotiate.js';
import type { ExpositionSnapshot } from '../exposition/store.js';
import type { ServerParts } from './app.js';
import { parseListenAddress, type RunningServer } from './listen.js';
import type { ScrapeLabels } from './telemetry.js';
import { startThread } from './thread.js';
import { webServerEvents } from './web-server.js';
import type { ClosedReason } from './connection-guard.js';
import { layoutOf, type SnapshotLayout } from './snapshot-inbox.js';
import { ThrottledPasswordGate, type AuthOutcome } from './web-config.js';
import { PendingReplies } from '../lib/pending-replies.js';

/**
 * `--web.serving-threads`: the listen address served by worker threads, each listening on the
 * same port (SO_REUSEPORT: the kernel spreads the connections), each with its own TLS, basic
 * auth and connection guard (web-server.ts). A thread writes /metrics from the current
 * snapshot's bodies, which live in shared memory (chunks per format and encoding, built on
 * the builder thread and sent from there to each thread: the main thread holds none), and the self-metrics the main thread renders at most every 5 s:
 * a scrape never waits for the main thread, where polling, decoding and mapping run, and
 * scrapes take nothing from it, except a password the thread does not know to be right, which
 * the main thread checks (one throttle for the process). Every other path (/, /status, /-/ready, /-/reload) is handed
 * to the main thread's pages over a loopback connection that only the threads can use (a
 * random token), after the thread has checked TLS and basic auth.
 */

/** More would only divide the same memory bandwidth. */
export const MAX_SERVING_THREADS = 32;

/** At most this many by default: past a few threads, the writes are bound by memory and network, not by threads. */
export const MAX_DEFAULT_SERVING_THREADS = 4;

/** One per core beyond the one the main thread (polling) and the builder share, at least one. */
export function defaultServingThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(MAX_DEFAULT_SERVING_THREADS, cores - 1));
}

/** `--web.serving-threads` as given: auto, or a whole number from 0 to MAX_SERVING_THREADS; undefined for anything else. */
export function servingThreadsOf(value: string): number | undefined {
  if (value === 'auto') return defaultServingThreads();
  return /^\d{1,2}$/.test(value) && Number(value) <= MAX_SERVING_THREADS ? Number(value) : undefined;
}

/**
 * How long a rendering of the self-metrics is served before a fresher one is asked for, and
 * how often one is rendered ahead of the scrapes. A rendering costs the main thread about
 * a quarter of a second at a million series (the scheduler's views read every job): once a
 * second, as it was, that took a quarter of a core from polling, and made garbage for the main
 * thread's pauses.
 * The data beside it changes at polling cadences of 30 s and more.
 */
const TAIL_MAX_AGE_MS = 5_000;
/** A format not scraped for this long is no longer rendered ahead of the scrapes. */
const TAIL_IDLE_MS = 60_000;

/**
 * The memory of those buffers that can move to another thread: those that cover theirs whole.
 * A small Buffer is a piece of Node's shared pool, which must stay (posting it copies).
 */
export function movableBuffers(...buffers: readonly Buffer[]): ArrayBuffer[] {
  return buffers.flatMap((buffer) => (buffer.buffer instanceof ArrayBuffer && buffer.byteOffset === 0 && buffer.byteLength === buffer.buffer.byteLength ? [buffer.buffer] : []));
}

/**
 * The formats whose self-metrics are rendered ahead of the scrapes: those a thread scraped or
 * asked for within the idle window. Scrapes count, not only a thread's requests: a thread asks
 * only when its rendering is older than TAIL_MAX_AGE_MS, which the renderings ahead seldom let
 * happen, so with requests alone they lapsed a minute later and the next scrape could wait for
 * the main thread.
 */
export class TailDemand {
  private readonly lastWanted = new Map<ExpositionFormat, number>();

  constructor(private readonly idleMs = TAIL_IDLE_MS) {}

  want(format: ExpositionFormat, nowMs: number): void {
    this.lastWanted.set(format, nowMs);
  }

  /** The formats to render now; those not wanted within the idle window are forgotten. */
  due(nowMs: number): ExpositionFormat[] {
    const due: ExpositionFormat[] = [];
    for (const [format, at] of this.lastWanted) {
      if (nowMs - at > this.idleMs) this.lastWanted.delete(format);
      else due.push(format);
    }
    return due;
  }
}

export interface ServingThreadData {
  readonly index: number;
  readonly host: string | undefined;
  readonly port: number;
  readonly webConfigFile: string | undefined;
  readonly telemetryPath: string;
  readonly maxConcurrentScrapes: number;
  readonly pagesPort: number;
  readonly pagesToken: string;
  readonly logLevel: string;
  /** Resolution of the thread's event-loop delay histogram. */
  readonly loopResolutionMs: number;
  readonly tailMaxAgeMs: number;
}

export interface TailMessage {
  readonly format: ExpositionFormat;
  readonly raw: Uint8Array;
  readonly crc32: number;
  readonly deflated: Uint8Array;
}

export type ToServingThread =
  | ({ readonly type: 'snapshot' } & SnapshotLayout)
  /** Where the builder thread sends the bodies' chunks (the first message a thread gets). */
  | { readonly type: 'chunk-port'; readonly port: MessagePort }
  | ({ readonly type: 'tail' } & TailMessage)
  | { readonly type: 'loop'; readonly request: number; readonly reset: boolean }
  | { readonly type: 'password-checked'; readonly request: number; readonly outcome: AuthOutcome }
  | { readonly type: 'close'; readonly timeoutMs: number };

export interface ScrapeEvent {
  readonly labels: ScrapeLabels;
  readonly seconds: number;
  readonly bytes: number | undefined;
}

/** What a thread counted since its last report. */
export interface ServingEvents {
  readonly scraped: readonly ScrapeLabels[];
  readonly finished: readonly ScrapeEvent[];
  readonly rejected: number;
  readonly closed: readonly ClosedReason[];
  readonly throttled: number;
  readonly reloads: readonly { readonly ok: boolean; readonly atSeconds: number }[];
}

export interface LoopDelayFigures {
  readonly thread: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly samples: number;
}

export type FromServingThread =
  | { readonly type: 'listening'; readonly port: number; readonly url: string }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'want-tail'; readonly format: ExpositionFormat }
  | { readonly type: 'events'; readonly events: ServingEvents }
  | { readonly type: 'log'; readonly line: string }
  /** Credentials the thread does not know to be right, for the process's one throttle and bcrypt queue. */
  | { readonly type: 'check-password'; readonly request: number; readonly password: string; readonly hash: string | undefined; readonly address: string }
  | ({ readonly type: 'loop'; readonly request: number } & LoopDelayFigures)
  | { readonly type: 'closed' };

export interface ServingThreadsOptions {
  readonly threads: number;
  readonly listenAddress: string;
  readonly webConfigFile?: string | undefined;
  readonly log: Logger;
  readonly registry: Registry;
  /** Default 10 ms; the scale benchmark asks for 1. */
  readonly loopResolutionMs?: number;
  /** How long after a thread stops it is started again; default 1 s (tests ask for longer). */
  readonly restartDelayMs?: number;
}

export interface RunningServingThreads extends RunningServer {
  /** Each serving thread's event-loop delay since the last reset (and resets it when asked). */
  loopDelays(reset?: boolean): Promise<LoopDelayFigures[]>;
}

/** The serving threads' names, before their index. */
export const SERVING_THREAD_NAME = 'monapi-serve-';

/** The header that carries the threads' token to the pages listener. */
export const PAGES_TOKEN_HEADER = 'x-monapi-serving-thread';

/**
 * Long: the threads, the pages listener, the snapshots and self-metrics sent to them and what
 * they report back share the set of workers and its closing, and are wired here in one place.
 */
export async function startServingThreads(parts: ServerParts, options: ServingThreadsOptions): Promise<RunningServingThreads> {
  const { threads, log } = options;
  if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`serving threads must be a whole number of at least 1, got ${threads}`);
  const { host, port } = parseListenAddress(options.listenAddress);
  const token = randomBytes(32).toString('hex');
  const pages = await startPagesListener(parts, token);
  const events = webServerEvents(options.registry);
  // One for every thread, and for a thread started again: a flood spread over the threads meets one throttle.
  const passwords = new ThrottledPasswordGate();
  const demand = new TailDemand();
  /** By thread index; undefined from a thread's exit until it is started again. */
  const workers: (Worker | undefined)[] = [];
  const restarts = new Set<NodeJS.Timeout>();
  let closing = false;
  const running = (): Worker[] => workers.filter((worker): worker is Worker => worker !== undefined);

  const broadcast = (message: ToServingThread): void => {
    for (const worker of running()) worker.postMessage(message);
  };
  /** A snapshot's layout; its chunks go from the builder thread to each thread's chunk port. */
  const snapshotMessage = (snapshot: ExpositionSnapshot): ToServingThread => ({ type: 'snapshot', ...layoutOf(snapshot) });
  let sentGeneration = parts.store.snapshot().generation;
  parts.store.onSnapshot((snapshot) => {
    if (closing || snapshot.generation === sentGeneration) return;
    sentGeneration = snapshot.generation;
    broadcast(snapshotMessage(snapshot));
  });
  /** To every thread; the last one gets the bytes themselves, moved rather than copied, so that none stay here. */
  const sendTail = (format: ExpositionFormat, tail: CompressedTail): void => {
    const targets = running();
    targets.forEach((worker, i) =>
      worker.postMessage({ type: 'tail', format, raw: tail.raw, crc32: tail.crc32, deflated: tail.deflated } satisfies ToServingThread, i === targets.length - 1 ? movableBuffers(tail.raw, tail.deflated) : []),
    );
  };
  const rendering = new Set<ExpositionFormat>();
  const renderTail = (format: ExpositionFormat): void => {
    if (rendering.has(format)) return;
    rendering.add(format);
    parts.selfMetrics
      .render(format)
      .then(
        (tail) => {
          if (!closing) sendTail(format, tail);
        },
        (error: unknown) => log.error({ err: error }, 'rendering the self-metrics for the serving threads failed'),
      )
      .finally(() => rendering.delete(format));
  };
  // Ahead of the scrapes, so a Prometheus scraping every 15 s never waits and gets self-metrics at most 5 s old.
  const ahead = setInterval(() => {
    for (const format of demand.due(Date.now())) renderTail(format);
  }, TAIL_MAX_AGE_MS);
  ahead.unref();

  const loopReplies = new PendingReplies<LoopDelayFigures>();
  const apply = (counted: ServingEvents): void => {
    for (const labels of counted.scraped) {
      parts.observer.scraped(labels);
      demand.want(labels.format, Date.now());
    }
    for (const scrape of counted.finished) parts.observer.finished(scrape.labels, scrape.seconds, scrape.bytes);
    for (let i = 0; i < counted.rejected; i++) parts.observer.rejected();
    for (const reason of counted.closed) events.closed(reason);
    for (let i = 0; i < counted.throttled; i++) events.throttled();
    for (const reload of counted.reloads) events.reloaded(reload.ok, reload.atSeconds);
  };
  const relayLog = (line: string): void => {
    try {
      const { level, msg, time: _time, pid: _pid, hostname: _hostname, ...fields } = JSON.parse(line) as Record<string, unknown>;
      const method = typeof level === 'number' && level >= 50 ? 'error' : typeof level === 'number' && level >= 40 ? 'warn' : typeof level === 'number' && level >= 30 ? 'info' : 'debug';
      log[method](fields, typeof msg === 'string' ? msg : '');
    } catch {
      log.warn({ line }, 'a serving thread wrote a log line that is not JSON');
    }
  };

  const start = (index: number, onPort: number): Promise<{ readonly port: number; readonly url: string }> => {
    // First, so that a builder thread that is gone fails this start before a thread exists.
    const chunkChannel = new MessageChannel();
    try {
      parts.store.deliverChunksTo(chunkChannel.port1);
    } catch (error) {
      chunkChannel.port2.close();
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const data: ServingThreadData = {
      index,
      host,
      port: onPort,
      webConfigFile: options.webConfigFile,
      telemetryPath: parts.telemetryPath,
      maxConcurrentScrapes: parts.maxConcurrentScrapes,
      pagesPort: pages.port,
      pagesToken: token,
      logLevel: log.level,
      loopResolutionMs: options.loopResolutionMs ?? 10,
      tailMaxAgeMs: TAIL_MAX_AGE_MS,
    };
    // At most 15 characters: Linux keeps no more of a thread's name (top -H, /proc/*/task/*/comm).
    const worker = startThread(import.meta.url, 'serving-thread', `${SERVING_THREAD_NAME}${index}`, data);
    workers[index] = worker;
    worker.on('message', (message: FromServingThread) => {
      switch (message.type) {
        case 'want-tail':
          demand.want(message.format, Date.now());
          renderTail(message.format);
          return;
        case 'events':
          apply(message.events);
          return;
        case 'log':
          relayLog(message.line);
          return;
        case 'check-password': {
          const answer = (outcome: AuthOutcome): void => worker.postMessage({ type: 'password-checked', request: message.request, outcome } satisfies ToServingThread);
          passwords.check(message.password, message.hash, message.address).then(answer, (error: unknown) => {
            log.error({ err: error }, 'a password check for a serving thread failed');
            answer({ retryAfterSeconds: 1 });
          });
          return;
        }
        case 'loop':
          loopReplies.answer(message.request, message);
          return;
        default:
          return;
      }
    });
    worker.postMessage({ type: 'chunk-port', port: chunkChannel.port2 } satisfies ToServingThread, [chunkChannel.port2]);
    worker.postMessage(snapshotMessage(parts.store.snapshot()));
    const listening = new Promise<{ readonly port: number; readonly url: string }>((resolve, reject) => {
      const onMessage = (message: FromServingThread): void => {
        if (message.type === 'listening') {
          worker.off('message', onMessage);
          resolve(message);
        } else if (message.type === 'error') {
          worker.off('message', onMessage);
          reject(new Error(message.message));
        }
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
    worker.on('exit', (code) => {
      // Nothing more is asked of it, nor waited for (a close meanwhile would wait for an exit that has come).
      if (workers[index] === worker) workers[index] = undefined;
      // Its answer would never come: the figures of every thread are asked again next time.
      loopReplies.failAll(new Error(`serving thread ${index} exited with code ${code}`));
      if (closing) return;
      // A thread that dies is replaced, on the same port: the others serve meanwhile.
      log.error({ thread: index, code }, 'a serving thread stopped; starting it again');
      const again = setTimeout(() => {
        restarts.delete(again);
        if (!closing) start(index, boundPort).catch((error: unknown) => log.error({ err: error, thread: index }, 'a serving thread could not be started again'));
      }, options.restartDelayMs ?? 1_000);
      again.unref();
      restarts.add(again);
    });
    return listening;
  };

  let boundPort = port;
  let url: string;
  try {
    // The first thread finds the port when the address asks for any (:0), and says whether it serves https; the others join it.
    ({ port: boundPort, url } = await start(0, port));
    await Promise.all(Array.from({ length: threads - 1 }, (_, i) => start(i + 1, boundPort)));
  } catch (error) {
    closing = true;
    clearInterval(ahead);
    await Promise.all(running().map((worker) => worker.terminate()));
    await pages.close();
    throw new Error(`cannot listen on ${options.listenAddress}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }

  let closed: Promise<void> | undefined;
  return {
    url,
    server: pages.server,
    loopDelays(reset = false) {
      return Promise.all(running().map((worker) => loopReplies.ask((request) => worker.postMessage({ type: 'loop', request, reset } satisfies ToServingThread))));
    },
    close(timeoutMs = 10_000) {
      closed ??= (async () => {
        closing = true;
        clearInterval(ahead);
        for (const again of restarts) clearTimeout(again);
        await Promise.all(
          running().map(async (worker) => {
            const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
            worker.postMessage({ type: 'close', timeoutMs } satisfies ToServingThread);
            const force = setTimeout(() => void worker.terminate(), timeoutMs + 1_000);
            force.unref();
            await exited;
            clearTimeout(force);
          }),
        );
        await pages.close();
      })();
      return closed;
    },
  };
}

interface PagesListener {
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

/** The main thread's pages, on a loopback port, for requests that carry the threads' token. */
async function startPagesListener(parts: ServerParts, token: string): Promise<PagesListener> {
  const expected = Buffer.from(token);
  const server = createServer({ keepAliveTimeout: 60_000 }, (req: IncomingMessage, res: ServerResponse) => {
    const given = Buffer.from(String(req.headers[PAGES_TOKEN_HEADER] ?? ''));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Forbidden\n');
      return;
    }
    delete req.headers[PAGES_TOKEN_HEADER];
    parts.pages(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
