/**
 * Work that arrives in bursts, one piece per turn of the event loop. Responses that complete
 * together (every socket readable in one poll of the loop) would otherwise be decoded,
 * mapped and published back to back in one task: at 1M series 20 to 50 of them, holding the
 * loop for 150-250 ms while scrapes and health probes wait. Each `next()` resolves in its
 * own check phase, so timers and sockets are served between two pieces.
 */
export class Turns {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  /** Resolves on a later turn of the loop, after the pieces that asked before it. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0) return;
    this.scheduled = true;
    // An immediate set from inside an immediate runs on the next turn, not in this check phase.
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()?.();
      this.schedule();
    });
  }
}

/** The process's one queue of turns: there is one event loop. */
export const responseTurns = new Turns();

/** Lets the event loop serve what waits (a health probe, a socket) between two pieces of long work. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Long work in pieces, with the event loop served once the pieces since it last was took
 * `sliceMs`: a yield after every piece would cost a turn per piece (thousands of accounts, each
 * turn behind whatever else waits) where the pieces are short.
 */
export class TimeSlices {
  private startedAt = performance.now();

  constructor(private readonly sliceMs: number) {}

  async afterPiece(): Promise<void> {
    if (performance.now() - this.startedAt < this.sliceMs) return;
    await yieldToEventLoop();
    this.startedAt = performance.now();
  }
}
