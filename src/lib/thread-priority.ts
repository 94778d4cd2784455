import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Lowers the CPU priority of the calling thread alone: on Linux a thread has a nice value of
 * its own, set through its thread id (which /proc/thread-self names). A thread may always lower
 * its own priority, so this needs no privilege. Elsewhere it does nothing.
 *
 * Returns why it could not, or undefined once done.
 */
export function lowerThisThreadsPriority(niceness: number): string | undefined {
  if (process.platform !== 'linux') return `thread priorities are set on Linux only, not on ${process.platform}`;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    if (!Number.isInteger(tid) || tid <= 0) return 'no thread id in /proc/thread-self';
    setPriority(tid, niceness);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
