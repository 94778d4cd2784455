import { describe, expect, it } from 'vitest';
import { PriorityQueue } from './priority-queue.js';
import type { Priority } from './types.js';

interface Item {
  seq: number;
  priority: Priority;
}

let nextSeq = 0;
function item(priority: Priority, seq = nextSeq++): Item {
  return { seq, priority };
}

function order(q: PriorityQueue<Item>, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const next = q.shift();
    if (next) out.push(`${next.priority}${next.seq}`);
  }
  return out;
}

describe('PriorityQueue', () => {
  it('serves high before normal before bulk, FIFO within each', () => {
    const q = new PriorityQueue<Item>(100);
    for (const [p, seq] of [['bulk', 1], ['normal', 2], ['high', 3], ['bulk', 4], ['high', 5]] as const) {
      q.push(item(p, seq));
    }
    expect(order(q, 5)).toEqual(['high3', 'high5', 'normal2', 'bulk1', 'bulk4']);
    expect(q.shift()).toBeUndefined();
  });

  it('puts a retried request back at its original place in its lane', () => {
    const q = new PriorityQueue<Item>(100);
    q.push(item('bulk', 10));
    q.push(item('bulk', 12));
    q.push(item('bulk', 7));
    expect(order(q, 3)).toEqual(['bulk7', 'bulk10', 'bulk12']);
  });

  it('lets the oldest bulk request through after it has been passed over starvationLimit times', () => {
    const q = new PriorityQueue<Item>(3);
    q.push(item('bulk', 0));
    q.push(item('bulk', 1));
    for (let i = 0; i < 20; i++) q.push(item('high', 100 + i));
    expect(order(q, 8)).toEqual(['high100', 'high101', 'high102', 'bulk0', 'high103', 'high104', 'high105', 'bulk1']);
  });

  it('gives each lower priority a share under constant high demand', () => {
    const q = new PriorityQueue<Item>(8);
    for (let i = 0; i < 50; i++) q.push(item('normal', 1_000 + i));
    for (let i = 0; i < 50; i++) q.push(item('bulk', 2_000 + i));
    const served: Record<Priority, number> = { high: 0, normal: 0, bulk: 0 };
    for (let i = 0; i < 900; i++) {
      q.push(item('high', 10_000 + i));
      const next = q.shift();
      if (next) served[next.priority]++;
    }
    expect(served.normal).toBeGreaterThanOrEqual(50);
    expect(served.bulk).toBeGreaterThanOrEqual(50);
    expect(served.high).toBeGreaterThan(served.normal + served.bulk);
  });

  it('does not promote a request that arrives after its lane drained (the count resets)', () => {
    const q = new PriorityQueue<Item>(2);
    q.push(item('bulk', 0));
    q.push(item('high', 1));
    q.push(item('high', 2));
    expect(order(q, 3)).toEqual(['high1', 'high2', 'bulk0']);
    q.push(item('high', 3));
    q.push(item('bulk', 4));
    q.push(item('high', 5));
    expect(order(q, 3)).toEqual(['high3', 'high5', 'bulk4']);
  });

  it('counts and drains by priority', () => {
    const q = new PriorityQueue<Item>(8);
    q.push(item('high'));
    q.push(item('bulk'));
    q.push(item('bulk'));
    expect([q.size('high'), q.size('normal'), q.size('bulk'), q.size()]).toEqual([1, 0, 2, 3]);
    expect(q.drain().map((i) => i.priority)).toEqual(['high', 'bulk', 'bulk']);
    expect(q.size()).toBe(0);
  });
});
