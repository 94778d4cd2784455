import type { BuiltFormat } from '../exposition/builder.js';
import { ChunkStore, type Chunk } from '../exposition/chunks.js';
import type { PreparedBody } from '../exposition/gzip.js';
import { bodyOfChunks, type ExpositionSnapshot } from '../exposition/store.js';

/** A snapshot as the main thread announces it: which build, and its bodies as chunk ids. */
export interface SnapshotLayout {
  readonly generation: number;
  readonly build: number;
  readonly text: BuiltFormat;
  readonly openMetrics: BuiltFormat;
}

/** What a serving thread is told of a snapshot of the main thread's store. */
export function layoutOf(snapshot: ExpositionSnapshot): SnapshotLayout {
  return { generation: snapshot.generation, build: snapshot.build, text: snapshot.layout.text, openMetrics: snapshot.layout.openMetrics };
}

export interface ServedBodies {
  readonly generation: number;
  readonly text: PreparedBody;
  readonly openMetrics: PreparedBody;
}

/**
 * A serving thread's bodies, put together from two channels that keep no order between them:
 * the chunks come from the builder thread (each batch tagged with the build that made it), the
 * snapshots from the main thread once it has taken a build. A snapshot is served once every
 * chunk it names is here; until then the last complete one is, and a newer snapshot takes the
 * place of one still waiting. Chunks of builds newer than the snapshot served are kept for the
 * snapshots to come; older ones no snapshot uses go.
 */
export class SnapshotInbox {
  private readonly chunks = new ChunkStore();

  private waiting: SnapshotLayout | undefined;
  private served: ServedBodies | undefined;
  private whenComplete: (() => void) | undefined;
  /** Settles once a snapshot can be served. */
  readonly firstComplete = new Promise<void>((resolve) => (this.whenComplete = resolve));

  /** `onDropped`: told the bytes of the chunks it let go, and of those it still holds, as it lets them go. */
  constructor(private readonly onDropped: (dropped: number, held: number) => void = () => {}) {}

  /** The bodies to write now; undefined until the first snapshot is complete. */
  get current(): ServedBodies | undefined {
    return this.served;
  }

  /** Chunks held, those waiting for their snapshot included. */
  get heldChunks(): number {
    return this.chunks.size;
  }

  chunksArrived(build: number, chunks: readonly Chunk[]): void {
    this.chunks.add(chunks, build);
    this.serveWaiting();
  }

  snapshotArrived(snapshot: SnapshotLayout): void {
    if (this.served && snapshot.generation <= this.served.generation) return;
    if (this.waiting && snapshot.generation <= this.waiting.generation) return;
    this.waiting = snapshot;
    this.serveWaiting();
  }

  private serveWaiting(): void {
    const next = this.waiting;
    if (!next) return;
    const bodies = [next.text.raw, next.text.deflated, next.openMetrics.raw, next.openMetrics.deflated];
    if (!this.chunks.holds(bodies)) return;
    this.waiting = undefined;
    this.served = {
      generation: next.generation,
      text: bodyOfChunks(this.chunks, next.text, 'text'),
      openMetrics: bodyOfChunks(this.chunks, next.openMetrics, 'OpenMetrics'),
    };
    const dropped = this.chunks.keepOnly(bodies, next.build);
    if (dropped > 0) this.onDropped(dropped, this.chunks.heldBytes);
    this.whenComplete?.();
    this.whenComplete = undefined;
  }
}
