import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { enforceHeaderDeadline } from './header-deadline.js';

const DEADLINE_MS = 200;
let server: Server;

afterEach(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));

async function serve(delayMs = 0): Promise<number> {
  // Node's own limit switched off, so only the deadline under test can cut.
  server = createServer({ headersTimeout: 0, requestTimeout: 0, keepAliveTimeout: 60_000 }, (_req, res) => {
    setTimeout(() => res.end('ok'), delayMs);
  });
  enforceHeaderDeadline(server, DEADLINE_MS, 'connection');
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Everything the server sent until it closed the connection, or undefined if it had not closed within `withinMs`. */
function receivedUntilClose(socket: Socket, withinMs: number): Promise<string | undefined> {
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), withinMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

function dripping(socket: Socket): NodeJS.Timeout {
  return setInterval(() => socket.writable && socket.write('X'), 50);
}

describe('enforceHeaderDeadline', () => {
  it('cuts a connection whose headers never finish with a 408, however often it sends a byte', async () => {
    const port = await serve();
    const socket = connect(port, '127.0.0.1').on('error', () => undefined); // the server's cut may reach it as a reset
    socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n');
    const drip = dripping(socket);
    const received = await receivedUntilClose(socket, 5_000);
    clearInterval(drip);
    expect(received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it('cuts a kept-alive connection that dawdles over its second request, after answering the first', async () => {
    const port = await serve();
    const socket = connect(port, '127.0.0.1').on('error', () => undefined); // the server's cut may reach it as a reset
    const closed = receivedUntilClose(socket, 5_000);
    socket.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, DEADLINE_MS / 2));
    socket.write('GET /b HTTP/1.1\r\nHost: x\r\n');
    const drip = dripping(socket);
    const received = await closed;
    clearInterval(drip);
    expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok(.|\r\n)*HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it('never cuts a request whose headers arrived, however long its answer takes, nor pipelined ones behind it', async () => {
    const port = await serve(DEADLINE_MS * 3);
    const socket = connect(port, '127.0.0.1').on('error', () => undefined); // the server's cut may reach it as a reset
    const closed = receivedUntilClose(socket, DEADLINE_MS * 12);
    socket.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n');
    const received = await closed;
    // Both answered; then, idle, the connection is cut: the deadline also bounds an idle keep-alive connection.
    expect(received?.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(received).toMatch(/408 Request Timeout\r\n/);
  });

  it('leaves alone a connection that completes its request in time', async () => {
    const port = await serve();
    const socket = connect(port, '127.0.0.1').on('error', () => undefined); // the server's cut may reach it as a reset
    const closed = receivedUntilClose(socket, DEADLINE_MS / 2);
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    expect(await closed).toBeUndefined();
    socket.destroy();
  });
});
