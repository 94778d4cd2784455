import bcrypt from 'bcryptjs';
import { afterAll, describe, expect, it } from 'vitest';
import { FailureThrottle, PasswordVerifier } from './password-check.js';

const HASH = bcrypt.hashSync('right', 10);
const verifier = new PasswordVerifier(1, 4);
afterAll(() => verifier.close());

describe('PasswordVerifier', () => {
  it('checks on its own thread: the event loop stays free while bcrypt runs', async () => {
    const cpuMicros = (since: NodeJS.CpuUsage): number => {
      const used = process.threadCpuUsage(since);
      return used.user + used.system;
    };
    const beforeOne = process.threadCpuUsage();
    expect(bcrypt.compareSync('right', HASH)).toBe(true);
    const oneCheckOnThisThread = cpuMicros(beforeOne);
    const beforeThree = process.threadCpuUsage();
    const results = await Promise.all([verifier.verify('right', HASH), verifier.verify('wrong', HASH), verifier.verify('wrong', HASH)]);
    const threeChecksAway = cpuMicros(beforeThree);
    expect(results).toEqual([true, false, false]);
    // On this thread three checks would cost three times one. CPU time, not delays: a thread
    // waiting for a core on a busy machine spends none.
    expect(threeChecksAway).toBeLessThan(oneCheckOnThisThread / 2);
  });

  it('refuses more than its queue holds instead of queueing without bound', async () => {
    const made = Array.from({ length: 8 }, () => verifier.verify('wrong', HASH, { standing: 2 }));
    // One on the thread, four queued; the rest are told to come back.
    expect(made.filter((p) => p === undefined)).toHaveLength(3);
    expect(await Promise.all(made.filter((p) => p !== undefined))).toEqual([false, false, false, false, false]);
  });

  it('serves addresses without failures first, newest first, pushing the oldest of them out when full', async () => {
    const failing = verifier.verify('wrong', HASH, { standing: 2 });
    const clean = Array.from({ length: 6 }, () => verifier.verify('wrong', HASH, { standing: 1 }));
    const known = verifier.verify('right', HASH, { standing: 0 });
    const settled = await Promise.allSettled([failing, ...clean, known].map((p) => p ?? Promise.reject(new Error('refused'))));
    // The failing one reached the idle thread first; the fifth and sixth clean ones pushed out the two oldest; the known one went next.
    expect(settled[0]).toEqual({ status: 'fulfilled', value: false });
    expect(settled.slice(1, 7).map((r) => (r.status === 'rejected' ? (r.reason as Error).name : r.value))).toEqual(['CheckShedError', 'CheckShedError', false, false, false, false]);
    expect(settled[7]).toEqual({ status: 'fulfilled', value: true });
  });
});

describe('FailureThrottle', () => {
  it('allows a burst per address, then one per refill interval; a refund gives one back', () => {
    let now = 1_000;
    const throttle = new FailureThrottle(2, 1_000, () => now);
    expect([throttle.take('a'), throttle.take('a'), throttle.take('a')]).toEqual([0, 0, 1_000]);
    expect(throttle.take('b')).toBe(0);
    now += 500;
    expect(throttle.take('a')).toBe(500);
    throttle.refund('a');
    expect(throttle.take('a')).toBe(0);
  });

  it('forgets the least recently seen address beyond its size', () => {
    const throttle = new FailureThrottle(1, 60_000, () => 0, 2);
    throttle.take('a');
    throttle.take('b');
    throttle.take('c');
    expect(throttle.take('a')).toBe(0);
    expect(throttle.take('c')).toBe(60_000);
  });
});
