import type { Priority } from './types.js';

export const PRIORITIES: readonly Priority[] = ['high', 'normal', 'bulk'];

export interface Queued {
  /** Arrival order; a retried request keeps its original number and so its place. */
  readonly seq: number;
  readonly priority: Priority;
}

/**
 * Strict priority, FIFO within a priority, with one anti-starvation rule: every time a
 * request is dispatched while a lower priority has requests waiting, that lower priority
 * is "passed over" once; after `starvationLimit` passes, its oldest request goes next.
 * Under constant high-priority demand a lower priority thus still gets at least one
 * dispatch in `starvationLimit + 1`, and it costs the higher priorities nothing when the
 * queue is short.
 */
export class PriorityQueue<T extends Queued> {
  private readonly lanes: Record<Priority, T[]> = { high: [], normal: [], bulk: [] };
  private readonly passedOver: Record<Priority, number> = { high: 0, normal: 0, bulk: 0 };

  constructor(private readonly starvationLimit: number) {}

  push(item: T): void {
    const lane = this.lanes[item.priority];
    let i = lane.length;
    while (i > 0 && (lane[i - 1]?.seq ?? -Infinity) > item.seq) i--;
    lane.splice(i, 0, item);
  }

  /** Removes and returns the request that should be dispatched next. */
  shift(): T | undefined {
    const chosen = this.choose();
    if (chosen === undefined) return undefined;
    const rank = PRIORITIES.indexOf(chosen);
    for (const lower of PRIORITIES.slice(rank + 1)) {
      if (this.lanes[lower].length > 0) this.passedOver[lower]++;
    }
    this.passedOver[chosen] = 0;
    return this.lanes[chosen].shift();
  }

  size(priority?: Priority): number {
    if (priority !== undefined) return this.lanes[priority].length;
    return this.lanes.high.length + this.lanes.normal.length + this.lanes.bulk.length;
  }

  /** Removes and returns everything, oldest first within each priority. */
  drain(): T[] {
    const all = [...this.lanes.high, ...this.lanes.normal, ...this.lanes.bulk];
    for (const p of PRIORITIES) {
      this.lanes[p] = [];
      this.passedOver[p] = 0;
    }
    return all;
  }

  private choose(): Priority | undefined {
    for (const p of ['normal', 'bulk'] as const) {
      if (this.lanes[p].length > 0 && this.passedOver[p] >= this.starvationLimit) return p;
    }
    return PRIORITIES.find((p) => this.lanes[p].length > 0);
  }
}
