import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { CollectionBetweenBuilds, exposeGarbageCollectionToNewThreads, SharedMemoryCollector } from './shared-memory-collector.js';

const MiB = 1024 * 1024;

describe('SharedMemoryCollector', () => {
  it.each([
    // [what is dropped, one call after another, with the bytes held then; collections after each collectIfDue]
    ['small bodies: 32 MiB dropped in all', [[16 * MiB, 10 * MiB], [15 * MiB, 10 * MiB], [MiB, 10 * MiB]], [0, 0, 1]],
    ['large bodies: a quarter of what is held', [[40 * MiB, 400 * MiB], [59 * MiB, 400 * MiB], [MiB, 400 * MiB]], [0, 0, 1]],
    ['the count starts again after a collection', [[32 * MiB, 0], [31 * MiB, 0], [MiB, 0], [32 * MiB, 0]], [1, 1, 2, 3]],
    ['one large drop is one collection', [[500 * MiB, 0]], [1]],
    ['what is held when asked decides', [[60 * MiB, 400 * MiB], [0, 200 * MiB]], [0, 1]],
  ])('%s', (_, drops, collectionsAfter) => {
    let collected = 0;
    const collector = new SharedMemoryCollector(() => collected++);
    const seen = drops.map(([dropped, held]) => {
      collector.dropped(dropped as number, held as number);
      collector.collectIfDue();
      return collected;
    });
    expect(seen).toEqual(collectionsAfter);
  });

  it.each([
    // [dropped, held, collects when half due, when due]
    [15 * MiB, 0, false, false],
    [16 * MiB, 0, true, false],
    [32 * MiB, 0, true, true],
    [49 * MiB, 400 * MiB, false, false],
    [50 * MiB, 400 * MiB, true, false],
    [100 * MiB, 400 * MiB, true, true],
  ])('%d bytes dropped of %d held: collects when half due %s, when due %s', (dropped, held, whenHalfDue, whenDue) => {
    const collections = { halfDue: 0, due: 0 };
    const halfDue = new SharedMemoryCollector(() => collections.halfDue++);
    const due = new SharedMemoryCollector(() => collections.due++);
    halfDue.dropped(dropped, held);
    due.dropped(dropped, held);
    expect([halfDue.isDue(0.5), due.isDue()]).toEqual([whenHalfDue, whenDue]);
    expect([halfDue.collectIfDue(0.5), due.collectIfDue()]).toEqual([whenHalfDue, whenDue]);
    expect(collections).toEqual({ halfDue: Number(whenHalfDue), due: Number(whenDue) });
    expect([halfDue.isDue(0.5), due.isDue()]).toEqual([false, false]);
  });
});

describe('CollectionBetweenBuilds', () => {
  function between(): { clock: FakeClock; collector: SharedMemoryCollector; collections: CollectionBetweenBuilds; collected: () => number } {
    let collected = 0;
    const clock = new FakeClock();
    const collector = new SharedMemoryCollector(() => collected++);
    return { clock, collector, collections: new CollectionBetweenBuilds(collector, clock, 50), collected: () => collected };
  }

  it('collects once half due and no build was asked for the quiet time after a reply', () => {
    const { clock, collector, collections, collected } = between();
    collector.dropped(20 * MiB, 0);
    collections.buildReplied();
    expect(collected()).toBe(0);
    clock.advance(49);
    expect(collected()).toBe(0);
    clock.advance(1);
    expect(collected()).toBe(1);
    expect(clock.pending()).toBe(0);
  });

  it('holds the collection back while builds are asked for, until a reply finds it due', () => {
    const { clock, collector, collections, collected } = between();
    // [MiB dropped, then: a reply, a build asked 10 ms after it (or none), ms that pass; collections after]
    const steps: [number, boolean, number, number][] = [
      [20, true, 100, 0],
      [10, true, 100, 0],
      [2, false, 0, 1],
    ];
    for (const [dropped, asked, passing, collectedAfter] of steps) {
      collector.dropped(dropped * MiB, 0);
      collections.buildReplied();
      if (asked) {
        clock.advance(10);
        collections.buildAsked();
      }
      clock.advance(passing);
      expect(collected()).toBe(collectedAfter);
    }
    expect(clock.pending()).toBe(0);
    clock.advance(100);
    expect(collected()).toBe(1);
  });

  it('waits for nothing under half due', () => {
    const { clock, collector, collections, collected } = between();
    collector.dropped(15 * MiB, 0);
    collections.buildReplied();
    expect(clock.pending()).toBe(0);
    clock.advance(100);
    expect(collected()).toBe(0);
  });

  it('keeps one wait however many replies come in it', () => {
    const { clock, collector, collections, collected } = between();
    collector.dropped(20 * MiB, 0);
    collections.buildReplied();
    clock.advance(30);
    collections.buildReplied();
    expect(clock.pending()).toBe(1);
    clock.advance(20);
    expect(collected()).toBe(1);
  });
});

/**
 * Runs in a thread started after exposeGarbageCollectionToNewThreads, as the builder and serving
 * threads are: takes its collector from garbageCollection() as they do, drops a 64 MiB shared
 * buffer, and reports this thread's array buffer bytes with it and after the collection (V8 may
 * free them on a background thread just after: asked again for up to 10 s).
 */
const IN_A_THREAD = `
const { parentPort } = require('node:worker_threads');
import('tsx/esm/api').then(async ({ register }) => {
  register();
  const { garbageCollection } = await import(${JSON.stringify(new URL('./shared-memory-collector.ts', import.meta.url).href)});
  const found = garbageCollection();
  if (!('collect' in found)) return parentPort.postMessage({ unavailable: found.unavailable });
  found.collect();
  const before = process.memoryUsage().arrayBuffers;
  let bytes = new SharedArrayBuffer(${64 * MiB});
  new Uint8Array(bytes).fill(1);
  const held = process.memoryUsage().arrayBuffers - before;
  bytes = undefined;
  found.collect();
  let after = process.memoryUsage().arrayBuffers - before;
  for (const deadline = Date.now() + 10000; after >= ${MiB} && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    after = process.memoryUsage().arrayBuffers - before;
  }
  parentPort.postMessage({ held, after });
});
`;

describe('a thread started after exposeGarbageCollectionToNewThreads', () => {
  it('collects its heap, and the memory of a shared buffer it dropped is freed', async () => {
    exposeGarbageCollectionToNewThreads();
    const worker = new Worker(IN_A_THREAD, { eval: true });
    const seen = await new Promise<{ held?: number; after?: number; unavailable?: string }>((resolve, reject) => worker.once('message', resolve).once('error', reject));
    await worker.terminate();
    expect(seen.unavailable).toBeUndefined();
    expect(seen.held).toBeGreaterThanOrEqual(64 * MiB);
    expect(seen.after).toBeLessThan(MiB);
  });
});
