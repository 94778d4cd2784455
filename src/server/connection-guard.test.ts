import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { guardConnections, type ClosedReason, type ConnectionGuard } from './connection-guard.js';

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose only route answers after `holdMs`, so tests can keep a request in flight. */
async function serve(limits: Parameters<typeof guardConnections>[1]): Promise<{ port: number; guard: ConnectionGuard; closed: ClosedReason[] }> {
  const closed: ClosedReason[] = [];
  server = createServer((req, res) => {
    const hold = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('hold') ?? 0);
    setTimeout(() => res.end('ok'), hold);
  });
  const guard = guardConnections(server, limits, (reason) => closed.push(reason));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, guard, closed };
}

async function open(port: number, from = '127.0.0.1'): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  // The server sees it a moment later.
  await sleep(5);
  return socket;
}

const isClosed = (socket: Socket) => socket.destroyed || socket.readableEnded;
async function settle(): Promise<void> {
  await sleep(30);
}

function get(socket: Socket, path: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\r\n\r\nok')) resolve(text);
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

describe('guardConnections', () => {
  it('past evictAt, each new connection closes the one idle the longest', async () => {
    const { port, guard, closed } = await serve({ maxConnections: 10, evictAt: 4, maxPerAddress: 100, minIdleMs: 0 });
    const first = await Promise.all([1, 2, 3, 4].map(() => open(port)));
    expect(guard.open).toBe(4);
    const fifth = await open(port);
    await settle();
    expect(first.map(isClosed)).toEqual([true, false, false, false]);
    expect(isClosed(fifth)).toBe(false);
    expect(guard.open).toBe(4);
    expect(closed).toEqual(['idle_evicted']);
  });

  it('never closes a connection with a request in flight; refuses a new one when none is idle at the cap', async () => {
    const { port, guard, closed } = await serve({ maxConnections: 3, evictAt: 3, maxPerAddress: 100, minIdleMs: 0 });
    const busy = await Promise.all([1, 2, 3].map(() => open(port)));
    // Held long enough that a busy machine cannot finish them before the next connection comes.
    const answers = busy.map((s) => get(s, '/?hold=2000'));
    await settle();
    const refused = await open(port);
    await settle();
    expect(isClosed(refused)).toBe(true);
    expect(busy.map(isClosed)).toEqual([false, false, false]);
    expect(closed).toEqual(['refused_full']);
    expect(await Promise.all(answers)).toHaveLength(3);
    // Answered: idle again, so the next connection makes room by closing the longest-idle one.
    await settle();
    const next = await open(port);
    await settle();
    expect(isClosed(next)).toBe(false);
    expect(guard.open).toBe(3);
    expect(closed).toEqual(['refused_full', 'idle_evicted']);
  });

  it('an idle keep-alive connection counts from the end of its last response, not from when it connected', async () => {
    const { port } = await serve({ maxConnections: 10, evictAt: 2, maxPerAddress: 100, minIdleMs: 0 });
    const older = await open(port);
    const newer = await open(port);
    await get(older, '/');
    await settle();
    await open(port);
    await settle();
    expect(isClosed(newer)).toBe(true);
    expect(isClosed(older)).toBe(false);
  });

  it('one address holds at most maxPerAddress: its own longest-idle connection makes room, other addresses are untouched', async () => {
    const { port, guard, closed } = await serve({ maxConnections: 100, evictAt: 100, maxPerAddress: 3, minIdleMs: 0 });
    const other = await open(port, '127.0.0.2');
    const mine = await Promise.all([1, 2, 3].map(() => open(port)));
    const fourth = await open(port);
    await settle();
    expect(mine.map(isClosed)).toEqual([true, false, false]);
    expect([isClosed(fourth), isClosed(other)]).toEqual([false, false]);
    expect(guard.openFrom('127.0.0.1')).toBe(3);
    expect(guard.openFrom('127.0.0.2')).toBe(1);
    expect(closed).toEqual(['address_idle_evicted']);
  });

  it('never closes a connection idle for less than minIdleMs: a flood of new ones is refused instead', async () => {
    // Long enough that a busy machine cannot make the held ones old enough before the flood comes.
    const { port, closed } = await serve({ maxConnections: 100, evictAt: 100, maxPerAddress: 2, minIdleMs: 2_000 });
    const held = await Promise.all([1, 2].map(() => open(port)));
    const early = await open(port);
    await settle();
    expect([...held.map(isClosed), isClosed(early)]).toEqual([false, false, true]);
    expect(closed).toEqual(['refused_address']);
    await sleep(2_000);
    const later = await open(port);
    await settle();
    expect([...held.map(isClosed), isClosed(later)]).toEqual([true, false, false]);
    expect(closed).toEqual(['refused_address', 'address_idle_evicted']);
  });
});
