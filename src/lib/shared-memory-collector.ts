import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Memory in SharedArrayBuffers is invisible to V8's collector: a shared backing store counts
 * as no external memory in any thread that holds it (V8 leaves shared memory out so that it is
 * not counted once per thread), and it is freed only once every thread holding it has
 * collected its object. A thread that drops shared buffers and allocates little else, as the
 * serving threads do between scrapes, collects rarely, and all it dropped stays allocated
 * until then. At a million series the builder and serving threads drop some 25 MB of body
 * chunks a second while polling: the resident set grew by about 50 MiB a minute until the
 * kernel killed the process at its memory limit (docs/scaling.md). So these threads count
 * what they drop and collect once it adds up.
 */

/** Collect once this much has been dropped, even if a quarter of what is held is more. */
export const MIN_DROPPED_BYTES = 32 * 1024 * 1024;
/** Collect once the dropped bytes reach this share of the bytes still held. */
export const DROPPED_SHARE_OF_HELD = 0.25;

export class SharedMemoryCollector {
  private droppedSinceCollection = 0;

  constructor(private readonly collect: () => void) {}

  /**
   * `dropped` bytes of shared buffers were let go, `held` are still in use: collects when the
   * bytes dropped since the last collection reach a quarter of those held, or 32 MiB if that
   * is more, so the memory waiting for a collection stays a small part of the bodies.
   */
  dropped(dropped: number, held: number): void {
    this.droppedSinceCollection += dropped;
    if (this.droppedSinceCollection < Math.max(MIN_DROPPED_BYTES, held * DROPPED_SHARE_OF_HELD)) return;
    this.droppedSinceCollection = 0;
    this.collect();
  }
}

/**
 * A full collection of the calling thread's heap, or why there is none. Node exposes V8's
 * `gc` only behind --expose-gc; setting the flag now exposes it to contexts made from now on,
 * such as the one asked for it here (and the threads started later).
 */
export function garbageCollection(): { readonly collect: () => void } | { readonly unavailable: string } {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return { collect: exposed as () => void };
  try {
    setFlagsFromString('--expose-gc');
    const collect: unknown = runInNewContext('gc');
    if (typeof collect === 'function') return { collect: collect as () => void };
    return { unavailable: `V8's gc is a ${typeof collect} after --expose-gc` };
  } catch (error) {
    return { unavailable: error instanceof Error ? error.message : String(error) };
  }
}
