import { setFlagsFromString } from 'node:v8';

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

/** The least a thread collects for: with small bodies, a collection every 32 MiB dropped. */
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
 * Has V8 give `gc` to the threads started from now on. Node offers it only behind --expose-gc;
 * the flag, set now, applies to the contexts made later, such as a new thread's. Called by the
 * main thread before it starts a thread, never by two threads at once (V8's flags are the
 * process's).
 */
export function exposeGarbageCollectionToNewThreads(): void {
  setFlagsFromString('--expose-gc');
}

/** A full collection of the calling thread's heap, or why there is none. */
export function garbageCollection(): { readonly collect: () => void } | { readonly unavailable: string } {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return { collect: exposed as () => void };
  return { unavailable: `this thread has no gc: V8's --expose-gc was not set before it started (the global gc is ${typeof exposed})` };
}
