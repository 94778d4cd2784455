import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestGate } from '../../src/budget/types.js';

/**
 * Test support: a real HTTP server on a free local port, for the odd responses a simulator
 * would never send (stalls, oversized bodies, HTML error pages). Not used at run time.
 */
export interface LocalServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
}

export type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export async function startLocalServer(handler: Handler): Promise<LocalServer> {
  const requests: RecordedRequest[] = [];
  let connections = 0;
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    handler(request, response);
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends `body` as JSON with `status`. */
export function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}

/** A gate that runs every attempt at once, once: the client's behaviour without a budget. */
export const passThroughGate: RequestGate = {
  run: (_priority, _endpoint, attempt) => attempt(new AbortController().signal),
};

/** A gate that records what it was asked to run. */
export function recordingGate(): RequestGate & { calls: { priority: string; endpoint: string }[] } {
  const calls: { priority: string; endpoint: string }[] = [];
  return {
    calls,
    run: (priority, endpoint, attempt) => {
      calls.push({ priority, endpoint });
      return attempt(new AbortController().signal);
    },
  };
}
