import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { guardConnections } from './connection-guard.js';
import { enforceHeaderDeadline } from './header-deadline.js';
import type { ProbeMessage, ProbeReply, ProbeThreadData } from './probe-server.js';

/**
 * The probe listener's thread (see probe-server.ts): answers /-/healthy and /-/ready from
 * what the event loop last told it, so a probe is answered at once however busy the event
 * loop is, and says unhealthy only when the event loop has not been heard from for
 * `stallLimitMs` (stuck, not busy).
 */

const port = parentPort;
if (!port) throw new Error('probe-thread.ts runs as a worker thread (see probe-server.ts)');
const data = workerData as ProbeThreadData;
let heardAt = Date.now();
let ready = false;
let reason = 'starting';

port.on('message', (message: ProbeMessage) => {
  heardAt = Date.now();
  if (message.type === 'state') {
    ready = message.ready;
    reason = message.reason;
  } else if (message.type === 'close') {
    server.close(() => port.close());
    server.closeAllConnections();
  }
});

const text = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
};

const server = createServer({ headersTimeout: 5_000, requestTimeout: 10_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 1_000, maxHeaderSize: 8 * 1024 }, (req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/-/healthy' && path !== '/-/ready') {
    text(res, 404, 'Not Found: this listener serves only /-/healthy and /-/ready\n');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    text(res, 405, 'Method Not Allowed\n', { Allow: 'GET, HEAD' });
    return;
  }
  const silentMs = Date.now() - heardAt;
  if (silentMs > data.stallLimitMs) {
    text(res, 503, `Unhealthy: the event loop has not answered for ${Math.round(silentMs / 1000)} s\n`);
    return;
  }
  if (path === '/-/healthy') text(res, 200, 'OK\n');
  else if (ready) text(res, 200, 'OK\n');
  else text(res, 503, `Not ready: ${reason}\n`);
});
server.maxRequestsPerSocket = 1_000;
guardConnections(server, { maxConnections: 256, evictAt: 224, maxPerAddress: 64 });
enforceHeaderDeadline(server, 5_000, 'connection');
server.on('error', (error) => port.postMessage({ type: 'error', message: error.message } satisfies ProbeReply));
server.listen({ host: data.host, port: data.port }, () => {
  port.postMessage({ type: 'listening', port: (server.address() as AddressInfo).port } satisfies ProbeReply);
});
