import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { garbageCollection, SharedMemoryCollector } from './shared-memory-collector.js';

const MiB = 1024 * 1024;

describe('SharedMemoryCollector', () => {
  it.each([
    // [what is dropped, one call after another, with the bytes held then; collections after each]
    ['small bodies: 32 MiB dropped in all', [[16 * MiB, 10 * MiB], [15 * MiB, 10 * MiB], [MiB, 10 * MiB]], [0, 0, 1]],
    ['large bodies: a quarter of what is held', [[40 * MiB, 400 * MiB], [59 * MiB, 400 * MiB], [MiB, 400 * MiB]], [0, 0, 1]],
    ['the count starts again after a collection', [[32 * MiB, 0], [31 * MiB, 0], [MiB, 0], [32 * MiB, 0]], [1, 1, 2, 3]],
    ['one large drop is one collection', [[500 * MiB, 0]], [1]],
  ])('%s', (_, drops, collectionsAfter) => {
    let collected = 0;
    const collector = new SharedMemoryCollector(() => collected++);
    const seen = drops.map(([dropped, held]) => {
      collector.dropped(dropped as number, held as number);
      return collected;
    });
    expect(seen).toEqual(collectionsAfter);
  });
});

describe('garbageCollection', () => {
  it('frees the memory of a shared buffer nothing holds any more', () => {
    const gc = garbageCollection();
    if (!('collect' in gc)) throw new Error(gc.unavailable);
    gc.collect();
    const before = process.memoryUsage().arrayBuffers;
    let bytes: SharedArrayBuffer | undefined = new SharedArrayBuffer(64 * MiB);
    new Uint8Array(bytes).fill(1);
    expect(process.memoryUsage().arrayBuffers - before).toBeGreaterThanOrEqual(64 * MiB);
    bytes = undefined;
    gc.collect();
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(MiB);
  });

  it('gives a collector in this thread, and threads started after have one too', async () => {
    const here = garbageCollection();
    expect('collect' in here && typeof here.collect).toBe('function');
    if ('collect' in here) here.collect();
    const worker = new Worker(`require('node:worker_threads').parentPort.postMessage(typeof globalThis.gc)`, { eval: true });
    const seen = await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
    await worker.terminate();
    expect(seen).toBe('function');
  });
});
