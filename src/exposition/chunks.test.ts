import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES, ChunkedBodies, ChunkStore, type Chunk, type ChunkLayout } from './chunks.js';

const RUN = 32 * 1024;

function piece(label: string, size = RUN): Buffer {
  return Buffer.alloc(size, label);
}

function bytesOf(layout: ChunkLayout): number {
  return layout.fresh.reduce((sum, chunk) => sum + chunk.bytes.byteLength, 0);
}

/** One body alone, laid out as the builder does both. */
class ChunkedBody {
  private readonly bodies = new ChunkedBodies();
  layOut(pieces: readonly Buffer[]): ChunkLayout {
    return this.bodies.layOut([pieces])[0] as ChunkLayout;
  }
  reset(): void {
    this.bodies.reset();
  }
}

describe('ChunkedBodies', () => {
  const pieces = Array.from({ length: 200 }, (_, i) => piece(String.fromCharCode(65 + (i % 26))));
  const whole = Buffer.concat(pieces);

  it('copies the pieces into few chunks of about CHUNK_BYTES, bytes in order', () => {
    const body = new ChunkedBody();
    const layout = body.layOut(pieces);
    const store = new ChunkStore();
    store.add(layout.fresh);
    const chunks = store.body(layout.ids, 'text');
    expect(Buffer.concat(chunks).equals(whole)).toBe(true);
    expect(layout.length).toBe(whole.length);
    expect(chunks.length).toBe(Math.ceil(whole.length / CHUNK_BYTES));
  });

  it.each([
    ['one piece replaced in the middle', (p: Buffer[]) => p.map((x, i) => (i === 100 ? piece('z') : x))],
    ['one piece appended', (p: Buffer[]) => [...p, piece('y', 100)]],
    ['one piece removed at the start', (p: Buffer[]) => p.slice(1)],
    ['ten pieces moved to the end', (p: Buffer[]) => [...p.slice(0, 50), ...p.slice(60), ...p.slice(50, 60)]],
  ])('after %s, copies about what changed and keeps the other chunks', (_, change) => {
    const body = new ChunkedBody();
    const store = new ChunkStore();
    const first = body.layOut(pieces);
    store.add(first.fresh);
    const next = change(pieces);
    const second = body.layOut(next);
    store.add(second.fresh);
    store.keepOnly([second.ids]);
    expect(Buffer.concat(store.body(second.ids, 'text')).equals(Buffer.concat(next))).toBe(true);
    expect(bytesOf(second)).toBeLessThanOrEqual(4 * CHUNK_BYTES);
    expect(store.size).toBe(second.ids.length);
  });

  it('skips empty pieces and sends everything again after a reset', () => {
    const body = new ChunkedBody();
    const first = body.layOut([Buffer.alloc(0), ...pieces, Buffer.alloc(0)]);
    expect(first.length).toBe(whole.length);
    expect(bytesOf(body.layOut(pieces))).toBe(0);
    body.reset();
    expect(bytesOf(body.layOut(pieces))).toBe(whole.length);
  });

  it('shares the chunks of the pieces both bodies hold, and keeps the pieces of one body out of them', () => {
    const bodies = new ChunkedBodies();
    const headers = (format: string) => Array.from({ length: 4 }, (_, f) => piece(`${format}${f}`, 40));
    const [text, openMetrics] = [headers('t'), headers('o')].map((own) => own.flatMap((header, f) => [header, ...pieces.slice(f * 50, f * 50 + 50)]));
    const [first, second] = bodies.layOut([text!, openMetrics!]) as [ChunkLayout, ChunkLayout];
    const store = new ChunkStore();
    store.add([...first.fresh, ...second.fresh]);
    expect(Buffer.concat(store.body(first.ids, 'text')).equals(Buffer.concat(text!))).toBe(true);
    expect(Buffer.concat(store.body(second.ids, 'OpenMetrics')).equals(Buffer.concat(openMetrics!))).toBe(true);
    // The second body brings only its four headers.
    expect(bytesOf(second)).toBe(4 * 40);
    expect(second.ids.length).toBe(first.ids.length);
    // The next build of the same pieces copies nothing.
    const again = bodies.layOut([text!, openMetrics!]);
    expect(again.map(bytesOf)).toEqual([0, 0]);
  });

  it('tells shared pieces by the layout at hand, not by an earlier one', () => {
    const bodies = new ChunkedBodies();
    const [s, x, b, c] = ['s', 'x', 'b', 'c'].map((label) => piece(label, 100)) as [Buffer, Buffer, Buffer, Buffer];
    // s and x in both bodies: one chunk both share.
    const [first, firstOther] = bodies.layOut([[s, x], [s, x]]) as [ChunkLayout, ChunkLayout];
    expect([...first.ids]).toEqual([...firstOther.ids]);
    expect(first.ids.length).toBe(1);
    // x now in the first body alone (and no chunk begins with it): copied with c, one chunk of that body.
    const [second] = bodies.layOut([[c, x], [b]]) as [ChunkLayout, ChunkLayout];
    expect(second.ids.length).toBe(1);
    expect(bytesOf(second)).toBe(200);
  });

  it('copies again the pieces of a chunk a layout in between did not use', () => {
    const bodies = new ChunkedBodies();
    const [a, b] = ['a', 'b'].map((label) => piece(label, 100)) as [Buffer, Buffer];
    bodies.layOut([[a], [b]]);
    expect(bodies.layOut([[a], [b]]).map(bytesOf)).toEqual([0, 0]);
    bodies.layOut([[b], [b]]);
    expect(bodies.layOut([[a], [b]]).map(bytesOf)).toEqual([100, 0]);
  });

  it('says which chunk a thread never received', () => {
    const store = new ChunkStore();
    expect(() => store.body(Int32Array.of(123456), 'OpenMetrics')).toThrow('chunk 123456 of the OpenMetrics body was never received');
  });

  it('keeps the chunks any of the bodies uses, round after round, and forgets the others', () => {
    const chunk = (id: number): Chunk => ({ id, bytes: new SharedArrayBuffer(id) });
    const store = new ChunkStore();
    store.add([1, 2, 3, 4, 5].map(chunk));
    expect(store.heldBytes).toBe(15);
    // Each chunk of n bytes: what goes is counted (3 and 5), what stays is held (1, 2 and 4).
    expect(store.keepOnly([Int32Array.of(1, 2), Int32Array.of(2, 4)])).toBe(8);
    expect([store.size, store.holds([Int32Array.of(1, 2, 4)]), store.heldBytes]).toEqual([3, true, 7]);
    // A chunk added after a round is kept by the next round that uses it; one sent again is held once.
    store.add([chunk(6), chunk(4)]);
    expect(store.heldBytes).toBe(13);
    expect(store.keepOnly([Int32Array.of(4, 6)])).toBe(3);
    expect([store.size, store.holds([Int32Array.of(4, 6)]), store.heldBytes]).toEqual([2, true, 10]);
    expect(store.body(Int32Array.of(6, 4), 'text').map((view) => view.length)).toEqual([6, 4]);
    // An id never received is skipped without error; 4, no longer used, is dropped.
    expect(store.keepOnly([Int32Array.of(6, 7)])).toBe(4);
    expect([store.size, store.holds([Int32Array.of(6)]), store.heldBytes]).toEqual([1, true, 6]);
    expect(() => store.body(Int32Array.of(4), 'text')).toThrow('chunk 4 of the text body was never received');
  });

  it('keeps the chunks of builds after the one shown, and tells whether a body is all there', () => {
    const chunk = (id: number): Chunk => ({ id, bytes: new SharedArrayBuffer(id) });
    const store = new ChunkStore();
    store.add([chunk(1), chunk(2)], 7);
    store.add([chunk(3)], 8);
    store.add([chunk(4)], 9);
    expect(store.holds([Int32Array.of(1, 3), Int32Array.of(4)])).toBe(true);
    expect(store.holds([Int32Array.of(1), Int32Array.of(5)])).toBe(false);
    // Build 8 shown: 2 (build 7, unused) goes; 4 (build 9, not shown yet) stays.
    store.keepOnly([Int32Array.of(1, 3)], 8);
    expect([store.size, store.holds([Int32Array.of(1, 3, 4)])]).toEqual([3, true]);
    store.keepOnly([Int32Array.of(4)], 9);
    expect([store.size, store.holds([Int32Array.of(4)])]).toEqual([1, true]);
  });
});

describe('the chunks of the last layout', () => {
  const ids = (used: ReadonlyMap<number, SharedArrayBuffer>): number[] => [...used.keys()].sort((a, b) => a - b);
  const named = (layouts: readonly ChunkLayout[]): number[] => [...new Set(layouts.flatMap((layout) => [...layout.ids]))].sort((a, b) => a - b);

  it('are every chunk its bodies name, once each, whole shared buffers included, and stay through a reset', () => {
    const shared = Array.from({ length: 6 }, (_, i) => piece(String.fromCharCode(97 + i), 20_000));
    const own = Buffer.from(new SharedArrayBuffer(RUN)).fill('R');
    const bodies = new ChunkedBodies();
    const layOut = (): ChunkLayout[] => bodies.layOut([[piece('T', 100), ...shared, own], [piece('O', 100), ...shared, own]]);
    layOut();
    const layouts = layOut();
    expect(ids(bodies.usedByLastLayout())).toEqual(named(layouts));
    expect([...bodies.usedByLastLayout().values()]).toContain(own.buffer);
    bodies.reset();
    expect(ids(bodies.usedByLastLayout())).toEqual(named(layouts));
  });

  it('hold two chunks that start with the same piece, and not those the last layout dropped', () => {
    // The same shared pieces in another order in each body: two chunks begin with p.
    const [p, q, r] = ['p', 'q', 'r'].map((label) => piece(label, 1_000)) as [Buffer, Buffer, Buffer];
    const bodies = new ChunkedBodies();
    const first = bodies.layOut([[p, q, r], [p, r, q]]);
    expect(named(first)).toHaveLength(2);
    expect(ids(bodies.usedByLastLayout())).toEqual(named(first));
    const second = bodies.layOut([[piece('x', 1_000)], [piece('y', 1_000)]]);
    expect(ids(bodies.usedByLastLayout())).toEqual(named(second));
    expect(named(second).some((id) => named(first).includes(id))).toBe(false);
  });
});

describe('a run in shared memory', () => {
  const run = (label: string): Buffer => {
    const piece = Buffer.from(new SharedArrayBuffer(RUN));
    piece.fill(label);
    return piece;
  };

  it('is a chunk as it is: never copied, sent once, kept while it lasts', () => {
    const bodies = new ChunkedBodies();
    const runs = Array.from({ length: 40 }, (_, i) => run(String.fromCharCode(97 + (i % 26))));
    const header = piece('#', 30);
    const [first] = bodies.layOut([[header, ...runs]]) as [ChunkLayout];
    // The runs are sent as the very buffers they are, the header in a chunk of its own.
    expect(first.fresh.filter((chunk) => runs.some((r) => r.buffer === chunk.bytes))).toHaveLength(40);
    expect(first.ids.length).toBe(41);
    const changed = [...runs.slice(0, 20), run('z'), ...runs.slice(21)];
    const [second] = bodies.layOut([[header, ...changed]]) as [ChunkLayout];
    expect(second.fresh.map((chunk) => chunk.bytes)).toEqual([changed[20]?.buffer]);
    const store = new ChunkStore();
    store.add([...first.fresh, ...second.fresh]);
    expect(Buffer.concat(store.body(second.ids, 'text')).equals(Buffer.concat([header, ...changed]))).toBe(true);
    bodies.reset();
    const [third] = bodies.layOut([[header, ...changed]]) as [ChunkLayout];
    expect(third.fresh).toHaveLength(41);
  });
});
