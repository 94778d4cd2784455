import { readdirSync, readFileSync } from 'node:fs';

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
 * Reads every thread of this process from /proc/self/task: its name (15 characters at most,
 * so `monapi-serving-0` reads `monapi-serving-`) and, from `schedstat`, the nanoseconds it
 * ran and those it waited on a run queue. Empty where /proc has no schedstat (not Linux, or a
 * kernel without scheduler statistics).
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

/** Which of the exporter's threads a name is; the collector's helpers and the rest summed. */
function groupOf(name: string, servingIndex: Map<number, number>, tid: number): string {
  if (name === 'MainThread') return 'main';
  if (name.startsWith('monapi-serving')) {
    if (!servingIndex.has(tid)) servingIndex.set(tid, servingIndex.size);
    return `serving-${servingIndex.get(tid)}`;
  }
  if (name === 'monapi-builder') return 'builder';
  if (name === 'V8Worker') return 'V8 helpers';
  return 'other';
}

/** Per thread (helpers summed), what ran and what waited between two readings; threads started since count from zero. */
export function threadTimesBetween(before: Map<number, Reading>, after: Map<number, Reading>): ThreadTime[] {
  const sums = new Map<string, { cpuNs: number; waitNs: number }>();
  const servingIndex = new Map<number, number>();
  for (const [tid, now] of [...after.entries()].sort((a, b) => a[0] - b[0])) {
    const then = before.get(tid);
    const group = groupOf(now.name, servingIndex, tid);
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
