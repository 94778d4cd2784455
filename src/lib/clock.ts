/**
 * Time enters the program only through this interface, so planning, budgeting and
 * mapping can be tested on a fake clock without real timers.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    const timer = setTimeout(callback, ms);
    timer.unref?.();
    return { id: Number(timer[Symbol.toPrimitive]()) };
  },
  clearTimeout(handle) {
    clearTimeout(handle.id);
  },
};

interface PendingTimer {
  id: number;
  due: number;
  callback: () => void;
}

/**
 * A manual clock for tests. `advance` fires due timers in order of their due time,
 * moving `now` to each timer's due time before it fires.
 */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private timers: PendingTimer[] = [];

  constructor(startMs = Date.UTC(2026, 10, 22, 12, 0, 0)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.push({ id, due: this.current + Math.max(0, ms), callback });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle.id);
  }

  /** Number of timers not yet fired. */
  pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const next = this.earliestDue(target);
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = Math.max(this.current, next.due);
      next.callback();
    }
    this.current = target;
  }

  /**
   * Like `advance`, but lets promise continuations run between timers, so code that
   * awaits between timeouts makes progress as it would on a real clock.
   */
  async advanceAsync(ms: number, stepMs = ms): Promise<void> {
    const target = this.current + ms;
    while (this.current < target) {
      const step = Math.min(stepMs, target - this.current);
      await flushMicrotasks();
      this.advance(step);
      await flushMicrotasks();
    }
  }

  private earliestDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.timers) {
      if (t.due <= limit && (!best || t.due < best.due || (t.due === best.due && t.id < best.id))) {
        best = t;
      }
    }
    return best;
  }
}

export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

/**
 * Real time, sped up: `factor` simulated milliseconds pass per real millisecond. The demo
 * and the end-to-end test run the simulator and the exporter on one of these, so minutes
 * of upstream data (and the ingest delay) pass in seconds while everything stays real I/O.
 */
export class ScaledClock implements Clock {
  readonly realStartMs = Date.now();

  constructor(
    readonly factor: number,
    readonly startMs = Date.now(),
  ) {
    if (!Number.isFinite(factor) || factor <= 0) throw new RangeError(`clock speed factor must be a positive number, got ${factor}`);
  }

  now(): number {
    return this.startMs + (Date.now() - this.realStartMs) * this.factor;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    return systemClock.setTimeout(callback, Math.max(0, ms) / this.factor);
  }

  clearTimeout(handle: TimerHandle): void {
    systemClock.clearTimeout(handle);
  }
}
