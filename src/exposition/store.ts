import { performance } from 'node:perf_hooks';
import type { MessagePort } from 'node:worker_threads';
import { Counter, Gauge, type Registry } from 'prom-client';
import { systemClock, type Clock, type TimerHandle } from '../lib/clock.js';
import { builderClient } from './builder-client.js';
import type { BuilderNotice, BuiltFormat, GroupMessage } from './builder.js';
import { ChunkStore } from './chunks.js';
import {
  renderHistogramLines,
  renderLabelPairs,
  renderScalarLine,
  renderSummaryLines,
  seriesKey,
  validateFamily,
} from './format.js';
import { DEFAULT_GZIP_LEVEL, EMPTY_BODY, type PreparedBody } from './gzip.js';
import type { FamilySamples, FamilySpec, HistogramSample, Labels, MetricSink, ScalarSample, SummarySample } from './model.js';
import { openMetricsFamilyHeader } from './render-openmetrics.js';
import { textFamilyHeader } from './render-text.js';
import { SeriesIndex, familySeed, hashString, type SeriesHash } from './series-index.js';

export interface FamilyConflict {
  readonly family: string;
  readonly group: string;
  readonly kept: FamilySpec;
  readonly dropped: FamilySpec;
}

export interface InvalidFamily {
  readonly family: string;
  readonly group: string;
  readonly reason: string;
}

export interface DuplicateSeries {
  readonly family: string;
  readonly group: string;
  /** The group that published the series first and keeps it. */
  readonly owner: string;
  /** The series' label pairs, e.g. `host="a",mode="idle"`. */
  readonly labels: string;
}

export interface MetricStoreOptions {
  readonly clock?: Clock;
  /** Quiet time after the last change before rebuilding. Default 100 ms. */
  readonly debounceMs?: number;
  /** Upper bound on how long a change waits for a rebuild to start under constant churn. Default 250 ms: with a build of up to 0.3 s under way and its own, a change shows within a second at a million series. */
  readonly maxDelayMs?: number;
  /** gzip level of the compressed bodies, 1 (fastest) to 9. Default 1: see docs/exposition.md. */
  readonly gzipLevel?: number;
  /** Where the store registers its own metrics (conflicts, duplicates, render time, series). */
  readonly registry?: Registry;
  /** Called once per family, group and kind of problem; every occurrence is still counted. */
  readonly onConflict?: (conflict: FamilyConflict) => void;
  readonly onInvalidFamily?: (invalid: InvalidFamily) => void;
  readonly onDuplicateSeries?: (duplicate: DuplicateSeries) => void;
  /** A rebuild started by the debounce timer failed; the previous body stays served. */
  readonly onRebuildError?: (error: unknown) => void;
  /** What the builder thread says unasked (the process has one: every store hears it). */
  readonly onBuilderNotice?: (notice: BuilderNotice) => void;
}

/** What a scrape writes: the data part of each format, raw and DEFLATE-compressed. */
export interface ExpositionSnapshot {
  readonly generation: number;
  /** The builder's request number for the build these bodies come from (0 before one): the chunks a serving thread gets carry it. */
  readonly build: number;
  /**
   * False once the store's chunks go to serving threads (`deliverChunksTo`): `text` and
   * `openMetrics` then give the bodies' sizes and CRC-32s but no bytes, and only the serving
   * threads can write a scrape.
   */
  readonly bodiesHeld: boolean;
  readonly text: PreparedBody;
  /** OpenMetrics without `# EOF`: the scrape appends self-metrics and then `# EOF`. */
  readonly openMetrics: PreparedBody;
  /** The same bodies as chunk ids, for other threads (serving threads). */
  readonly layout: { readonly text: BuiltFormat; readonly openMetrics: BuiltFormat };
  /** Exposition lines (a histogram sample counts its buckets, `_sum` and `_count`). */
  readonly series: number;
  readonly families: number;
  readonly groups: number;
  /** Wall time of the rebuild that produced this snapshot, on the builder thread and waiting for it. */
  readonly renderSeconds: number;
  /** Raw bytes that rebuild compressed, of both bodies: about what changed, not the body's size. */
  readonly compressedBytes: number;
  /** Clock time at which the rebuild took the published content: every publish before it is in this snapshot. */
  readonly capturedAtMs: number;
}

export interface StoreStats {
  readonly familyConflicts: number;
  readonly duplicateSeries: number;
  readonly invalidFamilies: number;
  readonly rebuilds: number;
}

interface FamilyEntry {
  /** Small number, reused after the family goes: indexes the family in a rebuild. */
  readonly id: number;
  readonly name: string;
  spec: FamilySpec;
  textHeader: Buffer;
  openMetricsHeader: Buffer;
  readonly seed: SeriesHash;
  /** Groups publishing this family; the entry goes when none is left. */
  holders: number;
}

/**
 * What this thread keeps of a group: which series and families it holds. Its lines, rendered
 * and UTF-8 encoded at publish time, family after family in one buffer, go to the builder
 * thread (no object per family or per series stays here: at a million series, objects are
 * what the heap is made of).
 */
interface GroupContent {
  /** Its number in the series index. */
  readonly owner: number;
  readonly families: readonly FamilyEntry[];
  /** Hash halves of every series the group holds, for releasing them. */
  readonly hashes: Int32Array;
  readonly series: number;
}

interface SelfMetrics {
  readonly conflicts: Counter;
  readonly duplicates: Counter;
  readonly invalid: Counter;
  readonly renderSeconds: Gauge;
  readonly series: Gauge;
  readonly bodyBytes: Gauge<'format' | 'encoding'>;
}

/** Bounds the memory of the "report once" bookkeeping when groups churn. */
const MAX_REPORTED_KEYS = 10_000;

let nextStoreId = 1;

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sameSpec(a: FamilySpec, b: FamilySpec): boolean {
  return a.type === b.type && a.help === b.help && a.unit === b.unit;
}

/** Lines of one family within one publish, as strings until the group's buffer is written. */
interface PendingFamily {
  readonly entry: FamilyEntry;
  readonly text: string[];
  /** Created at the first timestamped sample, holding the text lines rendered before it. */
  openMetrics: string[] | undefined;
}

/**
 * Holds what sources publish and keeps the exposition bodies ready, so a scrape only
 * writes bytes it already has (the approach of kube-state-metrics). Work happens when data
 * changes, not when Prometheus scrapes, and not on this thread:
 *
 * - `publish` validates, deduplicates, renders and encodes that group's sample lines, and
 *   hands them to the builder thread (builder.ts), which marks the families whose bytes changed;
 * - a debounced rebuild asks it to lay out the changed families' lines and compress them
 *   (assemble.ts), reusing what it made of the unchanged ones and sharing the compressed
 *   sample lines between the text and the OpenMetrics body;
 * - the finished snapshot replaces the previous one atomically (`generation` counts them).
 *
 * Order is deterministic: families by name, then groups by name, then the source's sample
 * order. A family name published with a different type, help or unit than the one already
 * held is dropped (first keeps it); a series already held by another group is dropped too.
 */
export class MetricStore implements MetricSink {
  private readonly clock: Clock;
  private readonly debounceMs: number;
  private readonly maxDelayMs: number;
  private readonly gzipLevel: number;
  private readonly options: MetricStoreOptions;
  /** This store's number on the builder thread. */
  private readonly id = nextStoreId++;
  private readonly metrics: SelfMetrics | undefined;

  private readonly groupContent = new Map<string, GroupContent>();
  /** The sum of the groups' `series`, kept as they change: a rebuild does not walk every group. */
  private heldSeries = 0;
  private readonly families = new Map<string, FamilyEntry>();
  private readonly series = new SeriesIndex();
  private readonly ownerNames = new Map<number, string>();
  private nextOwner = 1;
  private readonly freeFamilyIds: number[] = [];
  private nextFamilyId = 0;
  private sortedFamilies: FamilyEntry[] | undefined;
  /** The chunks of the bodies the builder last sent (a snapshot holds its own Buffers), until they go to serving threads. */
  private readonly chunks = new ChunkStore();
  private bodiesHeld = true;

  private current: ExpositionSnapshot;
  private dirty = false;
  private dirtySince: number | undefined;
  private timer: TimerHandle | undefined;
  private building: Promise<void> | undefined;
  private readonly stopHearingBuilder: (() => void) | undefined;
  private closed = false;

  private conflictCount = 0;
  private duplicateCount = 0;
  private invalidCount = 0;
  private rebuildCount = 0;
  private readonly reported = new Set<string>();
  private readonly snapshotListeners: ((snapshot: ExpositionSnapshot) => void)[] = [];

  constructor(options: MetricStoreOptions = {}) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.debounceMs = nonNegative('debounceMs', options.debounceMs ?? 100);
    this.maxDelayMs = nonNegative('maxDelayMs', options.maxDelayMs ?? 250);
    this.gzipLevel = options.gzipLevel ?? DEFAULT_GZIP_LEVEL;
    if (!Number.isInteger(this.gzipLevel) || this.gzipLevel < 1 || this.gzipLevel > 9) {
      throw new RangeError(`MetricStore: gzipLevel must be an integer from 1 to 9, got ${this.gzipLevel}`);
    }
    this.metrics = options.registry ? createSelfMetrics(options.registry) : undefined;
    this.stopHearingBuilder = options.onBuilderNotice ? builderClient.onNotice(options.onBuilderNotice) : undefined;
    this.current = {
      generation: 0,
      build: 0,
      bodiesHeld: true,
      text: EMPTY_BODY,
      openMetrics: EMPTY_BODY,
      layout: { text: EMPTY_LAYOUT, openMetrics: EMPTY_LAYOUT },
      series: 0,
      families: 0,
      groups: 0,
      renderSeconds: 0,
      compressedBytes: 0,
      capturedAtMs: this.clock.now(),
    };
  }

  /** Number of rebuilt snapshots so far; 0 until the first rebuild. */
  get generation(): number {
    return this.current.generation;
  }

  /** The bodies a scrape writes now. Immutable: a rebuild replaces it, never edits it. */
  snapshot(): ExpositionSnapshot {
    return this.current;
  }

  /**
   * Sends the chunks of every build from now on to `port` (a serving thread's), together with
   * every chunk of the last build, and no longer to this thread: from then on the snapshots
   * give the bodies' layout and sizes, not their bytes (`bodiesHeld` false). The main thread
   * then holds none of the bodies' shared buffers (when it forwarded them, its collector
   * marked in long steps on the event loop at a million series: docs/scaling.md).
   */
  deliverChunksTo(port: MessagePort): void {
    builderClient.post({ type: 'chunk-port', store: this.id, port }, [port]);
    if (!this.bodiesHeld) return;
    this.bodiesHeld = false;
    this.chunks.keepOnly([]);
    const { text, openMetrics } = this.current.layout;
    this.current = { ...this.current, bodiesHeld: false, text: sizesOnly(text), openMetrics: sizesOnly(openMetrics) };
  }

  /**
   * Calls `listener` whenever the snapshot scrapes get is known to hold more publishes: with
   * every new snapshot, and with the same bodies (same `generation`, later `capturedAtMs`) when a
   * rebuild found that no byte changed.
   */
  onSnapshot(listener: (snapshot: ExpositionSnapshot) => void): void {
    this.snapshotListeners.push(listener);
  }

  stats(): StoreStats {
    return {
      familyConflicts: this.conflictCount,
      duplicateSeries: this.duplicateCount,
      invalidFamilies: this.invalidCount,
      rebuilds: this.rebuildCount,
    };
  }

  /** True when a family of this (text-format) name is held, e.g. to keep self-metrics from clashing. */
  hasFamily(name: string): boolean {
    return (this.families.get(name)?.holders ?? 0) > 0;
  }

  groups(prefix: string): string[] {
    const out: string[] = [];
    for (const group of this.groupContent.keys()) if (group.startsWith(prefix)) out.push(group);
    return out.sort(compareStrings);
  }

  publish(group: string, families: readonly FamilySamples[]): void {
    if (typeof group !== 'string' || group === '') throw new TypeError('MetricStore.publish: group must be a non-empty string');
    const old = this.groupContent.get(group);
    // Release first: the group's own earlier series and definitions must not count against it.
    if (old) this.releaseHoldings(old);
    const owner = old?.owner ?? this.nextOwner++;
    const { content, message } = this.render(group, owner, families);
    this.groupContent.set(group, content);
    this.heldSeries += content.series - (old?.series ?? 0);
    this.ownerNames.set(owner, group);
    const transfer = [message.lines.buffer as ArrayBuffer];
    if (message.openMetricsLines) transfer.push(message.openMetricsLines.buffer as ArrayBuffer);
    builderClient.post(message, transfer);
    if (old) this.dropUnheld(old.families);
    // The builder thread compares the bytes and skips the build when nothing changed.
    if (content.families.length > 0 || (old?.families.length ?? 0) > 0) this.markDirty();
  }

  retract(group: string): void {
    const old = this.groupContent.get(group);
    if (!old) return;
    this.releaseHoldings(old);
    this.groupContent.delete(group);
    this.heldSeries -= old.series;
    this.ownerNames.delete(old.owner);
    builderClient.post({ type: 'retract', store: this.id, name: group });
    this.dropUnheld(old.families);
    if (old.families.length > 0) this.markDirty();
  }

  /** V8 heap used by the builder thread (all stores of the process), for memory accounting. */
  async builderHeapUsed(collectGarbage = false): Promise<number> {
    const reply = await builderClient.request({ type: 'memory', collectGarbage });
    return reply.type === 'memory' ? reply.heapUsed : 0;
  }

  /** Rebuilds now (waiting for one in flight) so the snapshot reflects every change made before the call. */
  async flush(): Promise<void> {
    this.cancelTimer();
    await this.rebuildIfDirty();
  }

  /** Resolves when no rebuild is running; does not start one. */
  async whenIdle(): Promise<void> {
    // A failed rebuild is reported to whoever started it; waiting here only needs it over.
    while (this.building) await this.building.catch(() => undefined);
  }

  /** Stops scheduling rebuilds and waits for one in flight. Publishing still updates state. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopHearingBuilder?.();
    this.cancelTimer();
    await this.whenIdle();
  }

  private render(group: string, owner: number, families: readonly FamilySamples[]): { content: GroupContent; message: GroupMessage } {
    const pending = new Map<FamilyEntry, PendingFamily>();
    const hashes: number[] = [];
    const hash: SeriesHash = { hi: 0, lo: 0 };
    const labelTexts = new LabelTexts();
    let series = 0;
    for (const family of families) {
      const name = String((family as { spec?: { name?: unknown } }).spec?.name);
      const problem = validateFamily(family);
      if (problem) {
        this.invalidCount++;
        this.metrics?.invalid.inc();
        if (this.firstReport(`invalid\0${name}\0${group}`)) this.options.onInvalidFamily?.({ family: name, group, reason: problem });
        continue;
      }
      let entry = this.families.get(name);
      if (entry && entry.holders > 0 && !pending.has(entry) && !sameSpec(entry.spec, family.spec)) {
        this.conflictCount++;
        this.metrics?.conflicts.inc();
        if (this.firstReport(`conflict\0${name}\0${group}`)) this.options.onConflict?.({ family: name, group, kept: entry.spec, dropped: family.spec });
        continue;
      }
      if (entry && pending.has(entry) && !sameSpec(entry.spec, family.spec)) {
        // The same name twice in one publish with two definitions: the first stays.
        this.conflictCount++;
        this.metrics?.conflicts.inc();
        if (this.firstReport(`conflict\0${name}\0${group}`)) this.options.onConflict?.({ family: name, group, kept: entry.spec, dropped: family.spec });
        continue;
      }
      if (!entry) {
        entry = {
          id: this.freeFamilyIds.pop() ?? this.nextFamilyId++,
          name,
          spec: family.spec,
          textHeader: Buffer.from(textFamilyHeader(family.spec), 'utf8'),
          openMetricsHeader: Buffer.from(openMetricsFamilyHeader(family.spec), 'utf8'),
          seed: familySeed(name),
          holders: 0,
        };
        this.families.set(name, entry);
        this.sortedFamilies = undefined;
        this.postFamily(entry);
      } else if (entry.holders === 0 && !sameSpec(entry.spec, family.spec)) {
        // Its only holder was this group, which now defines it differently.
        entry.spec = family.spec;
        entry.textHeader = Buffer.from(textFamilyHeader(family.spec), 'utf8');
        entry.openMetricsHeader = Buffer.from(openMetricsFamilyHeader(family.spec), 'utf8');
        this.postFamily(entry);
      }
      let lines = pending.get(entry);
      if (!lines) {
        lines = { entry, text: [], openMetrics: undefined };
        pending.set(entry, lines);
        entry.holders++;
      }
      series += this.renderSamples(group, owner, entry, family, lines, hashes, hash, labelTexts);
    }
    return encodeGroup(this.id, group, owner, pending, hashes, series);
  }

  private postFamily(entry: FamilyEntry): void {
    builderClient.post({
      type: 'family',
      store: this.id,
      id: entry.id,
      name: entry.name,
      textHeader: entry.textHeader.toString('utf8'),
      openMetricsHeader: entry.openMetricsHeader.toString('utf8'),
    });
  }

  /** Renders one family's samples into `lines`, claiming each series; returns the exposition lines added. */
  private renderSamples(
    group: string,
    owner: number,
    entry: FamilyEntry,
    family: FamilySamples,
    lines: PendingFamily,
    hashes: number[],
    hash: SeriesHash,
    labelTexts: LabelTexts,
  ): number {
    const name = entry.name;
    const type = family.spec.type;
    let series = 0;
    for (const sample of family.samples) {
      const { pairs, key } = labelTexts.of(sample.labels);
      hashString(key, entry.seed.hi, entry.seed.lo, hash);
      const holder = this.series.claim(hash.hi, hash.lo, owner);
      if (holder !== 0) {
        this.duplicateCount++;
        this.metrics?.duplicates.inc();
        if (this.firstReport(`duplicate\0${name}\0${group}`)) {
          this.options.onDuplicateSeries?.({ family: name, group, owner: this.ownerNames.get(holder) ?? group, labels: key });
        }
        continue;
      }
      hashes.push(hash.hi, hash.lo);
      let line: string;
      let openMetricsLine: string | undefined;
      if (type === 'histogram') {
        const histogram = sample as HistogramSample;
        line = renderHistogramLines(name, histogram, pairs);
        series += histogram.buckets.length + 3;
      } else if (type === 'summary') {
        const summary = sample as SummarySample;
        line = renderSummaryLines(name, summary, pairs);
        series += summary.quantiles.length + 2;
      } else {
        const scalar = sample as ScalarSample;
        line = renderScalarLine(family.spec, scalar, pairs);
        if (scalar.timestampMs !== undefined) openMetricsLine = renderScalarLine(family.spec, scalar, pairs, 'openmetrics');
        series += 1;
      }
      if (openMetricsLine !== undefined && lines.openMetrics === undefined) lines.openMetrics = [...lines.text];
      lines.text.push(line);
      lines.openMetrics?.push(openMetricsLine ?? line);
    }
    return series;
  }

  /** Gives up a group's series and its hold on its families (the entries stay until `dropUnheld`). */
  private releaseHoldings(content: GroupContent): void {
    const { hashes, owner } = content;
    for (let i = 0; i < hashes.length; i += 2) this.series.release(hashes[i] as number, hashes[i + 1] as number, owner);
    for (const family of content.families) family.holders--;
  }

  private dropUnheld(families: readonly FamilyEntry[]): void {
    for (const family of families) {
      if (family.holders === 0 && this.families.get(family.name) === family) {
        this.families.delete(family.name);
        this.freeFamilyIds.push(family.id);
        this.sortedFamilies = undefined;
        builderClient.post({ type: 'drop-family', store: this.id, id: family.id });
      }
    }
  }

  private firstReport(key: string): boolean {
    if (this.reported.has(key)) return false;
    if (this.reported.size >= MAX_REPORTED_KEYS) this.reported.clear();
    this.reported.add(key);
    return true;
  }

  private markDirty(): void {
    this.dirty = true;
    this.dirtySince ??= this.clock.now();
    // While a rebuild runs, its completion schedules the next one.
    if (!this.building && !this.closed) this.schedule();
  }

  private schedule(): void {
    this.cancelTimer();
    const now = this.clock.now();
    const deadline = (this.dirtySince ?? now) + this.maxDelayMs;
    const delay = Math.max(0, Math.min(this.debounceMs, deadline - now));
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.rebuildIfDirty().catch((error: unknown) => this.options.onRebuildError?.(error));
    }, delay);
  }

  private cancelTimer(): void {
    if (this.timer) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * Starts a rebuild synchronously when nothing is building, so the content is captured at
   * call time; otherwise waits for the running one and then checks again.
   */
  private rebuildIfDirty(): Promise<void> {
    if (this.building) {
      return this.building.catch(() => undefined).then(() => this.rebuildIfDirty());
    }
    if (!this.dirty) return Promise.resolve();
    this.dirty = false;
    this.dirtySince = undefined;
    this.cancelTimer();
    const build = (async () => {
      try {
        await this.rebuild();
      } catch (error) {
        this.dirty = true;
        this.dirtySince ??= this.clock.now();
        throw error;
      } finally {
        this.building = undefined;
        if (this.dirty && !this.closed) this.schedule();
      }
    })();
    this.building = build;
    return build;
  }

  /**
   * Asks the builder thread for the bodies as of now (it has every publish made before this
   * call), then swaps in the snapshot. Nothing is built when no byte changed.
   */
  private async rebuild(): Promise<void> {
    const started = performance.now();
    const capturedAtMs = this.clock.now();
    this.sortedFamilies ??= [...this.families.values()].sort((a, b) => compareStrings(a.name, b.name));
    const families = this.sortedFamilies;
    const series = this.heldSeries;
    const groups = this.groupContent.size;
    const reply = await builderClient.request({ type: 'build', store: this.id, gzipLevel: this.gzipLevel });
    if (reply.type === 'failed') throw new Error(`building the exposition failed: ${reply.message}`);
    if (reply.type !== 'built') throw new Error(`the exposition builder answered ${reply.type} to a build`);
    if (!reply.changed) {
      // Nothing to show: the snapshot already holds every publish made before the request.
      this.current = { ...this.current, capturedAtMs };
      for (const listener of this.snapshotListeners) listener(this.current);
      return;
    }
    if (reply.familyIds.length !== families.length || families.some((family, i) => family.id !== reply.familyIds[i])) {
      // The builder moved on to a layout no snapshot shows: the next build sends every chunk again, wherever they go.
      builderClient.post({ type: 'forget-chunks', store: this.id });
      throw new Error('the exposition builder built other families than this store holds');
    }
    let text: PreparedBody;
    let openMetrics: PreparedBody;
    if (this.bodiesHeld) {
      try {
        this.chunks.add(reply.chunks);
        text = bodyOfChunks(this.chunks, reply.text, 'text');
        openMetrics = bodyOfChunks(this.chunks, reply.openMetrics, 'OpenMetrics');
        this.chunks.keepOnly([reply.text.raw, reply.text.deflated, reply.openMetrics.raw, reply.openMetrics.deflated]);
      } catch (error) {
        builderClient.post({ type: 'forget-chunks', store: this.id });
        throw error;
      }
    } else {
      text = sizesOnly(reply.text);
      openMetrics = sizesOnly(reply.openMetrics);
    }
    const renderSeconds = (performance.now() - started) / 1000;
    this.current = {
      generation: this.current.generation + 1,
      build: reply.request,
      bodiesHeld: this.bodiesHeld,
      text,
      openMetrics,
      layout: { text: reply.text, openMetrics: reply.openMetrics },
      series,
      families: families.length,
      groups,
      renderSeconds,
      compressedBytes: reply.compressedBytes,
      capturedAtMs,
    };
    this.rebuildCount++;
    if (this.metrics) {
      this.metrics.renderSeconds.set(renderSeconds);
      this.metrics.series.set(series);
      this.metrics.bodyBytes.set({ format: 'text', encoding: 'identity' }, text.length);
      this.metrics.bodyBytes.set({ format: 'text', encoding: 'deflate' }, text.deflatedLength);
      this.metrics.bodyBytes.set({ format: 'openmetrics', encoding: 'identity' }, openMetrics.length);
      this.metrics.bodyBytes.set({ format: 'openmetrics', encoding: 'deflate' }, openMetrics.deflatedLength);
    }
    for (const listener of this.snapshotListeners) listener(this.current);
  }
}

/**
 * The rendered label pairs and series key of each labels object, within one publish. Sources
 * reuse their label objects: every metric of a host carries the host's, a per-device metric its
 * device's. One rendering per object and publish instead of one per sample, which made strings,
 * arrays and sorted copies for every sample of every publish. (A source that makes an object per
 * sample pays a map entry per sample more.)
 */
class LabelTexts {
  private readonly known = new Map<Labels, LabelText>();

  of(labels: Labels): LabelText {
    let text = this.known.get(labels);
    if (text === undefined) {
      const pairs = renderLabelPairs(labels);
      text = { pairs, key: seriesKey(labels, pairs) };
      this.known.set(labels, text);
    }
    return text;
  }
}

interface LabelText {
  readonly pairs: string;
  readonly key: string;
}

const EMPTY_LAYOUT: BuiltFormat = { raw: new Int32Array(0), deflated: new Int32Array(0), crc32: 0, length: 0, deflatedLength: 0 };

/** A body that another thread holds: its sizes and CRC-32, no bytes. */
function sizesOnly(format: BuiltFormat): PreparedBody {
  return { pieces: [], length: format.length, crc32: format.crc32, deflated: [], deflatedLength: format.deflatedLength };
}

/** A format's data part from the chunks it is made of. */
export function bodyOfChunks(chunks: ChunkStore, format: BuiltFormat, what: string): PreparedBody {
  const pieces = chunks.body(format.raw, what);
  const deflated = chunks.body(format.deflated, `${what} DEFLATE`);
  let length = 0;
  for (const piece of pieces) length += piece.length;
  let deflatedLength = 0;
  for (const piece of deflated) deflatedLength += piece.length;
  if (length !== format.length || deflatedLength !== format.deflatedLength) {
    throw new Error(`the ${what} body is ${length} bytes (${deflatedLength} compressed) where the builder made ${format.length} (${format.deflatedLength})`);
  }
  return { pieces, length, crc32: format.crc32, deflated, deflatedLength };
}

/** Writes a publish's lines into one buffer per format, family after family, for the builder thread. */
function encodeGroup(
  store: number,
  name: string,
  owner: number,
  pending: Map<FamilyEntry, PendingFamily>,
  hashes: number[],
  series: number,
): { content: GroupContent; message: GroupMessage } {
  const families = [...pending.keys()];
  const texts = [...pending.values()].map((p) => p.text.join(''));
  const encode = (segments: string[]): { lines: Buffer; ends: Uint32Array } => {
    const ends = new Uint32Array(segments.length);
    let total = 0;
    segments.forEach((segment, i) => {
      total += Buffer.byteLength(segment, 'utf8');
      ends[i] = total;
    });
    // Its own ArrayBuffer (not Buffer's shared pool), since it is handed over to the builder thread.
    const lines = Buffer.from(new ArrayBuffer(total));
    segments.forEach((segment, i) => lines.write(segment, i === 0 ? 0 : (ends[i - 1] as number), 'utf8'));
    return { lines, ends };
  };
  const text = encode(texts);
  const withTimestamps = [...pending.values()].some((p) => p.openMetrics !== undefined);
  const openMetrics = withTimestamps ? encode([...pending.values()].map((p, i) => (p.openMetrics ? p.openMetrics.join('') : (texts[i] as string)))) : undefined;
  return {
    content: { owner, families, hashes: Int32Array.from(hashes), series },
    message: {
      type: 'group',
      store,
      name,
      familyIds: Int32Array.from(families, (family) => family.id),
      lines: text.lines,
      ends: text.ends,
      openMetricsLines: openMetrics?.lines,
      openMetricsEnds: openMetrics?.ends,
    },
  };
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`MetricStore: ${name} must be a finite number >= 0, got ${value}`);
  return value;
}

function createSelfMetrics(registry: Registry): SelfMetrics {
  const registers = [registry];
  return {
    conflicts: new Counter({
      name: 'monapi_exporter_family_conflicts_total',
      help: 'Metric families dropped because a family of the same name with another type, help or unit was already published.',
      registers,
    }),
    duplicates: new Counter({
      name: 'monapi_exporter_duplicate_series_total',
      help: 'Series dropped because another group already published the same name and labels.',
      registers,
    }),
    invalid: new Counter({
      name: 'monapi_exporter_invalid_families_total',
      help: 'Metric families rejected for an invalid metric name, label name, type, unit or histogram.',
      registers,
    }),
    renderSeconds: new Gauge({
      name: 'monapi_exporter_render_duration_seconds',
      help: 'Wall time of the last rebuild of the exposition bodies, compression included.',
      registers,
    }),
    series: new Gauge({
      name: 'monapi_exporter_series',
      help: 'Exposition lines of published data in the last rebuild, self-metrics excluded.',
      registers,
    }),
    bodyBytes: new Gauge({
      name: 'monapi_exporter_exposition_size_bytes',
      help: 'Size of the pre-rendered data part of /metrics in the last rebuild, by format and encoding.',
      labelNames: ['format', 'encoding'],
      registers,
    }),
  };
}
