import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeEach, describe, expect, it } from 'vitest';
import { rawRequest } from '../../test/server/http.js';
import { sendBody } from './telemetry.js';

/** The parts of a response sendBody uses, recording what it is asked to do; a write finds room while fewer than `room` bytes wait. */
function fakeResponse(destroyed: boolean, room = Infinity): { res: Parameters<typeof sendBody>[0] & { destroyed: boolean }; calls: string[]; drain: () => void } {
  const calls: string[] = [];
  const events = new EventEmitter();
  let waiting = 0;
  const res = {
    destroyed,
    cork: () => calls.push('cork'),
    write: (chunk: Buffer) => {
      calls.push(`write ${chunk.toString()}`);
      waiting += chunk.length;
      return waiting < room;
    },
    end: () => calls.push('end'),
    uncork: () => calls.push('uncork'),
    once: (event: string, listener: () => void) => events.once(event, listener),
    destroy: (error?: Error) => {
      calls.push(`destroy ${error?.message ?? ''}`);
      res.destroyed = true;
    },
  };
  const drain = (): void => {
    waiting = 0;
    events.emit('drain');
  };
  return { res: res as unknown as Parameters<typeof sendBody>[0] & { destroyed: boolean }, calls, drain };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('sendBody', () => {
  // One group a turn for all scrapes together: each test starts in a turn of its own.
  beforeEach(() => nextTurn());

  it('writes every chunk in order, corked, then ends', () => {
    const { res, calls } = fakeResponse(false);
    expect(sendBody(res, [Buffer.from('a'), Buffer.from('b')])).toBe(true);
    expect(calls).toEqual(['cork', 'write a', 'write b', 'end', 'uncork']);
  });

  it('writes nothing to a response whose scraper is gone: each write would make an error', () => {
    const { res, calls } = fakeResponse(true);
    expect(sendBody(res, Array.from({ length: 3000 }, () => Buffer.from('x')))).toBe(false);
    expect(calls).toEqual([]);
  });

  it('hands a large body over a group at a time, each once the socket has taken the one before, at most one a turn of the loop', async () => {
    const { res, calls, drain } = fakeResponse(false, 2);
    sendBody(res, ['a', 'b', 'c', 'd', 'e'].map((s) => Buffer.from(s)), 2);
    expect(calls).toEqual(['cork', 'write a', 'write b', 'uncork']);
    // The socket takes the group in the same turn: the next one waits for the next turn.
    drain();
    expect(calls).toHaveLength(4);
    await nextTurn();
    expect(calls.slice(4)).toEqual(['cork', 'write c', 'write d', 'uncork']);
    // Still full a turn later: nothing until it drains; then at once, since no group left in this turn.
    await nextTurn();
    expect(calls).toHaveLength(8);
    drain();
    expect(calls.slice(8)).toEqual(['cork', 'write e', 'end', 'uncork']);
    drain();
    await nextTurn();
    expect(calls).toHaveLength(12);
  });

  it('goes on at the next turn of the event loop when the socket still has room', async () => {
    const { res, calls } = fakeResponse(false);
    sendBody(res, ['a', 'b', 'c'].map((s) => Buffer.from(s)), 2);
    expect(calls).toEqual(['cork', 'write a', 'write b', 'uncork']);
    await nextTurn();
    expect(calls.slice(4)).toEqual(['cork', 'write c', 'end', 'uncork']);
  });

  it('hands the kernel one group a turn whichever scrape it is for, the scrapes taking turns in the order they asked', async () => {
    const scrapes = ['x', 'y', 'z'].map(() => fakeResponse(false));
    scrapes.forEach(({ res }, i) => sendBody(res, [1, 2].map((part) => Buffer.from(`${'xyz'[i]}${part}`)), 1));
    const seen = scrapes.map(() => 0);
    /** The groups written since the last look, whichever scrape they are for. */
    const newWrites = (): string[] =>
      scrapes.flatMap(({ calls }, i) => {
        const fresh = calls.slice(seen[i]).filter((call) => call.startsWith('write'));
        seen[i] = calls.length;
        return fresh;
      });
    // The first scrape's first group in this turn; its next one asked before the others' first.
    expect(newWrites()).toEqual(['write x1']);
    const turns: string[][] = [];
    for (let turn = 0; turn < 6; turn++) {
      await nextTurn();
      turns.push(newWrites());
    }
    expect(turns).toEqual([['write x2'], ['write y1'], ['write z1'], ['write y2'], ['write z2'], []]);
    for (const { calls } of scrapes) expect(calls.filter((call) => call === 'end')).toHaveLength(1);
  });

  it('gives the turn of a scrape whose scraper went away while it waited to the next one waiting', async () => {
    const [first, gone, third] = [0, 1, 2].map(() => fakeResponse(false));
    for (const [i, scrape] of [first, gone, third].entries()) sendBody(scrape!.res, [Buffer.from(`${i}a`), Buffer.from(`${i}b`)], 1);
    gone!.res.destroyed = true;
    await nextTurn();
    // The first scrape's second group asked first; in the turn after it, the third scrape's first, not nothing.
    expect(first!.calls.filter((call) => call.startsWith('write'))).toEqual(['write 0a', 'write 0b']);
    await nextTurn();
    expect(third!.calls.filter((call) => call.startsWith('write'))).toEqual(['write 2a']);
    expect(gone!.calls).toEqual([]);
  });

  it('ends a scrape whose write throws, and goes on with the others', async () => {
    const broken = fakeResponse(false);
    const other = fakeResponse(false);
    let writes = 0;
    const write = broken.res.write.bind(broken.res);
    broken.res.write = ((chunk: Buffer) => {
      if (++writes === 2) throw new Error('socket gone wrong');
      return write(chunk);
    }) as typeof broken.res.write;
    sendBody(broken.res, [Buffer.from('a'), Buffer.from('b')], 1);
    sendBody(other.res, [Buffer.from('x'), Buffer.from('y')], 1);
    for (let turn = 0; turn < 4; turn++) await nextTurn();
    expect(broken.calls).toContain('destroy socket gone wrong');
    expect(other.calls.filter((call) => call.startsWith('write') || call === 'end')).toEqual(['write x', 'write y', 'end']);
  });

  it('ends an empty body at once', () => {
    const { res, calls } = fakeResponse(false);
    expect(sendBody(res, [])).toBe(true);
    expect(calls).toEqual(['end']);
  });

  it('stops between groups when the scraper goes away', async () => {
    const { res, calls, drain } = fakeResponse(false, 1);
    sendBody(res, ['a', 'b', 'c'].map((s) => Buffer.from(s)), 1);
    res.destroyed = true;
    drain();
    await nextTurn();
    expect(calls).toEqual(['cork', 'write a', 'uncork']);
  });

  it('delivers a body of many groups whole over a real socket to a scraper that reads slowly', async () => {
    const chunks = Array.from({ length: 96 }, (_, i) => Buffer.alloc(32 * 1024, i));
    const expected = Buffer.concat(chunks);
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Length': expected.length });
      sendBody(res, chunks, 256 * 1024);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { body: received } = await rawRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { pauseAfterReadMs: 1 });
      expect(received.length).toBe(expected.length);
      expect(received.equals(expected)).toBe(true);
    } finally {
      server.close();
    }
  });
});
