import { readdirSync, readFileSync } from 'node:fs';
import { BUILDER_THREAD_NAME } from '../../src/exposition/builder-client.js';
import { SERVING_THREAD_NAME } from '../../src/server/serving-threads.js';

/** CPU time and time spent runnable but waiting for a core, of one thread (Linux schedstat). */
export interface ThreadTime {
  readonly thread: string;
  readonly cpuSeconds: number;
  readonly waitingSeconds: number;
}

interface Reading {
  readonly name: string;
  readonly cpuNs: number;
  readonly waitNs: number;
}

/**
 * Reads every thread of this process from /proc/self/task: its name (Linux keeps 15
 * characters of it) and, from `schedstat`, the nanoseconds it ran and those it waited on a run
 * queue. Empty where /proc has no schedstat (not Linux, or a kernel without scheduler
 * statistics).
 */
export function readThreads(): Map<number, Reading> {
  const threads = new Map<number, Reading>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const [cpuNs = NaN, waitNs = NaN] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
      if (Number.isFinite(cpuNs) && Number.isFinite(waitNs)) threads.set(Number(tid), { name, cpuNs, waitNs });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/** Which of the exporter's threads a name is (a serving thread by its index); the collector's helpers and the rest summed. */
function groupOf(name: string): string {
  if (name === 'MainThread') return 'main';
  if (name.startsWith(SERVING_THREAD_NAME)) return `serving-${name.slice(SERVING_THREAD_NAME.length)}`;
  if (name === BUILDER_THREAD_NAME) return 'builder';
  if (name === 'V8Worker') return 'V8 helpers';
  return 'other';
}

/**
 * Per thread (helpers summed), what ran and what waited between two readings. A thread started
 * since counts from zero (also one that took the id of a thread that ended); what a thread that
 * ended in between did is not counted.
 */
export function threadTimesBetween(before: Map<number, Reading>, after: Map<number, Reading>): ThreadTime[] {
  const sums = new Map<string, { cpuNs: number; waitNs: number }>();
  for (const [tid, now] of after) {
    const known = before.get(tid);
    const then = known && known.name === now.name && known.cpuNs <= now.cpuNs && known.waitNs <= now.waitNs ? known : undefined;
    const group = groupOf(now.name);
    const sum = sums.get(group) ?? { cpuNs: 0, waitNs: 0 };
    sum.cpuNs += now.cpuNs - (then?.cpuNs ?? 0);
    sum.waitNs += now.waitNs - (then?.waitNs ?? 0);
    sums.set(group, sum);
  }
  return [...sums.entries()].map(([thread, sum]) => ({ thread, cpuSeconds: sum.cpuNs / 1e9, waitingSeconds: sum.waitNs / 1e9 }));
}

/** Sums the same threads over several windows (the rounds of a variant). */
export function sumThreadTimes(windows: readonly (readonly ThreadTime[])[]): ThreadTime[] {
  const sums = new Map<string, { cpuSeconds: number; waitingSeconds: number }>();
  for (const window of windows) {
    for (const time of window) {
      const sum = sums.get(time.thread) ?? { cpuSeconds: 0, waitingSeconds: 0 };
      sum.cpuSeconds += time.cpuSeconds;
      sum.waitingSeconds += time.waitingSeconds;
      sums.set(time.thread, sum);
    }
  }
  return [...sums.entries()].map(([thread, sum]) => ({ thread, ...sum }));
}
