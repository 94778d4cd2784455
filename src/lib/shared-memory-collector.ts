import { setFlagsFromString } from 'node:v8';
import type { Clock, TimerHandle } from './clock.js';

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
  private heldNow = 0;

  constructor(private readonly collect: () => void) {}

  /** `dropped` bytes of shared buffers were let go, `held` are still in use. Collects nothing. */
  dropped(dropped: number, held: number): void {
    this.droppedSinceCollection += dropped;
    this.heldNow = held;
  }

  /**
   * Whether `share` of what makes a collection due has been dropped since the last one: the
   * bytes dropped reach a quarter of those held, or 32 MiB if that is more, so the memory
   * waiting for a collection stays a small part of the bodies.
   */
  isDue(share = 1): boolean {
    return this.droppedSinceCollection >= share * this.threshold();
  }

  /**
   * Collects when due; a `share` under 1 collects earlier, for a thread with nothing else to do
   * now. True when it collected.
   */
  collectIfDue(share = 1): boolean {
    if (!this.isDue(share)) return false;
    this.droppedSinceCollection = 0;
    this.collect();
    return true;
  }

  private threshold(): number {
    return Math.max(MIN_DROPPED_BYTES, this.heldNow * DROPPED_SHARE_OF_HELD);
  }
}

/** How long the builder thread waits after a build for the next one to be asked before it collects. */
export const QUIET_AFTER_BUILD_MS = 50;
/** The share of a due collection the builder thread collects for once no build waits. */
export const QUIET_COLLECTION_SHARE = 0.5;

/**
 * The builder thread's collections, between builds where it can: one right after a build holds
 * back the next, which the main thread asks for as soon as the reply comes when changes wait
 * (at a million series such a collection took 67 ms at the median and up to 277 ms on two busy
 * cores, and a change then took up to 2 s to reach /metrics). So once half of what makes a
 * collection due waits, the thread collects when no build was asked for `quietMs` after a
 * reply; a collection that comes due all the same runs right after the reply, as before, so
 * no more memory waits than without the quiet ones.
 */
export class CollectionBetweenBuilds {
  private timer: TimerHandle | undefined;

  constructor(
    private readonly collector: SharedMemoryCollector,
    private readonly clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>,
    private readonly quietMs = QUIET_AFTER_BUILD_MS,
  ) {}

  /** A build's reply is posted. */
  buildReplied(): void {
    if (this.collector.collectIfDue()) {
      this.cancel();
      return;
    }
    if (this.timer || !this.collector.isDue(QUIET_COLLECTION_SHARE)) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.collector.collectIfDue(QUIET_COLLECTION_SHARE);
    }, this.quietMs);
  }

  /** A build is asked for: a waiting collection waits for its reply. */
  buildAsked(): void {
    this.cancel();
  }

  private cancel(): void {
    if (this.timer === undefined) return;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
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

/** What a thread without `gc` warns of, once, when it starts. */
export function noCollectionWarning(thread: string, unavailable: string): string {
  return `the bodies' dropped chunks are freed only when the ${thread} collects garbage on its own, so memory may grow: ${unavailable}`;
}
