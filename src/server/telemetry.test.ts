import { describe, expect, it } from 'vitest';
import { sendBody } from './telemetry.js';

/** The parts of a response sendBody uses, recording what it is asked to do. */
function fakeResponse(destroyed: boolean): { res: Parameters<typeof sendBody>[0]; calls: string[] } {
  const calls: string[] = [];
  const res = {
    destroyed,
    cork: () => calls.push('cork'),
    write: (chunk: Buffer) => calls.push(`write ${chunk.toString()}`) > 0,
    end: () => calls.push('end'),
    uncork: () => calls.push('uncork'),
  } as unknown as Parameters<typeof sendBody>[0];
  return { res, calls };
}

describe('sendBody', () => {
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
});
