import { describe, expect, it } from 'vitest';
import { FakeClock, flushMicrotasks } from '../lib/clock.js';
import type { Priority } from '../budget/types.js';
import { Scheduler, type Job } from './scheduler.js';

function job(id: string, cadenceMs: number, runs: string[], opts: { priority?: Priority; run?: () => Promise<void> } = {}): Job {
  return {
    id,
    source: id.split('/')[0] ?? id,
    priority: opts.priority ?? 'normal',
    cadenceMs: () => cadenceMs,
    requestsPerRun: () => 1,
    run: async () => {
      runs.push(id);
      await opts.run?.();
    },
  };
}

/** A job that completes only when the test releases it, like a request waiting for a token. */
function gatedRunner(): { run: () => Promise<void>; releaseOne: () => void; waiting: () => number } {
  const waiters: (() => void)[] = [];
  return {
    run: () => new Promise<void>((resolve) => waiters.push(resolve)),
    releaseOne: () => waiters.shift()?.(),
    waiting: () => waiters.length,
  };
}

describe('Scheduler', () => {
  it('runs a job at its cadence on the fake clock', async () => {
    const clock = new FakeClock();
    const runs: string[] = [];
    const s = new Scheduler({ clock, maxConcurrentJobs: 2 });
    s.upsert(job('a', 60_000, runs));
    s.start();
    await flushMicrotasks();
    expect(runs).toEqual(['a']);
    await clock.advanceAsync(59_000, 1000);
    expect(runs).toEqual(['a']);
    await clock.advanceAsync(1_000, 1000);
    expect(runs).toEqual(['a', 'a']);
    await clock.advanceAsync(600_000, 1000);
    expect(runs).toHaveLength(12);
    s.stop();
  });

  it('looks for due jobs once after a batch of upserts, so the batch is ranked as a whole', async () => {
    const clock = new FakeClock();
    const gate = gatedRunner();
    const ranked = async (batched: boolean): Promise<string[]> => {
      const runs: string[] = [];
      const s = new Scheduler({ clock, maxConcurrentJobs: 1 });
      s.start();
      const add = (): void => {
        s.upsert(job('bulk/1', 60_000, runs, { priority: 'bulk', run: gate.run }));
        s.upsert(job('high/1', 60_000, runs, { priority: 'high', run: gate.run }));
      };
      if (batched) s.batch(add);
      else add();
      await flushMicrotasks();
      s.stop();
      return runs;
    };
    // Unbatched, the first upsert starts at once; batched, the higher priority goes first.
    expect(await ranked(false)).toEqual(['bulk/1']);
    expect(await ranked(true)).toEqual(['high/1']);
    expect(gate.waiting()).toBe(2);
  });

  it('starts higher priority first, then the longest waiting', async () => {
    const clock = new FakeClock();
    const runs: string[] = [];
    const gate = gatedRunner();
    const s = new Scheduler({ clock, maxConcurrentJobs: 1 });
    s.upsert(job('bulk/1', 60_000, runs, { priority: 'bulk', run: gate.run }), clock.now() - 3000);
    s.upsert(job('bulk/2', 60_000, runs, { priority: 'bulk', run: gate.run }), clock.now() - 5000);
    s.upsert(job('high/1', 60_000, runs, { priority: 'high', run: gate.run }), clock.now());
    s.start();
    for (let i = 0; i < 3; i++) {
      await flushMicrotasks();
      gate.releaseOne();
    }
    await flushMicrotasks();
    expect(runs).toEqual(['high/1', 'bulk/2', 'bulk/1']);
    s.stop();
  });

  it('ranks a job by the priority of its latest upsert, and an expedited job by its new due time', async () => {
    const clock = new FakeClock();
    const runs: string[] = [];
    const gate = gatedRunner();
    const s = new Scheduler({ clock, maxConcurrentJobs: 1 });
    s.upsert(job('blocker', 60_000, runs, { run: gate.run }), clock.now() - 10_000);
    s.upsert(job('a', 60_000, runs, { priority: 'bulk', run: gate.run }), clock.now() - 5_000);
    s.upsert(job('b', 60_000, runs, { priority: 'bulk', run: gate.run }), clock.now() - 4_000);
    s.upsert(job('c', 60_000, runs, { priority: 'bulk', run: gate.run }), clock.now() + 30_000);
    s.start();
    await flushMicrotasks();
    // While the blocker runs: b becomes high priority, c is due now after all.
    s.upsert(job('b', 60_000, runs, { priority: 'high', run: gate.run }));
    s.expedite('c');
    s.remove('a');
    s.upsert(job('a', 60_000, runs, { priority: 'bulk', run: gate.run }), clock.now() - 1_000);
    for (let i = 0; i < 4; i++) {
      gate.releaseOne();
      await flushMicrotasks();
    }
    expect(runs).toEqual(['blocker', 'b', 'a', 'c']);
    s.stop();
  });

  it('starts thousands of jobs by priority, then due time, then age', async () => {
    const clock = new FakeClock();
    const runs: string[] = [];
    const s = new Scheduler({ clock, maxConcurrentJobs: 4 });
    const priorities: Priority[] = ['bulk', 'normal', 'high'];
    s.batch(() => {
      for (let i = 0; i < 3_000; i++) s.upsert(job(`j/${i}`, 60_000, runs, { priority: priorities[i % 3] }), clock.now() - ((i * 7919) % 5000));
    });
    s.start();
    for (let i = 0; i < 1_000 && runs.length < 3_000; i++) await flushMicrotasks();
    const rank = (id: string) => ({ high: 0, normal: 1, bulk: 2 })[priorities[Number(id.slice(2)) % 3] ?? 'bulk'];
    const due = (id: string) => -((Number(id.slice(2)) * 7919) % 5000);
    const expected = [...runs].sort((x, y) => rank(x) - rank(y) || due(x) - due(y) || Number(x.slice(2)) - Number(y.slice(2)));
    expect(runs).toHaveLength(3_000);
    expect(runs).toEqual(expected);
    s.stop();
  });

  it('never runs more jobs at once than allowed, and never the same job twice at once', async () => {
    const clock = new FakeClock();
    const runs: string[] = [];
    const gate = gatedRunner();
    const s = new Scheduler({ clock, maxConcurrentJobs: 3 });
    for (let i = 0; i < 10; i++) s.upsert(job(`series/${i}`, 1_000, runs, { priority: 'bulk', run: gate.run }));
    s.start();
    await clock.advanceAsync(10_000, 500);
    expect(gate.waiting()).toBe(3);
    expect(new Set(runs).size).toBe(3);
    s.stop();
  });

  it('stretches cadences fairly when jobs take longer than their cadence allows', async () => {
    const clock = new FakeClock();
    const runs: string[] = [];
    // Each run takes 1 s (a budget of 1 request per second), 30 jobs want to run every 10 s:
    // every job must still run, each about once per 30 s.
    const s = new Scheduler({ clock, maxConcurrentJobs: 1 });
    const slow = () => new Promise<void>((resolve) => clock.setTimeout(resolve, 1_000));
    for (let i = 0; i < 30; i++) s.upsert(job(`series/${i}`, 10_000, runs, { priority: 'bulk', run: slow }));
    s.start();
    await clock.advanceAsync(300_000, 250);
    const counts = new Map<string, number>();
    for (const r of runs) counts.set(r, (counts.get(r) ?? 0) + 1);
    expect(counts.size).toBe(30);
    const values = [...counts.values()];
    expect(Math.max(...values) - Math.min(...values)).toBeLessThanOrEqual(1);
    expect(runs.length).toBeGreaterThanOrEqual(295);
    s.stop();
  });

  it('reports failures and keeps the cadence after an error', async () => {
    const clock = new FakeClock();
    const outcomes: unknown[] = [];
    const s = new Scheduler({ clock, maxConcurrentJobs: 1, onOutcome: (o) => outcomes.push(o.error) });
    s.upsert({
      id: 'x',
      source: 'x',
      priority: 'normal',
      cadenceMs: () => 1_000,
      requestsPerRun: () => 1,
      run: () => Promise.reject(new Error('boom')),
    });
    s.start();
    await clock.advanceAsync(2_500, 500);
    expect(outcomes).toHaveLength(3);
    expect(String(outcomes[0])).toContain('boom');
    s.stop();
  });

  it('stops running removed jobs and aborts running ones on stop', async () => {
    const clock = new FakeClock();
    const runs: string[] = [];
    let aborted = false;
    const s = new Scheduler({ clock, maxConcurrentJobs: 2 });
    s.upsert(job('a', 1_000, runs));
    s.upsert({
      id: 'b',
      source: 'b',
      priority: 'normal',
      cadenceMs: () => 1_000,
      requestsPerRun: () => 1,
      run: (signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          });
        }),
    });
    s.start();
    await clock.advanceAsync(2_000, 500);
    s.remove('a');
    const before = runs.length;
    await clock.advanceAsync(5_000, 500);
    expect(runs.length).toBe(before);
    s.stop();
    await flushMicrotasks();
    expect(aborted).toBe(true);
  });
});

describe('Scheduler: removal while running', () => {
  it('aborts the run of a removed job and never runs one id twice at once, even when it comes back', async () => {
    const clock = new FakeClock();
    const gate = gatedRunner();
    const signals: AbortSignal[] = [];
    let concurrent = 0;
    let maxConcurrent = 0;
    const outcomes: string[] = [];
    const s = new Scheduler({ clock, maxConcurrentJobs: 4, onOutcome: (o) => outcomes.push(o.job.id) });
    const job: Job = {
      id: 'series/A',
      source: 'series',
      priority: 'bulk',
      cadenceMs: () => 60_000,
      requestsPerRun: () => 1,
      run: async (signal) => {
        signals.push(signal);
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        await gate.run();
        concurrent--;
      },
    };
    s.upsert(job);
    s.start();
    await flushMicrotasks();
    expect(signals).toHaveLength(1);

    s.remove('series/A');
    expect(signals[0]?.aborted).toBe(true);
    expect(s.has('series/A')).toBe(false);
    s.upsert(job);
    await clock.advanceAsync(5_000, 500);
    expect(signals).toHaveLength(1);

    gate.releaseOne();
    await flushMicrotasks();
    await clock.advanceAsync(1_000, 500);
    // The aborted run reported nothing; the revived job ran again at once, alone.
    expect(outcomes).toEqual([]);
    expect(signals).toHaveLength(2);
    expect(signals[1]?.aborted).toBe(false);
    expect(maxConcurrent).toBe(1);
    gate.releaseOne();
    await flushMicrotasks();
    expect(outcomes).toEqual(['series/A']);
    s.stop();
  });
});
