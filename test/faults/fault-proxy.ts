import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A fault proxy between the exporter and the simulator, for faults the simulator's own
 * switches do not make: a key refused mid-run (401, 403 plan_required), connections reset
 * for an hour, a body dripping a byte at a time, an endless body, a host hidden from the
 * host list for a while. It counts what reaches it, so a test can tell retries from calls.
 */
export type ProxyFault =
  | { readonly kind: 'pass' }
  | { readonly kind: 'unauthorized' }
  /** `echo`: how the key is echoed in the message and the upgrade URL (default as sent, URL-encoded in the URL). */
  | { readonly kind: 'plan_required'; readonly echo?: 'every-char-url-encoded' | 'base64' | 'upper-case' }
  | { readonly kind: 'reset' }
  | { readonly kind: 'drip'; readonly everyMs: number }
  | { readonly kind: 'endless' };

export interface FaultProxy {
  /** Base URL for the exporter's `base_url`, ending in /api/v2. */
  readonly baseUrl: string;
  /** Requests that reached the proxy (under any fault). */
  readonly requests: { readonly path: string; readonly fault: ProxyFault['kind'] }[];
  /** The fault for requests whose path matches `only` (all by default). */
  set(fault: ProxyFault, only?: RegExp): void;
  /** Hosts left out of every /hosts answer. */
  hideHosts(uuids: readonly string[]): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  let fault: ProxyFault = { kind: 'pass' };
  let only: RegExp | undefined;
  let hidden = new Set<string>();
  const requests: FaultProxy['requests'] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const forward = (req: IncomingMessage, res: ServerResponse, path: string) => {
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path, headers: req.headers }, (answer) => {
      const isHostList = /\/api\/v2\/hosts(\?|$)/.test(path) && hidden.size > 0;
      if (!isHostList) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { hosts: { uuid: string }[]; total?: number };
        body.hosts = body.hosts.filter((h) => !hidden.has(h.uuid));
        if (body.total !== undefined) body.total = body.hosts.length;
        const text = JSON.stringify(body);
        res.writeHead(answer.statusCode ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      });
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  };

  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const active = only === undefined || only.test(path) ? fault : ({ kind: 'pass' } as const);
    requests.push({ path, fault: active.kind });
    const json = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    switch (active.kind) {
      case 'pass':
        return forward(req, res, path);
      case 'unauthorized':
        // Echoes the credential, as a careless upstream might: it must not leak.
        return json(401, { error: 'unauthorized', message: `invalid key ${req.headers.authorization ?? ''}` });
      case 'plan_required': {
        const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
        const echoed =
          active.echo === 'every-char-url-encoded'
            ? [...key].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('')
            : active.echo === 'base64'
              ? Buffer.from(key).toString('base64')
              : active.echo === 'upper-case'
                ? key.toUpperCase()
                : undefined;
        if (echoed !== undefined) return json(403, { error: 'plan_required', message: `API access needs the Pro plan (key ${echoed})`, upgrade_url: `https://monitoring.example.com/upgrade?key=${echoed}` });
        return json(403, { error: 'plan_required', message: `API access needs the Pro plan (key ${req.headers.authorization ?? ''})`, upgrade_url: `https://monitoring.example.com/upgrade?key=${encodeURIComponent(key)}` });
      }
      case 'reset':
        return req.socket.destroy();
      case 'drip': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => res.write(' '), active.everyMs);
        timers.add(timer);
        res.on('close', () => clearInterval(timer));
        return;
      }
      case 'endless': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = () => {
          while (res.write(chunk)) if (res.destroyed) return;
        };
        res.on('drain', pump);
        pump();
        return;
      }
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${upstream.pathname}`,
    requests,
    set(next, pattern) {
      fault = next;
      only = pattern;
    },
    hideHosts(uuids) {
      hidden = new Set(uuids);
    },
    close: () =>
      new Promise<void>((resolve) => {
        timers.forEach(clearInterval);
        sockets.forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  };
}
