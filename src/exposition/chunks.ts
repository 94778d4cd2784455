/**
 * A body as buffers in shared memory that any thread can write without a copy: a large
 * family's runs (32 KiB of lines) as they are, and the smaller pieces (family headers, small
 * families' lines, per-format units, each run's DEFLATE data) copied into chunks of up to
 * CHUNK_BYTES. A chunk is kept from one build to the next while the pieces it was copied from
 * are the same objects (the builder keeps the unchanged ones as they are), so a build copies
 * only the small pieces around what changed (about a chunk for each changed run's DEFLATE
 * data), and the threads that serve the bodies are handed only the new chunks. (Copying the runs into large chunks too made a build at a million series
 * copy some 100 MB, since a poll touches a run in every large family: 1.2 s a build instead of
 * 0.14 s, and the event loops starved.)
 */

export const CHUNK_BYTES = 32 * 1024;
/**
 * A piece this large that is a whole shared buffer of its own (a large family's 32 KiB run) is
 * a chunk as it is: never copied, and kept while the run lasts. A run's DEFLATE data (a sixth
 * of that or less) is copied into chunks with its neighbours': as chunks of their own they made
 * a gzip scrape at a million series some 3,500 writes, each with its own cost in the serving
 * thread, where 600 do.
 */
export const OWN_CHUNK_MIN_BYTES = 16 * 1024;

export interface Chunk {
  readonly id: number;
  readonly bytes: SharedArrayBuffer;
}

interface KeptChunk extends Chunk {
  /** The pieces it was copied from, in order. */
  readonly pieces: readonly Buffer[];
  /** The last layout that used it. */
  round: number;
}

export interface ChunkLayout {
  /** The body's chunks in order. */
  readonly ids: Int32Array;
  /** Chunks first made in this layout. */
  readonly fresh: readonly Chunk[];
  readonly length: number;
}

let lastChunkId = 0;

/** The chunk id of each shared buffer that is a chunk as it is, for as long as it lives. */
const ownChunkIds = new WeakMap<SharedArrayBuffer, number>();

function isOwnChunk(piece: Buffer): piece is Buffer & { buffer: SharedArrayBuffer } {
  return piece.length >= OWN_CHUNK_MIN_BYTES && piece.buffer instanceof SharedArrayBuffer && piece.byteOffset === 0 && piece.length === piece.buffer.byteLength;
}

function startsWith(kept: readonly Buffer[], pieces: readonly Buffer[], at: number): boolean {
  if (at + kept.length > pieces.length) return false;
  for (let i = 0; i < kept.length; i++) if (kept[i] !== pieces[at + i]) return false;
  return true;
}

/**
 * The bodies of one encoding (text and OpenMetrics) laid out as chunks, build after build.
 * The pieces both bodies hold (a large family's runs, the lines of a family that are the same
 * in both formats) go into chunks of their own that both bodies share; a chunk never mixes
 * them with pieces of one body alone (headers, per-format units).
 */
export class ChunkedBodies {
  /**
   * The chunks of the last layout by their first piece, and those of the layout under way as it
   * uses them (under a piece two chunks begin with, the one used last). Kept from layout to
   * layout and swept after each, not made anew: at a million series a layout has thousands of
   * pieces, and the maps rebuilt for them were a third of what the builder thread allocated.
   */
  private byFirstPiece = new Map<Buffer, KeptChunk>();
  /** Per piece, the last layout that held it (`round`) and in which bodies (bit per body): `round * 4 + bits`. */
  private readonly seen = new Map<Buffer, number>();
  private round = 0;
  /** Every chunk the last layout used, by id. */
  private used: ReadonlyMap<number, SharedArrayBuffer> = new Map();

  /** Lays out each body (at most two); the chunks of one can be reused by the next. */
  layOut(bodies: readonly (readonly Buffer[])[]): ChunkLayout[] {
    if (bodies.length > 2) throw new RangeError(`ChunkedBodies lays out at most two bodies at once, got ${bodies.length}`);
    // Rounds wrap so that `round * 4 + bits` stays a small integer (no boxed number per entry); an entry is swept the round after its last use.
    const round = (this.round = (this.round + 1) & 0x3ffffff);
    const seen = this.seen;
    bodies.forEach((pieces, body) => {
      const bit = 1 << body;
      for (const piece of pieces) {
        if (piece.length === 0) continue;
        const mark = seen.get(piece);
        seen.set(piece, mark !== undefined && mark >>> 2 === round ? mark | bit : round * 4 + bit);
      }
    });
    const isShared = (piece: Buffer): boolean => ((seen.get(piece) as number) & 3) === 3;
    const used = new Map<number, SharedArrayBuffer>();
    const layouts = bodies.map((pieces) => this.layOutOne(pieces.some((piece) => piece.length === 0) ? pieces.filter((piece) => piece.length > 0) : pieces, isShared, used, round));
    // forEach, not for...of: no [key, value] pair per entry. Deleting the entry being visited is safe.
    seen.forEach((mark, piece) => {
      if (mark >>> 2 !== round) seen.delete(piece);
    });
    this.byFirstPiece.forEach((chunk, piece) => {
      if (chunk.round !== round) this.byFirstPiece.delete(piece);
    });
    this.used = used;
    return layouts;
  }

  private layOutOne(pieces: readonly Buffer[], isShared: (piece: Buffer) => boolean, used: Map<number, SharedArrayBuffer>, round: number): ChunkLayout {
    const byFirstPiece = this.byFirstPiece;
    const ids: number[] = [];
    const fresh: Chunk[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let pendingShared = false;
    let length = 0;
    const use = (chunk: KeptChunk): void => {
      ids.push(chunk.id);
      used.set(chunk.id, chunk.bytes);
      chunk.round = round;
      byFirstPiece.set(chunk.pieces[0] as Buffer, chunk);
    };
    const close = (): void => {
      if (pending.length === 0) return;
      const bytes = new SharedArrayBuffer(pendingBytes);
      const view = Buffer.from(bytes);
      let at = 0;
      for (const piece of pending) at += piece.copy(view, at);
      const chunk = { id: ++lastChunkId, bytes, pieces: pending, round };
      use(chunk);
      fresh.push({ id: chunk.id, bytes });
      pending = [];
      pendingBytes = 0;
    };
    for (let i = 0; i < pieces.length; ) {
      const piece = pieces[i] as Buffer;
      const kept = byFirstPiece.get(piece);
      if (kept && startsWith(kept.pieces, pieces, i)) {
        close();
        use(kept);
        length += kept.bytes.byteLength;
        i += kept.pieces.length;
        continue;
      }
      if (isOwnChunk(piece)) {
        close();
        let id = ownChunkIds.get(piece.buffer);
        if (id === undefined) {
          id = ++lastChunkId;
          ownChunkIds.set(piece.buffer, id);
          fresh.push({ id, bytes: piece.buffer });
        } else if (!byFirstPiece.has(piece)) {
          // Known to an earlier layout that dropped it (after a reset): send it again.
          fresh.push({ id, bytes: piece.buffer });
        }
        use({ id, bytes: piece.buffer, pieces: [piece], round });
        length += piece.length;
        i++;
        continue;
      }
      const shared = isShared(piece);
      if (shared !== pendingShared) close();
      pendingShared = shared;
      pending.push(piece);
      pendingBytes += piece.length;
      length += piece.length;
      i++;
      if (pendingBytes >= CHUNK_BYTES) close();
    }
    close();
    return { ids: Int32Array.from(ids), fresh, length };
  }

  /**
   * The chunks the last layout's bodies name, by id: each once, kept chunks and whole shared
   * buffers included (the index by first piece can hold another chunk under the same piece).
   */
  usedByLastLayout(): ReadonlyMap<number, SharedArrayBuffer> {
    return this.used;
  }

  /** Forgets every chunk: the next layout copies everything (after a failed build). */
  reset(): void {
    this.byFirstPiece = new Map();
  }
}

/**
 * The chunks a thread holds, by id: those of the bodies it serves, and those of builds it has
 * not been told about yet (a serving thread gets the chunks straight from the builder thread,
 * and each snapshot's layout from the main thread: two channels, in no set order). A snapshot
 * holds its own Buffers, so forgetting a chunk never takes it from a scrape still writing it.
 *
 * `body` and `keepOnly` run on every new snapshot, with tens of thousands of ids at a million
 * series, and allocate nothing per id. (`Array.from` over the ids went through the iterator
 * protocol, an object per id, and a `Set` of the ids in use was made each time: the two
 * functions were 39% of what the main thread allocated while polling, docs/scaling.md.)
 */
export class ChunkStore {
  private readonly chunks = new Map<number, HeldChunk>();
  /** Counts `keepOnly` calls: a chunk marked with the current count is in use. */
  private round = 0;
  private bytesHeld = 0;

  /** `build`: the build that made them, for `keepOnly` to keep those of builds still to come. */
  add(fresh: readonly Chunk[], build = 0): void {
    for (const chunk of fresh) {
      this.bytesHeld += chunk.bytes.byteLength - (this.chunks.get(chunk.id)?.view.length ?? 0);
      this.chunks.set(chunk.id, { view: Buffer.from(chunk.bytes), round: this.round, build });
    }
  }

  /** Whether every chunk of these bodies is here. */
  holds(bodies: readonly Int32Array[]): boolean {
    for (const ids of bodies) for (let i = 0; i < ids.length; i++) if (!this.chunks.has(ids[i] as number)) return false;
    return true;
  }

  /** The buffers of a body, in order. */
  body(ids: Int32Array, what: string): Buffer[] {
    const views = new Array<Buffer>(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      const chunk = this.chunks.get(id);
      if (!chunk) throw new Error(`chunk ${id} of the ${what} body was never received`);
      views[i] = chunk.view;
    }
    return views;
  }

  /**
   * Keeps only the chunks of these bodies, and those added with a build after `build` (default:
   * none). Returns the bytes of the chunks it let go.
   */
  keepOnly(bodies: readonly Int32Array[], build = Infinity): number {
    const round = ++this.round;
    for (const ids of bodies) {
      for (let i = 0; i < ids.length; i++) {
        const chunk = this.chunks.get(ids[i] as number);
        if (chunk) chunk.round = round;
      }
    }
    let dropped = 0;
    // forEach, not for...of: no [id, chunk] pair per entry. Deleting the entry being visited is safe.
    this.chunks.forEach((chunk, id) => {
      if (chunk.round !== round && chunk.build <= build) {
        dropped += chunk.view.length;
        this.chunks.delete(id);
      }
    });
    this.bytesHeld -= dropped;
    return dropped;
  }

  get size(): number {
    return this.chunks.size;
  }

  /** Bytes of the chunks held. */
  get heldBytes(): number {
    return this.bytesHeld;
  }
}

interface HeldChunk {
  readonly view: Buffer;
  /** The last `keepOnly` that found it in use, or the round current when it was added. */
  round: number;
  readonly build: number;
}
