import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A pass-through HTTP proxy in front of one target that records what each request asked for
 * and what it got: how a real scraper negotiates with the exporter, seen on the wire.
 */
export interface Exchange {
  readonly path: string;
  readonly accept: string | undefined;
  readonly acceptEncoding: string | undefined;
  readonly status: number;
  readonly contentType: string | undefined;
}

export interface RecordingProxy {
  /** `127.0.0.1:port`, a scrape target address. */
  readonly address: string;
  readonly exchanges: readonly Exchange[];
  close(): Promise<void>;
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

export async function startRecordingProxy(targetUrl: string): Promise<RecordingProxy> {
  const target = new URL(targetUrl);
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      (answer) => {
        exchanges.push({
          path: req.url ?? '/',
          accept: header(req.headers, 'accept'),
          acceptEncoding: header(req.headers, 'accept-encoding'),
          status: answer.statusCode ?? 0,
          contentType: header(answer.headers, 'content-type'),
        });
        // Keep only recent exchanges: a scrape a second for minutes adds up.
        if (exchanges.length > 500) exchanges.splice(0, exchanges.length - 500);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${error.message}\n`);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
