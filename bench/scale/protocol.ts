/** Messages between bench/scale.ts and the processes it starts. */
import type { ThreadTime } from './thread-times.js';

export interface LoopDelay {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Delay samples taken (one per millisecond of the event loop's life, at most). */
  readonly samples: number;
}

export interface ExporterStats {
  readonly series: number;
  readonly generation: number;
  readonly renderSeconds: number;
  readonly ready: boolean;
  readonly loop: LoopDelay;
  /** Each serving thread's event-loop delay since the last reset (none when the main thread serves). */
  readonly servingLoops: readonly LoopDelay[];
  /** CPU time of the exporter's process since the last reset. */
  readonly cpuSeconds: number;
  /** Per thread of the exporter's process since the last reset: CPU time, and time runnable but waiting for a core (Linux; empty elsewhere). */
  readonly threads: readonly ThreadTime[];
  readonly wallSeconds: number;
  /** Of the main thread (`rss`: of the process). */
  readonly memory: NodeJS.MemoryUsage;
  /** The process's largest resident set so far (Linux's VmHWM; undefined where /proc is not there). */
  readonly peakRss: number | undefined;
  /** V8 heap of the exposition builder thread (not in `memory.heapUsed`). */
  readonly builderHeapUsed: number;
  /** After loading the modules, before starting the exporter. */
  readonly bootMemory: NodeJS.MemoryUsage;
  /** Publish to the snapshot that serves it, over the publishes since the last reset. */
  readonly visible: { readonly count: number; readonly p50Ms: number; readonly p99Ms: number; readonly maxMs: number };
  /** Rebuilds since the last reset: how many, their mean wall time, and the raw bytes each compressed on average. */
  readonly rebuilds: { readonly count: number; readonly meanMs: number; readonly maxMs: number; readonly meanCompressedBytes: number };
  /** The longest stalls of the main thread since the last reset, longest first: when each ended (µs of the monotonic clock the --cpu-prof profiles use) and how long. */
  readonly stalls: readonly { readonly endedAtUs: number; readonly ms: number }[];
  /** Garbage-collection pauses of the main thread since the last reset. */
  readonly gc: {
    readonly count: number;
    readonly totalMs: number;
    readonly maxMs: number;
    readonly maxKind: string;
    /** Pauses per kind (and reason, where V8 gives one), e.g. "mark-compact: external memory". */
    readonly byKind: Readonly<Record<string, number>>;
    /** How much the main thread's external memory rose from one batch of collections to the next, its falls left out. */
    readonly externalRiseBytes: number;
  };
}

/**
 * Which sampled allocations a profile keeps: `all`, collected ones included; `old`, those no
 * scavenge collected: what is still held at the end, what was promoted, and the dead young
 * objects a full collection swept, so it follows the allocation rate too; `live`, what is still
 * held after a collection when sampling stops.
 */
export type AllocationKind = 'all' | 'old' | 'live';

export type ExporterRequest =
  | { readonly type: 'reset' }
  | { readonly type: 'stats' }
  | { readonly type: 'gc' }
  | { readonly type: 'heap-snapshot'; readonly path: string }
  /** `intervalBytes`: one sample per this many bytes allocated, on average. */
  | { readonly type: 'allocations-start'; readonly kind: AllocationKind; readonly intervalBytes: number }
  | { readonly type: 'allocations-stop'; readonly path: string }
  | { readonly type: 'stop' };

export type ExporterMessage =
  | { readonly type: 'ready'; readonly url: string; readonly servingThreads: number }
  | { readonly type: 'reset' }
  | { readonly type: 'stats'; readonly stats: ExporterStats }
  | { readonly type: 'heap-snapshot'; readonly path: string }
  | { readonly type: 'allocations-start' }
  | { readonly type: 'allocations-stop'; readonly path: string };

export interface PromClientReady {
  readonly type: 'ready';
  readonly url: string;
  readonly series: number;
  /** V8 heap the registry added, after garbage collection. */
  readonly heapBytes: number;
  readonly loadSeconds: number;
}
