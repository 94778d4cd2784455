import { request as httpRequest, Agent as HttpAgent } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent, type RequestOptions } from 'node:https';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { performance } from 'node:perf_hooks';

/**
 * Test and bench support: the clients of issue 21's floods, loopback only and bounded in
 * count and time. Shared by test/security/floods.test.ts and bench/floods.ts.
 */

export interface Target {
  /** `http://127.0.0.1:port` or `https://...`. */
  readonly url: string;
  /** For https: the CA to trust and, when the server asks, the client certificate. */
  readonly tls?: { readonly ca: string; readonly cert?: string; readonly key?: string };
  /** Basic auth header value for authenticated requests. */
  readonly authorization?: string;
  /** Local address to connect from (another loopback address stands for another host). */
  readonly from?: string;
}

export interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** One GET; rejects on a connection error or when no answer came within `timeoutMs`. */
export function timedGet(target: Target, path: string, options: { timeoutMs?: number; headers?: Record<string, string>; agent?: HttpAgent | false } = {}): Promise<Answer> {
  const url = new URL(path, target.url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const common: RequestOptions = {
      host: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      headers: options.headers ?? {},
      agent: options.agent ?? false,
      timeout: options.timeoutMs ?? 5_000,
      ...(target.from !== undefined && { localAddress: target.from }),
      ...(target.tls && { ca: target.tls.ca, cert: target.tls.cert, key: target.tls.key, servername: 'localhost' }),
    };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(common, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs ?? 5_000} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Holds `count` idle TCP connections to `port` from 127.0.0.1 (never a byte sent): each one the
 * server closes is replaced, at most `reopenPerSecond` a second (a persistent attacker, not a
 * connection-rate flood), until `stop()` or `maxOpened` connections in all.
 */
export function holdIdleConnections(
  port: number,
  count: number,
  options: { reopenPerSecond?: number; maxOpened?: number; /** Complete a TLS handshake (with this CA and client certificate), then stay idle. */ tls?: Target['tls'] } = {},
): { readonly open: () => number; readonly opened: () => number; stop(): void } {
  const reopenPerSecond = options.reopenPerSecond ?? 500;
  const maxOpened = options.maxOpened ?? count + reopenPerSecond * 120;
  const sockets = new Set<Socket>();
  let opened = 0;
  let stopped = false;
  let owed = 0;
  const openOne = () => {
    if (stopped || opened >= maxOpened) return;
    opened++;
    const tls = options.tls;
    const socket = tls ? tlsConnect({ port, host: '127.0.0.1', servername: 'localhost', ca: tls.ca, cert: tls.cert, key: tls.key }) : connect({ port, host: '127.0.0.1' });
    socket.on('error', () => undefined);
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      owed++;
    });
  };
  const refill = setInterval(() => {
    for (let i = 0; i < Math.ceil(reopenPerSecond / 20) && owed > 0; i++, owed--) openOne();
  }, 50);
  for (let i = 0; i < count; i++) openOne();
  return {
    open: () => [...sockets].filter((s) => !s.connecting && !s.destroyed).length,
    opened: () => opened,
    stop() {
      stopped = true;
      clearInterval(refill);
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
  };
}

export interface Sampled {
  /** Milliseconds of each request; Infinity for a failure or no answer in time. */
  readonly ms: number[];
  readonly statuses: number[];
}

/** `n` requests made by `one`, one every `everyMs`, each on its own; failures count as Infinity. */
export async function sample(n: number, everyMs: number, one: () => Promise<Answer>, ok: (status: number) => boolean = (s) => s === 200): Promise<Sampled> {
  const runs: Promise<{ ms: number; status: number }>[] = [];
  for (let i = 0; i < n; i++) {
    runs.push(one().then((a) => ({ ms: ok(a.status) ? a.ms : Infinity, status: a.status }), () => ({ ms: Infinity, status: 0 })));
    await new Promise((r) => setTimeout(r, everyMs));
  }
  const done = await Promise.all(runs);
  return { ms: done.map((d) => d.ms), statuses: done.map((d) => d.status) };
}

export function within(sampled: Sampled, limitMs: number): number {
  return sampled.ms.filter((ms) => ms <= limitMs).length;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/**
 * Clients sending wrong passwords as fast as they are answered: `keepAlive` connections
 * reused, and `fresh` clients each opening a connection per request. Returns the statuses
 * seen (401, 429 ...) and stops at `stop()` or after `maxRequests`.
 */
export function wrongPasswordFlood(target: Target, path: string, keepAlive: number, fresh: number, maxRequests = 100_000): { stop(): Promise<void>; readonly statuses: Map<number, number>; readonly retryAfter: Set<string> } {
  const statuses = new Map<number, number>();
  const retryAfter = new Set<string>();
  let stopped = false;
  let sent = 0;
  const headers = { authorization: basicAuth('prometheus', 'wrong password') };
  const agentOptions = { keepAlive: true, maxSockets: 1 };
  const loop = async (agent: HttpAgent | false) => {
    while (!stopped && sent < maxRequests) {
      sent++;
      try {
        const answer = await timedGet(target, path, { headers, agent, timeoutMs: 10_000 });
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const after = answer.headers['retry-after'];
        if (typeof after === 'string') retryAfter.add(after);
      } catch {
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  const agents = Array.from({ length: keepAlive }, () => (target.url.startsWith('https') ? new HttpsAgent({ ...agentOptions, ca: target.tls?.ca, cert: target.tls?.cert, key: target.tls?.key }) : new HttpAgent(agentOptions)));
  const loops = [...agents.map((a) => loop(a)), ...Array.from({ length: fresh }, () => loop(false))];
  return {
    statuses,
    retryAfter,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      for (const a of agents) a.destroy();
    },
  };
}

/**
 * `holdIdleConnections` on a worker thread of its own, so the TLS handshakes of thousands of
 * connections do not hold up the thread that measures the probes.
 */
export async function holdIdleConnectionsOnThread(
  port: number,
  count: number,
  options: { reopenPerSecond?: number; tls?: Target['tls'] } = {},
): Promise<{ open(): Promise<number>; opened(): Promise<number>; stop(): Promise<void> }> {
  const { Worker } = await import('node:worker_threads');
  const entry = new URL('./flood-thread.ts', import.meta.url).href;
  const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  const worker = new Worker(code, { eval: true, workerData: { port, count, options } });
  let next = 0;
  const ask = (type: 'open' | 'opened' | 'stop') =>
    new Promise<number>((resolve) => {
      const id = next++;
      const onMessage = (reply: { id: number; value: number }) => {
        if (reply.id !== id) return;
        worker.off('message', onMessage);
        resolve(reply.value);
      };
      worker.on('message', onMessage);
      worker.postMessage({ id, type });
    });
  await ask('open');
  return {
    open: () => ask('open'),
    opened: () => ask('opened'),
    async stop() {
      await ask('stop');
      await worker.terminate();
    },
  };
}

/** `wrongPasswordFlood` on a worker thread of its own, so its requests do not hold up the thread that measures. */
export async function wrongPasswordFloodOnThread(
  target: Target,
  path: string,
  keepAlive: number,
  fresh: number,
  maxRequests = 100_000,
): Promise<{ stop(): Promise<{ statuses: Map<number, number>; retryAfter: Set<string> }> }> {
  const { Worker } = await import('node:worker_threads');
  const entry = new URL('./password-flood-thread.ts', import.meta.url).href;
  const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  const worker = new Worker(code, { eval: true, workerData: { target, path, keepAlive, fresh, maxRequests } });
  return {
    async stop() {
      const reply = await new Promise<{ statuses: [number, number][]; retryAfter: string[] }>((resolve) => {
        worker.once('message', resolve);
        worker.postMessage({ type: 'stop' });
      });
      await worker.terminate();
      return { statuses: new Map(reply.statuses), retryAfter: new Set(reply.retryAfter) };
    },
  };
}
