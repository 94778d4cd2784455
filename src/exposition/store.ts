import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { Counter, Gauge, type Registry } from 'prom-client';
import { systemClock, type Clock, type TimerHandle } from '../lib/clock.js';
import {
  renderHistogramLines,
  renderLabelPairs,
  renderScalarLine,
  renderSummaryLines,
  seriesKey,
  validateFamily,
} from './format.js';
import { DEFAULT_GZIP_LEVEL, compressPrefix, type CompressedPrefix } from './gzip.js';
import type { FamilySamples, FamilySpec, HistogramSample, MetricSink, ScalarSample, SummarySample } from './model.js';
import { openMetricsFamilyHeader } from './render-openmetrics.js';
import { textFamilyHeader } from './render-text.js';

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
  /** Quiet time after the last change before rebuilding. Default 200 ms. */
  readonly debounceMs?: number;
  /** Upper bound on how long a change waits for a rebuild under constant churn. Default 1000 ms. */
  readonly maxDelayMs?: number;
  readonly gzipLevel?: number;
  /** Bytes copied per slice of a rebuild before yielding to the event loop. Default 256 KiB. */
  readonly sliceBytes?: number;
  /** Where the store registers its own metrics (conflicts, duplicates, render time, series). */
  readonly registry?: Registry;
  /** Called once per family, group and kind of problem; every occurrence is still counted. */
  readonly onConflict?: (conflict: FamilyConflict) => void;
  readonly onInvalidFamily?: (invalid: InvalidFamily) => void;
  readonly onDuplicateSeries?: (duplicate: DuplicateSeries) => void;
  /** A rebuild started by the debounce timer failed; the previous body stays served. */
  readonly onRebuildError?: (error: unknown) => void;
}

/** What a scrape writes: the data part of each format, raw and DEFLATE-compressed. */
export interface ExpositionSnapshot {
  readonly generation: number;
  readonly text: CompressedPrefix;
  /** OpenMetrics without `# EOF`: the scrape appends self-metrics and then `# EOF`. */
  readonly openMetrics: CompressedPrefix;
  /** Exposition lines (a histogram sample counts its buckets, `_sum` and `_count`). */
  readonly series: number;
  readonly families: number;
  readonly groups: number;
  /** Wall time of the rebuild that produced this snapshot, yields included. */
  readonly renderSeconds: number;
  /** Longest stretch the rebuild held the event loop without yielding. */
  readonly longestSliceSeconds: number;
}

export interface StoreStats {
  readonly familyConflicts: number;
  readonly duplicateSeries: number;
  readonly invalidFamilies: number;
  readonly rebuilds: number;
}

interface FamilyEntry {
  readonly spec: FamilySpec;
  readonly textHeader: Buffer;
  readonly openMetricsHeader: Buffer;
  readonly owners: Set<string>;
  /** Series key -> the group holding it; the first publisher keeps a duplicated series. */
  readonly seriesOwners: Map<string, string>;
}

/**
 * One family's sample lines within one group, rendered and UTF-8 encoded at publish time,
 * so a rebuild only copies bytes.
 */
interface GroupFamily {
  lines: Buffer;
  /** Set only when samples carry timestamps, which the two formats write differently. */
  openMetricsLines: Buffer | undefined;
  readonly keys: string[];
  series: number;
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

const EMPTY = Buffer.alloc(0);

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sameSpec(a: FamilySpec, b: FamilySpec): boolean {
  return a.type === b.type && a.help === b.help && a.unit === b.unit;
}

function emptyPrefix(): CompressedPrefix {
  const raw = Buffer.alloc(0);
  return { raw, crc32: 0, deflated: deflateRawSync(raw, { finishFlush: constants.Z_SYNC_FLUSH }) };
}

/**
 * Holds what sources publish and keeps the exposition bodies ready, so a scrape only
 * writes bytes it already has (the approach of kube-state-metrics). Work happens when data
 * changes, not when Prometheus scrapes:
 *
 * - `publish` validates, renders and encodes that group's sample lines (nothing else is
 *   touched);
 * - a debounced rebuild copies the pre-encoded pieces into a text and an OpenMetrics body
 *   (the sample lines are the same bytes in both; only family headers differ), yielding to
 *   the event loop between slices, and compresses both on the libuv thread pool;
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
  private readonly sliceBytes: number;
  private readonly options: MetricStoreOptions;
  private readonly metrics: SelfMetrics | undefined;

  private readonly groupContent = new Map<string, Map<string, GroupFamily>>();
  private readonly families = new Map<string, FamilyEntry>();

  private current: ExpositionSnapshot;
  private dirty = false;
  private dirtySince: number | undefined;
  private timer: TimerHandle | undefined;
  private building: Promise<void> | undefined;
  private closed = false;

  private conflictCount = 0;
  private duplicateCount = 0;
  private invalidCount = 0;
  private rebuildCount = 0;
  private readonly reported = new Set<string>();

  constructor(options: MetricStoreOptions = {}) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.debounceMs = nonNegative('debounceMs', options.debounceMs ?? 200);
    this.maxDelayMs = nonNegative('maxDelayMs', options.maxDelayMs ?? 1000);
    this.gzipLevel = options.gzipLevel ?? DEFAULT_GZIP_LEVEL;
    this.sliceBytes = Math.max(1, options.sliceBytes ?? 256 * 1024);
    this.metrics = options.registry ? createSelfMetrics(options.registry) : undefined;
    const empty = emptyPrefix();
    this.current = {
      generation: 0,
      text: empty,
      openMetrics: empty,
      series: 0,
      families: 0,
      groups: 0,
      renderSeconds: 0,
      longestSliceSeconds: 0,
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
    return this.families.has(name);
  }

  groups(prefix: string): string[] {
    const out: string[] = [];
    for (const group of this.groupContent.keys()) if (group.startsWith(prefix)) out.push(group);
    return out.sort(compareStrings);
  }

  publish(group: string, families: readonly FamilySamples[]): void {
    if (typeof group !== 'string' || group === '') throw new TypeError('MetricStore.publish: group must be a non-empty string');
    this.release(group);
    const content = new Map<string, GroupFamily>();
    for (const family of families) this.add(group, family, content);
    this.groupContent.set(group, content);
    this.markDirty();
  }

  retract(group: string): void {
    if (this.release(group)) this.markDirty();
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
    this.cancelTimer();
    await this.whenIdle();
  }

  private add(group: string, family: FamilySamples, content: Map<string, GroupFamily>): void {
    const name = String((family as { spec?: { name?: unknown } }).spec?.name);
    const problem = validateFamily(family);
    if (problem) {
      this.invalidCount++;
      this.metrics?.invalid.inc();
      if (this.firstReport(`invalid\0${name}\0${group}`)) this.options.onInvalidFamily?.({ family: name, group, reason: problem });
      return;
    }
    let entry = this.families.get(name);
    if (entry && !sameSpec(entry.spec, family.spec)) {
      this.conflictCount++;
      this.metrics?.conflicts.inc();
      if (this.firstReport(`conflict\0${name}\0${group}`)) {
        this.options.onConflict?.({ family: name, group, kept: entry.spec, dropped: family.spec });
      }
      return;
    }
    if (!entry) {
      entry = {
        spec: family.spec,
        textHeader: Buffer.from(textFamilyHeader(family.spec), 'utf8'),
        openMetricsHeader: Buffer.from(openMetricsFamilyHeader(family.spec), 'utf8'),
        owners: new Set(),
        seriesOwners: new Map(),
      };
      this.families.set(name, entry);
    }
    entry.owners.add(group);
    let rendered = content.get(name);
    if (!rendered) {
      rendered = { lines: EMPTY, openMetricsLines: undefined, keys: [], series: 0 };
      content.set(name, rendered);
    }
    const lines: string[] = [];
    const openMetricsLines: string[] = [];
    let timestamped = false;
    const type = family.spec.type;
    for (const sample of family.samples) {
      const pairs = renderLabelPairs(sample.labels);
      const key = seriesKey(sample.labels, pairs);
      const owner = entry.seriesOwners.get(key);
      if (owner !== undefined) {
        this.duplicateCount++;
        this.metrics?.duplicates.inc();
        if (this.firstReport(`duplicate\0${name}\0${group}`)) {
          this.options.onDuplicateSeries?.({ family: name, group, owner, labels: key });
        }
        continue;
      }
      entry.seriesOwners.set(key, group);
      rendered.keys.push(key);
      if (type === 'histogram') {
        const histogram = sample as HistogramSample;
        const line = renderHistogramLines(name, histogram, pairs);
        lines.push(line);
        openMetricsLines.push(line);
        rendered.series += histogram.buckets.length + 3;
      } else if (type === 'summary') {
        const summary = sample as SummarySample;
        const line = renderSummaryLines(name, summary, pairs);
        lines.push(line);
        openMetricsLines.push(line);
        rendered.series += summary.quantiles.length + 2;
      } else {
        const scalar = sample as ScalarSample;
        lines.push(renderScalarLine(family.spec, scalar, pairs));
        if (scalar.timestampMs !== undefined) timestamped = true;
        openMetricsLines.push(timestamped ? renderScalarLine(family.spec, scalar, pairs, 'openmetrics') : '');
        rendered.series += 1;
      }
    }
    const encoded = Buffer.from(lines.join(''), 'utf8');
    const previousOpenMetrics = rendered.openMetricsLines ?? rendered.lines;
    rendered.lines = rendered.lines.length === 0 ? encoded : Buffer.concat([rendered.lines, encoded]);
    if (timestamped || rendered.openMetricsLines !== undefined) {
      // Lines rendered before the first timestamped sample are the same in both formats.
      const openMetricsText = openMetricsLines.map((line, i) => (line === '' ? (lines[i] ?? '') : line)).join('');
      const encodedOpenMetrics = Buffer.from(openMetricsText, 'utf8');
      rendered.openMetricsLines = previousOpenMetrics.length === 0 ? encodedOpenMetrics : Buffer.concat([previousOpenMetrics, encodedOpenMetrics]);
    }
  }

  /** Drops a group's content and its claims on families and series. False if it held nothing. */
  private release(group: string): boolean {
    const content = this.groupContent.get(group);
    if (!content) return false;
    for (const [name, rendered] of content) {
      const entry = this.families.get(name);
      if (!entry) continue;
      for (const key of rendered.keys) if (entry.seriesOwners.get(key) === group) entry.seriesOwners.delete(key);
      entry.owners.delete(group);
      if (entry.owners.size === 0) this.families.delete(name);
    }
    this.groupContent.delete(group);
    return true;
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
   * Starts a rebuild synchronously when nothing is building, so the pieces are captured at
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

  private async rebuild(): Promise<void> {
    const started = performance.now();
    let sliceStart = started;
    let longestSlice = 0;
    const endSlice = async (): Promise<void> => {
      longestSlice = Math.max(longestSlice, performance.now() - sliceStart);
      await yieldToEventLoop();
      sliceStart = performance.now();
    };

    // Capture references to the immutable pieces synchronously: publishes that arrive
    // while the bodies are encoded change the maps, not these strings.
    const piecesByFamily = new Map<string, { text: Buffer; openMetrics: Buffer }[]>();
    let series = 0;
    const groupNames = [...this.groupContent.keys()].sort(compareStrings);
    for (const group of groupNames) {
      for (const [name, rendered] of this.groupContent.get(group) ?? []) {
        series += rendered.series;
        if (rendered.lines.length === 0) continue;
        let pieces = piecesByFamily.get(name);
        if (!pieces) {
          pieces = [];
          piecesByFamily.set(name, pieces);
        }
        pieces.push({ text: rendered.lines, openMetrics: rendered.openMetricsLines ?? rendered.lines });
      }
    }
    const familyNames = [...this.families.keys()].sort(compareStrings);
    const textPieces: Buffer[] = [];
    const openMetricsPieces: Buffer[] = [];
    for (const name of familyNames) {
      const entry = this.families.get(name) as FamilyEntry;
      textPieces.push(entry.textHeader);
      openMetricsPieces.push(entry.openMetricsHeader);
      for (const piece of piecesByFamily.get(name) ?? []) {
        textPieces.push(piece.text);
        openMetricsPieces.push(piece.openMetrics);
      }
    }

    const text = await this.encode(textPieces, endSlice);
    const openMetrics = await this.encode(openMetricsPieces, endSlice);
    longestSlice = Math.max(longestSlice, performance.now() - sliceStart);
    const [textCompressed, openMetricsCompressed] = await Promise.all([
      compressPrefix(text.raw, text.crc, this.gzipLevel),
      compressPrefix(openMetrics.raw, openMetrics.crc, this.gzipLevel),
    ]);

    const renderSeconds = (performance.now() - started) / 1000;
    this.current = {
      generation: this.current.generation + 1,
      text: textCompressed,
      openMetrics: openMetricsCompressed,
      series,
      families: familyNames.length,
      groups: groupNames.length,
      renderSeconds,
      longestSliceSeconds: longestSlice / 1000,
    };
    this.rebuildCount++;
    if (this.metrics) {
      this.metrics.renderSeconds.set(renderSeconds);
      this.metrics.series.set(series);
      this.metrics.bodyBytes.set({ format: 'text', encoding: 'identity' }, textCompressed.raw.length);
      this.metrics.bodyBytes.set({ format: 'text', encoding: 'deflate' }, textCompressed.deflated.length);
      this.metrics.bodyBytes.set({ format: 'openmetrics', encoding: 'identity' }, openMetricsCompressed.raw.length);
      this.metrics.bodyBytes.set({ format: 'openmetrics', encoding: 'deflate' }, openMetricsCompressed.deflated.length);
    }
  }

  /**
   * Copies the pieces into one buffer and computes its CRC-32, yielding to the event loop
   * after every `sliceBytes`, so a 10 MB body never holds the loop for long.
   */
  private async encode(pieces: readonly Buffer[], endSlice: () => Promise<void>): Promise<{ raw: Buffer; crc: number }> {
    let total = 0;
    for (const piece of pieces) total += piece.length;
    const raw = Buffer.allocUnsafe(total);
    let offset = 0;
    let checked = 0;
    let crc = 0;
    for (const piece of pieces) {
      offset += piece.copy(raw, offset);
      if (offset - checked >= this.sliceBytes) {
        crc = crc32(raw.subarray(checked, offset), crc);
        checked = offset;
        await endSlice();
      }
    }
    // zlib's crc32 answers 0 for a NULL (empty) buffer instead of the running value.
    if (offset > checked) crc = crc32(raw.subarray(checked, offset), crc);
    return { raw, crc };
  }
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
