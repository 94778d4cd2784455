import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The highest nice value Linux has: the lowest priority. */
const LOWEST_PRIORITY = 19;

/**
 * Lowers the CPU priority of the calling thread alone, by `increment` nice steps from where it
 * is (at most to 19): on Linux a thread has a nice value of its own, set through its thread id,
 * which /proc/thread-self names. A thread may always lower its own priority, so this needs no
 * privilege; relative, it never raises a thread of a process started at a higher nice value.
 * Elsewhere it does nothing.
 *
 * Returns why it could not, or undefined once done.
 */
export function lowerThisThreadsPriority(increment: number): string | undefined {
  if (process.platform !== 'linux') return `thread priorities are set on Linux only, not on ${process.platform}`;
  try {
    // "<pid>/task/<tid>": a /proc of another PID namespace names other processes' threads.
    const [pid, , tid = NaN] = readlinkSync('/proc/thread-self').split('/').map(Number);
    if (pid !== process.pid || !Number.isInteger(tid) || tid <= 0) return '/proc/thread-self does not name a thread of this process';
    setPriority(tid, Math.min(LOWEST_PRIORITY, getPriority(tid) + increment));
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
