import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { json, startLocalServer, type LocalServer } from '../../../test/support/test-server.js';
import { makeTestPki, type TestPki } from '../../../test/support/tls.js';
import { rejectionOf } from '../../../test/support/thrown.js';
import { proxySettingsFromEnv, TransportFailure, UndiciTransport } from './transport.js';

/**
 * The network settings of the transport over real sockets: the whole-request deadline, no
 * redirects, proxies from the environment, a CA of one's own and insecure_skip_verify.
 */

const never = new AbortController().signal;
let pki: TestPki;
const cleanup: (() => Promise<void> | void)[] = [];

beforeAll(() => {
  pki = makeTestPki();
});
afterAll(() => pki.remove());
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function local(handler: Parameters<typeof startLocalServer>[0]): Promise<LocalServer> {
  const server = await startLocalServer(handler);
  cleanup.push(() => server.close());
  return server;
}

function transport(...args: ConstructorParameters<typeof UndiciTransport>): UndiciTransport {
  const t = new UndiciTransport(...args);
  cleanup.push(() => t.close());
  return t;
}

describe('the request deadline', () => {
  it('cuts a body that drips a byte at a time, and the connections it held serve the next requests', async () => {
    const timers = new Set<NodeJS.Timeout>();
    cleanup.push(() => timers.forEach(clearInterval));
    const server = await local((req, res) => {
      if (req.url === '/ok') return json(res, 200, { ok: true });
      res.writeHead(200, { 'content-type': 'application/json' });
      // Each byte well inside the idle (body) timeout: only a deadline ends this.
      const timer = setInterval(() => res.write(' '), 50);
      timers.add(timer);
      res.on('close', () => clearInterval(timer));
    });
    const t = transport({ connectionsPerOrigin: 4, bodyTimeoutMs: 5_000, deadlineMs: 400 });
    const drips = await Promise.all(Array.from({ length: 4 }, () => rejectionOf(TransportFailure, t.get(`${server.url}/drip`, {}, never))));
    for (const failure of drips) {
      expect(failure.kind).toBe('timeout');
      expect(failure.deadline).toBe(true);
      expect(failure.message).toBe('no complete response within the request deadline of 0.4 s');
    }
    // Four drips held all four connections; after the deadline they are free again.
    const after = await t.get(`${server.url}/ok`, {}, never);
    expect(after.status).toBe(200);
  });

  it('also bounds a server that never sends headers', async () => {
    const server = await local(() => undefined);
    const failure = await rejectionOf(TransportFailure, transport({ headersTimeoutMs: 10_000, deadlineMs: 300 }).get(`${server.url}/hang`, {}, never));
    expect(failure).toMatchObject({ kind: 'timeout', deadline: true });
  });

  it('leaves the caller’s own abort an abort, not a deadline', async () => {
    const server = await local(() => undefined);
    const controller = new AbortController();
    const pending = transport({ deadlineMs: 10_000 }).get(`${server.url}/hang`, {}, controller.signal);
    setTimeout(() => controller.abort(new Error('budget closed')), 50);
    expect(await rejectionOf(TransportFailure, pending)).toMatchObject({ kind: 'aborted', deadline: false });
  });
});

describe('redirects', () => {
  it('are never followed: the other host gets no request, and the error names the host, not the path', async () => {
    const elsewhere = await local((_req, res) => json(res, 200, { stolen: true }));
    const server = await local((_req, res) => {
      res.writeHead(302, { location: `${elsewhere.url}/collect?key=k-secret` });
      res.end();
    });
    const failure = await rejectionOf(TransportFailure, transport().get(`${server.url}/api/v2/hosts`, { authorization: 'Bearer k-secret' }, never));
    expect(failure.kind).toBe('redirect');
    expect(failure.status).toBe(302);
    expect(failure.message).toBe(
      `redirected to another host (${new URL(elsewhere.url).host}); redirects are not followed, so the key never travels elsewhere: set base_url to the final address`,
    );
    expect(elsewhere.requests).toHaveLength(0);
  });
});

/**
 * A forward proxy that only tunnels (CONNECT, as undici uses it for every target) and sends
 * every tunnel to `to`, whatever host it was asked for; records what it was asked.
 */
async function startTunnelProxy(to: () => number): Promise<{ url: string; tunnels: string[] }> {
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    client.once('data', (head) => {
      const [line] = head.toString('latin1').split('\r\n');
      const match = /^CONNECT ([^ ]+) HTTP\/1\.1$/.exec(line ?? '');
      if (!match?.[1]) return client.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
      tunnels.push(match[1]);
      const upstream = connect(to(), '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client);
        client.pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on('error', () => client.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, tunnels };
}

/** A name that exists only for the test proxy: a direct connection to it fails to resolve. */
const PROXIED_HOST = 'api.monitoring.test';

describe('proxies from the environment', () => {
  it('reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY, lower case first', () => {
    expect(proxySettingsFromEnv({ HTTPS_PROXY: 'http://a:1', https_proxy: 'http://b:2', HTTP_PROXY: ' ', NO_PROXY: 'x.example' })).toEqual({
      httpsProxy: 'http://b:2',
      httpProxy: undefined,
      noProxy: 'x.example',
    });
  });

  it('sends requests through HTTP_PROXY, except to hosts in NO_PROXY and to loopback addresses', async () => {
    const server = await local((_req, res) => json(res, 200, { ok: true }));
    const port = Number(new URL(server.url).port);
    const proxy = await startTunnelProxy(() => port);
    const t = transport({}, {}, { httpProxy: proxy.url });
    expect((await t.get(`http://${PROXIED_HOST}:${port}/api/v2/hosts`, {}, never)).status).toBe(200);
    expect(proxy.tunnels).toEqual([`${PROXIED_HOST}:${port}`]);
    // Loopback is never proxied (as in Go), so the simulator next door is reached directly.
    expect((await t.get(`${server.url}/direct`, {}, never)).status).toBe(200);
    expect(proxy.tunnels).toHaveLength(1);
    // NO_PROXY exempts the domain: the exporter resolves the name itself, which fails here.
    const exempt = await rejectionOf(TransportFailure, transport({}, {}, { httpProxy: proxy.url, noProxy: '.monitoring.test' }).get(`http://${PROXIED_HOST}:${port}/x`, {}, never));
    expect(exempt.kind).toBe('network');
    expect(proxy.tunnels).toHaveLength(1);
  });

  it('tunnels HTTPS through HTTPS_PROXY, the account’s CA checking the real server inside the tunnel', async () => {
    const { port } = await startHttps();
    const proxy = await startTunnelProxy(() => port);
    const url = `https://${PROXIED_HOST}:${port}/api/v2/hosts`;
    const response = await transport({}, { ca: pki.caCert }, { httpsProxy: proxy.url }).get(url, {}, never);
    expect(response.status).toBe(200);
    expect(proxy.tunnels).toEqual([`${PROXIED_HOST}:${port}`]);
    const untrusted = await rejectionOf(TransportFailure, transport({}, {}, { httpsProxy: proxy.url }).get(url, {}, never));
    expect(untrusted.kind).toBe('network');
  });
});

async function startHttps(): Promise<{ port: number; server: HttpsServer }> {
  const server = createHttpsServer({ cert: pki.serverCert, key: pki.serverKey }, (_req, res) => json(res, 200, { tls: true }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as AddressInfo).port, server };
}

describe('TLS to the upstream', () => {
  it('refuses a certificate from an unknown CA, trusts it with the account’s CA file, or with insecure_skip_verify', async () => {
    const { port } = await startHttps();
    const url = `https://127.0.0.1:${port}/api/v2/hosts`;
    const untrusted = await rejectionOf(TransportFailure, transport().get(url, {}, never));
    expect(untrusted.kind).toBe('network');
    expect(untrusted.message).toMatch(/connection failed \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|DEPTH_ZERO_SELF_SIGNED_CERT)\)/);
    expect((await transport({}, { ca: pki.caCert }).get(url, {}, never)).status).toBe(200);
    expect((await transport({}, { insecureSkipVerify: true }).get(url, {}, never)).status).toBe(200);
  });
});
