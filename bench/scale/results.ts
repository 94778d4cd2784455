import type { DecodeResult } from './decode.js';
import type { CgroupFigures } from './memory-limit.js';
import type { ExporterStats, LoopDelay } from './protocol.js';
import type { ThreadTime } from './thread-times.js';

/** Everything one harness run measured; written as JSON next to the Markdown report. */

/** Publish to snapshot over one window, and the rebuilds that made those snapshots. */
export type VisibilityWindow = ExporterStats['visible'] & { readonly rebuilds?: ExporterStats['rebuilds'] };

export interface LatencyFigures {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly requests: number;
  readonly perSecond: number;
  /** Every counted answer was a 200 of the full length (see `fullLengthProblem`). */
  readonly fullLength200: boolean;
}

export interface VariantResult {
  readonly id: string;
  readonly label: string;
  readonly bodyBytes: number;
  readonly exporter: LatencyFigures;
  readonly nginx: LatencyFigures;
  /** Event-loop delay of the exporter while it was scraped (and kept polling): the worst round. */
  readonly loop: LoopDelay;
  /** The serving threads' event-loop delay meanwhile: the worst thread's, the worst round's; undefined without serving threads. */
  readonly servingLoop: LoopDelay | undefined;
  readonly exporterCpuShare: number;
  /** Per thread of the exporter, summed over the rounds: CPU time and time runnable but waiting for a core. */
  readonly threads: readonly ThreadTime[];
  /** The wall time those rounds took. */
  readonly wallSeconds: number;
}

export interface PromClientResult {
  readonly series: number;
  readonly heapBytes: number;
  readonly loadSeconds: number;
  /** Scraped like the exporter (8 connections) when small enough; otherwise one scraper. */
  readonly scrapers: number;
  readonly latency: LatencyFigures;
}

export interface StepResult {
  readonly targetSeries: number;
  readonly accounts: number;
  readonly hostsPerAccount: number;
  readonly websitesPerAccount: number;
  readonly simulators: number;
  readonly series: number;
  readonly fillSeconds: number;
  /** Upstream traffic at the real per-key pace while measuring. */
  readonly upstream: { readonly requestsPerSecond: number; readonly bytesPerSecond: number };
  readonly polling: { readonly loop: LoopDelay; readonly servingLoop: LoopDelay | undefined; readonly cpuShare: number; readonly seconds: number; readonly threads: readonly ThreadTime[] };
  /** `heapUsed` counts both threads' V8 heaps: the serving thread's and the builder thread's. */
  readonly memory: {
    readonly heapUsed: number;
    readonly builderHeapUsed: number;
    readonly bootHeapUsed: number;
    readonly external: number;
    readonly arrayBuffers: number;
    readonly rss: number;
    /** The largest resident set of the step, filling and scrapes included (Linux). */
    readonly peakRss?: number;
    /** With --exporter-cgroup: the limit the step ran under, and what the kernel saw. */
    readonly cgroup?: CgroupFigures;
  };
  /** Publish to snapshot while filling (everything open), polling at the real pace, and scraped meanwhile. */
  readonly visibility: { readonly fill: VisibilityWindow; readonly polling: VisibilityWindow; readonly underLoad: VisibilityWindow };
  readonly renderSeconds: number;
  readonly variants: readonly VariantResult[];
  readonly promClient: PromClientResult | undefined;
  /** Why prom-client was not measured at this step, when it was not. */
  readonly promClientSkipped?: string;
}

export interface RunResult {
  readonly date: string;
  readonly machine: { readonly cpu: string; readonly cores: number; readonly memoryBytes: number; readonly loadAtStart: readonly number[]; readonly loadAtEnd: readonly number[] };
  readonly node: string;
  readonly tools: { readonly nginx: string; readonly wrk: string };
  readonly settings: {
    readonly connections: number;
    readonly scrapeSeconds: number;
    readonly rounds: number;
    readonly pollingSeconds: number;
    readonly pacePerMinute: number;
    readonly paceBurst: number;
    readonly command: string;
    /** Threads serving the exporter's port (`--web.serving-threads`); 0: its main thread serves. */
    readonly servingThreads: number;
    /** Node options given to the exporter's process besides the harness's own. */
    readonly exporterNodeOptions: readonly string[];
    /** Nice steps below the servers that wrk and the simulators ran at; absent in runs before 2026-11-29. */
    readonly loadNice?: number;
  };
  readonly decode: DecodeResult;
  readonly steps: readonly StepResult[];
}
