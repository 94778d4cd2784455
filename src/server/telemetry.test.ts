import { EventEmitter } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SEND_BATCH_PIECES, sendBody } from './telemetry.js';

/** The parts of a response sendBody uses, recording what it is asked to do; `full` says what write answers. */
function fakeResponse(destroyed: boolean, full = false): { res: Parameters<typeof sendBody>[0]; calls: string[]; emitter: EventEmitter } {
  const calls: string[] = [];
  const emitter = new EventEmitter();
  const res = {
    destroyed,
    cork: () => calls.push('cork'),
    write: (chunk: Buffer) => calls.push(`write ${chunk.toString()}`) > 0 && !full,
    end: () => calls.push('end'),
    uncork: () => calls.push('uncork'),
    once: (event: string, listener: () => void) => emitter.once(event, listener),
  } as unknown as Parameters<typeof sendBody>[0];
  return { res, calls, emitter };
}

describe('sendBody', () => {
  it('writes every chunk in order, corked, then ends', () => {
    const { res, calls } = fakeResponse(false);
    expect(sendBody(res, [Buffer.from('a'), Buffer.from('b')])).toBe(true);
    expect(calls).toEqual(['cork', 'write a', 'write b', 'end', 'uncork']);
  });

  it('writes a body of many pieces in batches of one writev each, the next when the socket has taken the last', async () => {
    const { res, calls, emitter } = fakeResponse(false, true);
    const pieces = Array.from({ length: SEND_BATCH_PIECES * 2 + 5 }, (_, i) => Buffer.from(String(i)));
    sendBody(res, pieces);
    const writes = () => calls.filter((c) => c.startsWith('write')).length;
    expect(writes()).toBe(SEND_BATCH_PIECES);
    expect(calls.at(-1)).toBe('uncork');
    await nextTurn();
    expect(writes()).toBe(SEND_BATCH_PIECES);
    emitter.emit('drain');
    emitter.emit('drain');
    expect(calls.filter((c) => c.startsWith('write'))).toEqual(pieces.map((p) => `write ${p.toString()}`));
    expect(calls.filter((c) => c === 'end')).toHaveLength(1);
    expect(calls.at(-2)).toBe('end');
  });

  it('goes on with the next batch on a later turn when the socket had room', async () => {
    const { res, calls } = fakeResponse(false);
    sendBody(res, Array.from({ length: SEND_BATCH_PIECES + 1 }, () => Buffer.from('x')));
    expect(calls.includes('end')).toBe(false);
    await nextTurn();
    expect(calls.filter((c) => c.startsWith('write'))).toHaveLength(SEND_BATCH_PIECES + 1);
    expect(calls.at(-2)).toBe('end');
  });

  it('writes nothing to a response whose scraper is gone: each write would make an error', () => {
    const { res, calls } = fakeResponse(true);
    expect(sendBody(res, Array.from({ length: 3000 }, () => Buffer.from('x')))).toBe(false);
    expect(calls).toEqual([]);
  });
});
