import { afterEach, describe, expect, it } from 'vitest';
import { rejectionOf } from '../../../test/support/thrown.js';
import { TransportFailure, UndiciTransport } from './transport.js';
import { json, startLocalServer, type LocalServer } from '../../../test/support/test-server.js';

const never = new AbortController().signal;

describe('UndiciTransport', () => {
  let server: LocalServer | undefined;
  let transport: UndiciTransport | undefined;

  afterEach(async () => {
    await transport?.close();
    await server?.close();
    transport = undefined;
    server = undefined;
  });


  it('returns status, lower-case headers and the whole body, and sends the given headers', async () => {
    server = await startLocalServer((_req, res) => json(res, 200, { hello: 'world' }, { 'X-Thing': 'a' }));
    transport = new UndiciTransport();
    const response = await transport.get(`${server.url}/api/v2/hosts?x=1`, { authorization: 'Bearer k' }, never);
    expect(response.status).toBe(200);
    expect(response.headers['x-thing']).toBe('a');
    expect(JSON.parse(response.body.toString('utf8'))).toEqual({ hello: 'world' });
    expect(server.requests[0]).toMatchObject({ method: 'GET', url: '/api/v2/hosts?x=1' });
    expect(server.requests[0]?.headers.authorization).toBe('Bearer k');
  });

  it.each([
    ['declares its length', true],
    ['is chunked, past the first room for it', false],
  ])('reads a body that %s whole into memory of its own, which release frees', async (_shape, declared) => {
    const bytes = Buffer.from(Array.from({ length: 100_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(''));
    server = await startLocalServer((_req, res) => {
      res.writeHead(200, declared ? { 'content-length': String(bytes.length) } : {});
      // In pieces, so a chunked body arrives over several reads.
      for (let at = 0; at < bytes.length; at += 7_000) res.write(bytes.subarray(at, at + 7_000));
      res.end();
    });
    // A cap of exactly its length: the room grows by doubling, never past the cap.
    transport = new UndiciTransport({ maxResponseBytes: bytes.length });
    const response = await transport.get(`${server.url}/body`, {}, never);
    expect(response.body.equals(bytes)).toBe(true);
    expect(response.body.buffer.byteLength).toBe(bytes.length);
    response.release?.();
    expect(response.body.length).toBe(0);
    expect(response.body.buffer.byteLength).toBe(0);
    // Twice is harmless.
    response.release?.();
  });

  it('keeps the connection alive between sequential requests', async () => {
    server = await startLocalServer((_req, res) => json(res, 200, {}));
    // One connection per origin, so a second socket can only mean the first was not kept.
    transport = new UndiciTransport({ connectionsPerOrigin: 1 });
    for (let i = 0; i < 3; i++) await transport.get(`${server.url}/a`, {}, never);
    expect(server.requests).toHaveLength(3);
    expect(server.connections()).toBe(1);
  });

  it('refuses a body whose declared length is over the cap without reading it', async () => {
    server = await startLocalServer((_req, res) => {
      res.writeHead(200, { 'content-length': '5000' });
      res.end('x'.repeat(5000));
    });
    transport = new UndiciTransport({ maxResponseBytes: 1000 });
    const failure = await rejectionOf(TransportFailure, transport.get(`${server.url}/big`, {}, never));
    expect(failure.kind).toBe('too_large');
    expect(failure.message).toContain('1000 bytes');
    expect(failure.status).toBe(200);
  });

  it('stops reading a chunked body that grows past the cap', async () => {
    server = await startLocalServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = 'y'.repeat(1024);
      let sent = 0;
      const timer = setInterval(() => {
        if (!res.write(chunk) || ++sent > 10_000) clearInterval(timer);
      }, 1);
      res.on('close', () => clearInterval(timer));
    });
    transport = new UndiciTransport({ maxResponseBytes: 16 * 1024 });
    const failure = await rejectionOf(TransportFailure, transport.get(`${server.url}/endless`, {}, never));
    expect(failure.kind).toBe('too_large');
    expect(failure.message).toContain(`cap of ${16 * 1024} bytes`);
  });

  it('times out when the server never sends headers', async () => {
    server = await startLocalServer(() => undefined);
    transport = new UndiciTransport({ headersTimeoutMs: 150 });
    const failure = await rejectionOf(TransportFailure, transport.get(`${server.url}/silent`, {}, never));
    expect(failure.kind).toBe('timeout');
    expect(failure.message).toContain('headers timeout');
  });

  it('times out when the body stalls', async () => {
    server = await startLocalServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"hosts": [');
    });
    transport = new UndiciTransport({ bodyTimeoutMs: 150 });
    const failure = await rejectionOf(TransportFailure, transport.get(`${server.url}/stall`, {}, never));
    expect(failure.kind).toBe('timeout');
    expect(failure.message).toContain('body timeout');
  });

  it('reports a refused connection as a network failure', async () => {
    const closed = await startLocalServer(() => undefined);
    const url = closed.url;
    await closed.close();
    transport = new UndiciTransport();
    const failure = await rejectionOf(TransportFailure, transport.get(`${url}/x`, {}, never));
    expect(failure.kind).toBe('network');
    expect(failure.message).toContain('ECONNREFUSED');
  });

  it('reports a connection the server drops as a network failure', async () => {
    server = await startLocalServer((req) => req.socket.destroy());
    transport = new UndiciTransport();
    const failure = await rejectionOf(TransportFailure, transport.get(`${server.url}/x`, {}, never));
    expect(failure.kind).toBe('network');
  });

  it('honours the abort signal while waiting for the response', async () => {
    server = await startLocalServer(() => undefined);
    transport = new UndiciTransport();
    const controller = new AbortController();
    const pending = transport.get(`${server.url}/slow`, {}, controller.signal);
    setTimeout(() => controller.abort(), 20);
    const failure = await rejectionOf(TransportFailure, pending);
    expect(failure.kind).toBe('aborted');
  });

  it('does not send when the signal is already aborted', async () => {
    server = await startLocalServer((_req, res) => json(res, 200, {}));
    transport = new UndiciTransport();
    const failure = await rejectionOf(TransportFailure, transport.get(`${server.url}/x`, {}, AbortSignal.abort()));
    expect(failure.kind).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses to work after close()', async () => {
    transport = new UndiciTransport();
    await transport.close();
    const failure = await rejectionOf(TransportFailure, transport.get('http://127.0.0.1:9/x', {}, never));
    expect(failure.message).toContain('closed');
  });

  it.each([
    ['ftp://example.com/x', 'http or https'],
    ['not a url', 'not a valid absolute URL'],
  ])('rejects the URL %s', async (url, message) => {
    transport = new UndiciTransport();
    await expect(transport.get(url, {}, never)).rejects.toThrow(message);
  });

  it.each([
    [{ maxResponseBytes: 0 }, 'maxResponseBytes'],
    [{ headersTimeoutMs: -1 }, 'headersTimeoutMs'],
    [{ connectTimeoutMs: Number.NaN }, 'connectTimeoutMs'],
  ])('rejects the option %o', (options, name) => {
    expect(() => new UndiciTransport(options)).toThrow(name);
  });
});
