import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Sits between the exporter and the simulators and lets the harness choose the upstream's
 * pace: `open` while the exporter fills (every request goes straight through), `paced` while
 * measuring (each account gets the real per-key rate, 120 requests per minute with a burst of
 * 30; requests beyond it wait their turn, as they would in the exporter's own budget).
 *
 * Why not the exporter's budget: its rate is fixed at start, and filling a million series at
 * 120 requests per minute per account would take hours. Why not the simulator's limiter: its
 * two keys are shared by all the harness's accounts. The exporter under test is configured
 * with a budget above anything the pacer lets through, so the pacer alone sets the pace.
 *
 * Account `a03` is reached at `/a03/api/v2/...` and forwarded to its simulator's `/api/v2/...`
 * with its simulator key in place of its own.
 */

export interface PacerRoute {
  /** Origin of the simulator's monitoring listener, e.g. `http://127.0.0.1:34567`. */
  readonly origin: string;
  /**
   * The simulator key sent upstream instead of the account's own: the exporter refuses two
   * accounts with one key, and a simulator has only two working keys.
   */
  readonly simulatorKey: string;
}

export interface PacedRate {
  readonly perMinute: number;
  readonly burst: number;
}

interface Bucket {
  tokens: number;
  refilledAt: number;
  readonly queue: (() => void)[];
  timer: NodeJS.Timeout | undefined;
}

export interface PacerCounts {
  requests: number;
  /** Response body bytes forwarded to the exporter. */
  bytes: number;
}

export class UpstreamPacer {
  private server: Server | undefined;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });
  private readonly buckets = new Map<string, Bucket>();
  private rate: PacedRate | undefined;
  private counts: PacerCounts = { requests: 0, bytes: 0 };

  constructor(private readonly routes: ReadonlyMap<string, PacerRoute>) {}

  async start(): Promise<string> {
    const server = createServer((req, res) => this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** No pace: every request is forwarded at once. */
  open(): void {
    this.rate = undefined;
    for (const bucket of this.buckets.values()) this.drain(bucket, true);
  }

  /** The real per-key pace for every account, starting with a full burst. */
  pace(rate: PacedRate): void {
    this.rate = rate;
    const now = performance.now();
    for (const bucket of this.buckets.values()) {
      bucket.tokens = rate.burst;
      bucket.refilledAt = now;
    }
  }

  /** Requests and bytes forwarded since the last call. */
  takeCounts(): PacerCounts {
    const counts = this.counts;
    this.counts = { requests: 0, bytes: 0 };
    return counts;
  }

  async close(): Promise<void> {
    for (const bucket of this.buckets.values()) if (bucket.timer) clearTimeout(bucket.timer);
    this.agent.destroy();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const match = /^\/([^/]+)(\/.*)$/.exec(req.url ?? '');
    const route = match ? this.routes.get(match[1] as string) : undefined;
    if (!match || !route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`pacer: no route for ${req.url}\n`);
      return;
    }
    const account = match[1] as string;
    const forward = (): void => this.forward(route, match[2] as string, req, res);
    if (!this.rate) {
      forward();
      return;
    }
    const bucket = this.bucketOf(account);
    bucket.queue.push(forward);
    this.drain(bucket, false);
  }

  private bucketOf(account: string): Bucket {
    let bucket = this.buckets.get(account);
    if (!bucket) {
      bucket = { tokens: this.rate?.burst ?? 0, refilledAt: performance.now(), queue: [], timer: undefined };
      this.buckets.set(account, bucket);
    }
    return bucket;
  }

  private drain(bucket: Bucket, all: boolean): void {
    const rate = this.rate;
    if (all || !rate) {
      for (const next of bucket.queue.splice(0)) next();
      return;
    }
    const now = performance.now();
    bucket.tokens = Math.min(rate.burst, bucket.tokens + ((now - bucket.refilledAt) * rate.perMinute) / 60_000);
    bucket.refilledAt = now;
    while (bucket.queue.length > 0 && bucket.tokens >= 1) {
      bucket.tokens -= 1;
      (bucket.queue.shift() as () => void)();
    }
    if (bucket.queue.length > 0 && !bucket.timer) {
      const waitMs = ((1 - bucket.tokens) * 60_000) / rate.perMinute;
      bucket.timer = setTimeout(() => {
        bucket.timer = undefined;
        this.drain(bucket, false);
      }, Math.max(1, waitMs));
    }
  }

  private forward(route: PacerRoute, path: string, req: IncomingMessage, res: ServerResponse): void {
    if (res.destroyed) return;
    const headers: Record<string, string | string[] | undefined> = { ...req.headers, authorization: `Bearer ${route.simulatorKey}` };
    delete headers.host;
    delete headers['x-api-key'];
    const upstream = request(`${route.origin}${path}`, { method: req.method, headers, agent: this.agent }, (answer) => {
      this.counts.requests++;
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on('data', (chunk: Buffer) => {
        this.counts.bytes += chunk.length;
      });
      answer.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`pacer: ${error.message}\n`);
    });
    req.pipe(upstream);
  }
}
