import { describe, expect, it } from 'vitest';
import type { BuiltFormat } from '../exposition/builder.js';
import type { Chunk } from '../exposition/chunks.js';
import { joinBody } from '../exposition/gzip.js';
import { SnapshotInbox, type SnapshotLayout } from './snapshot-inbox.js';

function chunk(id: number, text: string): Chunk {
  const bytes = new SharedArrayBuffer(text.length);
  Buffer.from(bytes).write(text, 'latin1');
  return { id, bytes };
}

/** A format whose raw body is `raw` (chunk ids) and whose DEFLATE data is `deflated`. */
function format(raw: number[], deflated: number[], length: number, deflatedLength: number): BuiltFormat {
  return { raw: Int32Array.from(raw), deflated: Int32Array.from(deflated), crc32: 0, length, deflatedLength };
}

/** Generation n, build 10n: text is chunks a then b, OpenMetrics the same, DEFLATE data chunk d. */
function snapshot(generation: number, a: number, b: number, d: number): SnapshotLayout {
  return { generation, build: 10 * generation, text: format([a, b], [d], 4, 1), openMetrics: format([a, b], [d], 4, 1) };
}

const text = (inbox: SnapshotInbox): string | undefined => (inbox.current ? joinBody(inbox.current.text).toString('latin1') : undefined);

describe('SnapshotInbox: bodies from the builder, layouts from the main thread, in no set order', () => {
  it('serves a snapshot whose chunks came first at once', () => {
    const inbox = new SnapshotInbox();
    inbox.chunksArrived(10, [chunk(1, 'ab'), chunk(2, 'cd'), chunk(3, 'z')]);
    inbox.snapshotArrived(snapshot(1, 1, 2, 3));
    expect([inbox.current?.generation, text(inbox)]).toEqual([1, 'abcd']);
  });

  it('keeps serving the last complete snapshot until the chunks of the next one come', () => {
    const told: [number, number][] = [];
    const inbox = new SnapshotInbox((dropped, held) => told.push([dropped, held]));
    inbox.chunksArrived(10, [chunk(1, 'ab'), chunk(2, 'cd'), chunk(3, 'z')]);
    inbox.snapshotArrived(snapshot(1, 1, 2, 3));
    inbox.snapshotArrived(snapshot(2, 1, 4, 5));
    expect([inbox.current?.generation, text(inbox)]).toEqual([1, 'abcd']);
    inbox.chunksArrived(20, [chunk(4, 'EF')]);
    expect(inbox.current?.generation).toBe(1);
    inbox.chunksArrived(20, [chunk(5, 'y')]);
    expect([inbox.current?.generation, text(inbox)]).toEqual([2, 'abEF']);
    // Chunk 2 (build 10) is used by no snapshot to come from build 20 on: gone. 3 too.
    expect(inbox.heldChunks).toBe(3);
    // Told once, when they went: 'cd' and 'z' let go, 'ab', 'EF' and 'y' held.
    expect(told).toEqual([[3, 5]]);
  });

  it('keeps the chunks of a build the main thread has not announced yet when it serves an older one', () => {
    const inbox = new SnapshotInbox();
    inbox.chunksArrived(10, [chunk(1, 'ab'), chunk(2, 'cd'), chunk(3, 'z')]);
    inbox.chunksArrived(20, [chunk(4, 'EF'), chunk(5, 'y')]);
    inbox.snapshotArrived(snapshot(1, 1, 2, 3));
    expect(inbox.heldChunks).toBe(5);
    inbox.snapshotArrived(snapshot(2, 1, 4, 5));
    expect([inbox.current?.generation, text(inbox)]).toEqual([2, 'abEF']);
  });

  it('lets a newer snapshot take the place of one still waiting, and never goes back to an older one', () => {
    const inbox = new SnapshotInbox();
    inbox.snapshotArrived(snapshot(1, 1, 2, 3));
    inbox.snapshotArrived(snapshot(2, 1, 4, 5));
    inbox.chunksArrived(10, [chunk(1, 'ab'), chunk(2, 'cd'), chunk(3, 'z')]);
    // Snapshot 1 was replaced while it waited: nothing is complete yet.
    expect(inbox.current).toBeUndefined();
    inbox.chunksArrived(20, [chunk(4, 'EF'), chunk(5, 'y')]);
    expect(inbox.current?.generation).toBe(2);
    inbox.snapshotArrived(snapshot(1, 1, 2, 3));
    expect(inbox.current?.generation).toBe(2);
  });

  it('keeps a new thread\'s first chunks, of a build the main thread has not shown yet, until that build\'s snapshot comes', async () => {
    // Started while build 20 was on its way to the main thread: every chunk of build 20 comes first, snapshot 1 (build 10) cannot be put together.
    const inbox = new SnapshotInbox();
    let complete = false;
    void inbox.firstComplete.then(() => (complete = true));
    inbox.chunksArrived(20, [chunk(1, 'ab'), chunk(4, 'EF'), chunk(5, 'y')]);
    inbox.snapshotArrived(snapshot(1, 1, 2, 3));
    await Promise.resolve();
    expect([inbox.current, complete, inbox.heldChunks]).toEqual([undefined, false, 3]);
    inbox.snapshotArrived(snapshot(2, 1, 4, 5));
    await Promise.resolve();
    expect([inbox.current?.generation, text(inbox), complete]).toEqual([2, 'abEF', true]);
  });

  it('serves the empty snapshot of a store with nothing built yet', () => {
    const inbox = new SnapshotInbox();
    inbox.snapshotArrived({ generation: 0, build: 0, text: format([], [], 0, 0), openMetrics: format([], [], 0, 0) });
    expect([inbox.current?.generation, text(inbox)]).toEqual([0, '']);
  });

  it('does not serve a snapshot whose chunks do not add up to its length, and keeps the last one', () => {
    const inbox = new SnapshotInbox();
    inbox.chunksArrived(10, [chunk(1, 'ab'), chunk(2, 'cd'), chunk(3, 'z')]);
    inbox.snapshotArrived(snapshot(1, 1, 2, 3));
    expect(() => inbox.snapshotArrived({ ...snapshot(2, 1, 2, 3), text: format([1], [3], 4, 1) })).toThrow('the text body is 2 bytes');
    expect(inbox.current?.generation).toBe(1);
  });
});
