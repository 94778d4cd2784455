import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * Stands between a remote write client and a real receiver and plays faults on its requests,
 * one per request from a script, then passes everything: `down` (the connection is cut before
 * an answer, as a receiver that is not there), an HTTP status with an optional Retry-After
 * (429, 500, 503), and `lost_answer`, where the receiver takes the request but the client is
 * told 503, so the client sends the same data twice. It records what happened to each request.
 */
export type WriteFault =
  | { readonly kind: 'pass' }
  | { readonly kind: 'down' }
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string }
  | { readonly kind: 'lost_answer' };

export interface WriteFaultProxy {
  /** The receiver's write URL, through the proxy. */
  readonly url: string;
  /** Each request and the fault it met (`pass` once the script is done). */
  readonly log: { readonly fault: WriteFault['kind']; readonly status: number | undefined; readonly bytes: number }[];
  /** Faults for the next requests, in order. */
  script(faults: readonly WriteFault[]): void;
  /** Requests are cut (as `down`) until `up()`. */
  down(): void;
  up(): void;
  close(): Promise<void>;
}

export async function startWriteFaultProxy(targetUrl: string): Promise<WriteFaultProxy> {
  const target = new URL(targetUrl);
  let script: WriteFault[] = [];
  let isDown = false;
  const log: WriteFaultProxy['log'] = [];
  const sockets = new Set<Socket>();

  const forward = (req: IncomingMessage, body: Buffer, done: (status: number | undefined, answer: Buffer, headers: Record<string, string>) => void) => {
    const out = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: `${target.pathname}${target.search}`, headers: { ...req.headers, 'content-length': String(body.length) } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => done(answer.statusCode, Buffer.concat(chunks), { 'content-type': String(answer.headers['content-type'] ?? 'text/plain') }));
      },
    );
    out.on('error', () => done(undefined, Buffer.alloc(0), {}));
    out.end(body);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const fault: WriteFault = isDown ? { kind: 'down' } : (script.shift() ?? { kind: 'pass' });
      const record = (status: number | undefined) => log.push({ fault: fault.kind, status, bytes: body.length });
      switch (fault.kind) {
        case 'down':
          record(undefined);
          req.socket.destroy();
          return;
        case 'status':
          record(fault.status);
          res.writeHead(fault.status, { 'content-type': 'text/plain', ...(fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter }) });
          res.end(`injected ${fault.status}\n`);
          return;
        case 'lost_answer':
          forward(req, body, (status) => {
            record(status);
            res.writeHead(503, { 'content-type': 'text/plain' });
            res.end('injected: the receiver took this request but the answer was lost\n');
          });
          return;
        case 'pass':
          forward(req, body, (status, answer, headers) => {
            record(status);
            if (status === undefined) return void req.socket.destroy();
            res.writeHead(status, headers);
            res.end(answer);
          });
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    log,
    script(faults) {
      script = [...faults];
    },
    down() {
      isDown = true;
    },
    up() {
      isDown = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  };
}
