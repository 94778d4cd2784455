import { Agent, createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { rawRequest } from '../../test/server/http.js';
import { parseListenAddress, startHttpServer, type ListenAddress } from './listen.js';

describe('parseListenAddress', () => {
  it.each<[string, ListenAddress]>([
    [':9100', { host: undefined, port: 9100 }],
    ['0.0.0.0:9100', { host: '0.0.0.0', port: 9100 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['localhost:65535', { host: 'localhost', port: 65535 }],
    ['exporter.example.com:80', { host: 'exporter.example.com', port: 80 }],
    ['[::1]:9100', { host: '::1', port: 9100 }],
    ['[::]:9100', { host: '::', port: 9100 }],
    ['[fe80::1%eth0]:9100', { host: 'fe80::1%eth0', port: 9100 }],
  ])('%s', (address, expected) => {
    expect(parseListenAddress(address)).toEqual(expected);
  });

  it.each([
    ['9100', 'expected host:port'],
    ['', 'expected host:port'],
    ['host:', 'is not a number'],
    ['host:abc', 'is not a number'],
    [':65536', 'above 65535'],
    [':-1', 'is not a number'],
    ['::1:9100', 'must be written in brackets'],
    ['[::1:9100', 'missing ]'],
    ['[nothex]:9100', 'is not an IPv6 address'],
    ['[1.2.3.4]:9100', 'is not an IPv6 address'],
    ['bad host:9100', 'not a valid host name'],
    ['-bad:9100', 'not a valid host name'],
  ])('rejects %j (%s)', (address, why) => {
    expect(() => parseListenAddress(address)).toThrow(`invalid listen address ${JSON.stringify(address)}`);
    expect(() => parseListenAddress(address)).toThrow(why);
  });
});

/** A handler that has sent its headers and part of its body, and finishes on release(). */
function held(): { app: RequestListener; release: () => void; started: Promise<void> } {
  let release!: () => void;
  let markStarted!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  return {
    app: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('do');
      markStarted();
      void gate.then(() => res.end('ne'));
    },
    release,
    started,
  };
}

describe('startHttpServer', () => {
  it('listens on an ephemeral port and reports its URL', async () => {
    const server = await startHttpServer((_req, res) => res.end('hi'), '127.0.0.1:0');
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await rawRequest(server.url)).body.toString()).toBe('hi');
    } finally {
      await server.close();
    }
  });

  it('uses localhost in the URL when listening on every interface', async () => {
    const server = await startHttpServer((_req, res) => res.end('hi'), ':0');
    try {
      expect(server.url).toMatch(/^http:\/\/localhost:\d+$/);
    } finally {
      await server.close();
    }
  });

  it('fails with a clear error when the port is taken', async () => {
    const blocker: Server = createHttpServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      await expect(startHttpServer(() => undefined, `127.0.0.1:${port}`)).rejects.toThrow(`cannot listen on 127.0.0.1:${port}: `);
    } finally {
      blocker.close();
    }
  });

  it('closes gracefully: refuses new connections, finishes the request in flight, then closes its keep-alive socket', async () => {
    const { app, release, started } = held();
    const server = await startHttpServer(app, '127.0.0.1:0');
    server.server.keepAliveTimeout = 600_000;
    const agent = new Agent({ keepAlive: true });
    const inFlight = rawRequest(server.url, { agent });
    await started;
    // A force timeout beyond the test timeout: only a real graceful close finishes in time.
    const closed = server.close(600_000);
    await expect(rawRequest(server.url)).rejects.toThrow(/ECONNREFUSED/);
    release();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('done');
    await closed;
    expect(server.server.listening).toBe(false);
    agent.destroy();
  });

  it('closes idle keep-alive connections instead of waiting for their timeout', async () => {
    const server = await startHttpServer((_req, res) => res.end('hi'), '127.0.0.1:0');
    // Far beyond the test timeout: close() only finishes in time if it closes the idle socket itself.
    server.server.keepAliveTimeout = 600_000;
    const agent = new Agent({ keepAlive: true });
    try {
      await rawRequest(server.url, { agent });
      const idle = Object.values(agent.freeSockets).flatMap((sockets) => sockets ?? []);
      expect(idle).toHaveLength(1);
      const socketClosed = new Promise<void>((resolve) => idle[0]?.once('close', () => resolve()));
      await server.close(600_000);
      await socketClosed;
      expect(idle[0]?.destroyed).toBe(true);
    } finally {
      agent.destroy();
    }
  });
});
