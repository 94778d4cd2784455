import { DEFLATE_WINDOW, crc32Combine, crc32Of, deflateUnit } from './gzip.js';

/**
 * Builds the two bodies (text and OpenMetrics) from the groups' pre-rendered lines, on the
 * builder thread.
 *
 * Layout: families by name; each family is its header (different per format) followed by its
 * lines L, the groups' lines in group order (the same bytes in both formats unless samples
 * carry timestamps). L is laid out only for families whose lines changed; the serving thread
 * keeps the last L of the others.
 *
 * Compression, the expensive part, is split into units compressed independently on the
 * libuv thread pool, each with the 32 KiB of body before it as a preset dictionary, so the
 * result is as small as compressing the body in one go (DEFLATE back references never reach
 * further back than 32 KiB; the decoder's window holds exactly those bytes). A family's
 * lines beyond its first few KiB are preceded by its own lines in both formats, so their
 * units are compressed once for both bodies and kept while the family does not change. Only
 * the units holding headers (and the first KiB of lines after them) are compressed per format
 * and per build: a few KiB per family.
 */

/** Lines of a family that get compressed units of their own (shared by both formats) beyond this size. */
const SHARED_MIN = 64 * 1024;
/** Lines compressed with the header in the per-format unit; what follows is preceded by lines only. */
const FIRST = 4 * 1024;
/** Size of shared units; large enough to amortize the dictionary, small enough to spread over threads. */
const SHARED_UNIT = 256 * 1024;
/** A per-format unit is closed once it holds this much (several small families share one). */
const UNIT_TARGET = 64 * 1024;
/** Compressions in flight at once: the libuv thread pool has 4 threads by default. */
const COMPRESS_CONCURRENCY = 4;

/** A compressed unit; `Deflated` is a queued compression's index until it is done. */
export interface CompressedUnit<Deflated = Buffer> {
  readonly length: number;
  readonly crc32: number;
  readonly deflated: Deflated;
}

/**
 * What the builder keeps of a family's lines between builds, while they stay the same: what
 * the per-format units are made from again each build, and the shared units. The whole lines
 * go to the serving thread; they are kept here only where the per-format units need them all.
 */
export interface BuiltFamily<Deflated = Buffer> {
  readonly length: number;
  readonly openMetricsLength: number;
  /** All of the lines: for small families and for families whose OpenMetrics lines differ. */
  readonly lines: Buffer | undefined;
  readonly openMetricsLines: Buffer | undefined;
  /** Of a large family: its first FIRST bytes and its last DEFLATE_WINDOW bytes. */
  readonly head: Buffer | undefined;
  readonly tail: Buffer | undefined;
  /** Units of the lines from FIRST on, when the family is large and the same in both formats. */
  readonly shared: readonly CompressedUnit<Deflated>[];
}

export interface FamilyToBuild {
  readonly textHeader: Buffer;
  readonly openMetricsHeader: Buffer;
  /** The last build of this family's lines, when they have not changed since. */
  readonly previous: BuiltFamily | undefined;
}

export interface GroupToBuild {
  /** Stable ids of its families, in the order of its segments. */
  readonly familyIds: Int32Array;
  readonly lines: Buffer;
  readonly ends: Uint32Array;
  readonly openMetricsLines: Buffer | undefined;
  readonly openMetricsEnds: Uint32Array | undefined;
}

export interface BuildInput {
  /** In output order. */
  readonly families: readonly FamilyToBuild[];
  /** Family id -> index in `families`. */
  readonly indexOfId: Int32Array;
  /** In output order. */
  readonly groups: readonly GroupToBuild[];
  readonly gzipLevel: number;
}

/** One format's data part: its DEFLATE units in order, the CRC-32 and length of the raw body. */
export interface BuiltBody {
  readonly deflated: readonly Buffer[];
  readonly deflatedLength: number;
  readonly crc32: number;
  readonly length: number;
}

export interface BuildOutput {
  readonly text: BuiltBody;
  readonly openMetrics: BuiltBody;
  /** Per family, in input order: what to keep for the next build. */
  readonly built: readonly BuiltFamily[];
  /** Per family: the lines laid out in this build (undefined where `previous` was reused). */
  readonly lines: readonly (Buffer | undefined)[];
  readonly openMetricsLines: readonly (Buffer | undefined)[];
}

function segmentStart(ends: Uint32Array, i: number): number {
  return i === 0 ? 0 : (ends[i - 1] as number);
}

/** A buffer of its own (not a slice of a pool), so that it can be handed to another thread. */
function ownBuffer(size: number): Buffer {
  return Buffer.from(new ArrayBuffer(size));
}

function copyOf(buffer: Buffer): Buffer {
  const copy = ownBuffer(buffer.length);
  buffer.copy(copy);
  return copy;
}

/** Copies every changed family's lines out of the groups, in group order. */
function layOutLines(input: BuildInput): { lines: (Buffer | undefined)[]; openMetricsLines: (Buffer | undefined)[] } {
  const { families, groups, indexOfId } = input;
  const n = families.length;
  const changed = families.map((f) => f.previous === undefined);
  const textSize = new Float64Array(n);
  const openMetricsSize = new Float64Array(n);
  const differs = new Uint8Array(n);
  for (const group of groups) {
    const { familyIds, ends } = group;
    const openMetricsEnds = group.openMetricsEnds ?? ends;
    for (let s = 0; s < familyIds.length; s++) {
      const f = indexOfId[familyIds[s] as number] as number;
      if (!changed[f]) continue;
      textSize[f] = (textSize[f] as number) + (ends[s] as number) - segmentStart(ends, s);
      openMetricsSize[f] = (openMetricsSize[f] as number) + (openMetricsEnds[s] as number) - segmentStart(openMetricsEnds, s);
      if (group.openMetricsLines) differs[f] = 1;
    }
  }
  const lines: (Buffer | undefined)[] = new Array<Buffer | undefined>(n);
  const openMetricsLines: (Buffer | undefined)[] = new Array<Buffer | undefined>(n);
  const textAt = new Float64Array(n);
  const openMetricsAt = new Float64Array(n);
  for (let f = 0; f < n; f++) {
    if (!changed[f]) continue;
    lines[f] = ownBuffer(textSize[f] as number);
    if (differs[f]) openMetricsLines[f] = ownBuffer(openMetricsSize[f] as number);
  }
  for (const group of groups) {
    const { familyIds, ends } = group;
    for (let s = 0; s < familyIds.length; s++) {
      const f = indexOfId[familyIds[s] as number] as number;
      if (!changed[f]) continue;
      const start = segmentStart(ends, s);
      textAt[f] = (textAt[f] as number) + group.lines.copy(lines[f] as Buffer, textAt[f], start, ends[s]);
      const openMetricsTarget = openMetricsLines[f];
      if (openMetricsTarget) {
        const source = group.openMetricsLines ?? group.lines;
        const sourceEnds = group.openMetricsEnds ?? ends;
        openMetricsAt[f] = (openMetricsAt[f] as number) + source.copy(openMetricsTarget, openMetricsAt[f], segmentStart(sourceEnds, s), sourceEnds[s]);
      }
    }
  }
  return { lines, openMetricsLines };
}

/** Runs the tasks with at most `limit` in flight; resolves with their results in order. */
async function runLimited<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await (tasks[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** Deflated data: an index into the build's compression results, or the finished unit when reused. */
type PlannedUnit = CompressedUnit<number | Buffer>;

/** Everything compressions need, queued while planning and run together. */
class CompressionQueue {
  readonly tasks: (() => Promise<Buffer>)[] = [];
  constructor(private readonly level: number) {}
  add(raw: Buffer, dictionary: Buffer | undefined): number {
    this.tasks.push(() => deflateUnit(raw, dictionary, this.level));
    return this.tasks.length - 1;
  }
}

/** Plans one format's body as units in order, queueing the new ones for compression. */
class BodyPlan {
  readonly units: PlannedUnit[] = [];
  /** Raw bytes already covered by units, in order (views, no copies), for dictionaries. */
  private readonly emitted: Buffer[] = [];
  private open: Buffer[] = [];
  private openLength = 0;

  constructor(private readonly queue: CompressionQueue) {}

  /** Adds raw bytes to the per-format unit being filled. */
  add(part: Buffer): void {
    for (let at = 0; at < part.length; at += SHARED_UNIT) {
      const slice = part.subarray(at, at + SHARED_UNIT);
      this.open.push(slice);
      this.openLength += slice.length;
      if (this.openLength >= UNIT_TARGET) this.close();
    }
  }

  close(): void {
    if (this.openLength === 0) return;
    const raw = this.open.length === 1 ? (this.open[0] as Buffer) : Buffer.concat(this.open, this.openLength);
    this.units.push({ length: raw.length, crc32: crc32Of(raw), deflated: this.queue.add(raw, this.window()) });
    this.emitted.push(...this.open);
    this.open = [];
    this.openLength = 0;
  }

  /**
   * Units compressed once for both formats (queued in this build, or kept from the last),
   * followed by the last bytes they cover, which later dictionaries may need.
   */
  reuse(units: readonly PlannedUnit[], tail: Buffer): void {
    this.close();
    this.units.push(...units);
    this.emitted.push(tail);
  }

  /** The last DEFLATE_WINDOW bytes emitted so far. */
  private window(): Buffer | undefined {
    const last = this.emitted.at(-1);
    if (!last) return undefined;
    if (last.length >= DEFLATE_WINDOW) return last.subarray(last.length - DEFLATE_WINDOW);
    const parts: Buffer[] = [];
    let size = 0;
    for (let i = this.emitted.length - 1; i >= 0 && size < DEFLATE_WINDOW; i--) {
      const part = this.emitted[i] as Buffer;
      const take = Math.min(part.length, DEFLATE_WINDOW - size);
      parts.unshift(part.subarray(part.length - take));
      size += take;
    }
    return Buffer.concat(parts, size);
  }

  finish(results: readonly Buffer[]): BuiltBody {
    const deflated: Buffer[] = [];
    let deflatedLength = 0;
    let crc = 0;
    let length = 0;
    for (const unit of this.units) {
      const data = typeof unit.deflated === 'number' ? (results[unit.deflated] as Buffer) : unit.deflated;
      deflated.push(data);
      deflatedLength += data.length;
      crc = crc32Combine(crc, unit.crc32, unit.length);
      length += unit.length;
    }
    return { deflated, deflatedLength, crc32: crc, length };
  }
}

/** A family as this build sees it: kept from the last build, or laid out now. */
type FamilyNow = BuiltFamily<number | Buffer>;

/** Whether the family's lines beyond FIRST go into units shared by both formats. */
function isShared(length: number, differs: boolean): boolean {
  return !differs && length > SHARED_MIN;
}

/** Lays out the changed families and queues their shared units, each with the lines before it as dictionary. */
function layOutFamily(lines: Buffer, openMetricsLines: Buffer | undefined, queue: CompressionQueue): FamilyNow {
  if (!isShared(lines.length, openMetricsLines !== undefined)) {
    return { length: lines.length, openMetricsLength: (openMetricsLines ?? lines).length, lines, openMetricsLines, head: undefined, tail: undefined, shared: [] };
  }
  const shared: CompressedUnit<number>[] = [];
  for (let at = FIRST; at < lines.length; at += SHARED_UNIT) {
    const raw = lines.subarray(at, at + SHARED_UNIT);
    shared.push({ length: raw.length, crc32: crc32Of(raw), deflated: queue.add(raw, lines.subarray(Math.max(0, at - DEFLATE_WINDOW), at)) });
  }
  return {
    length: lines.length,
    openMetricsLength: lines.length,
    lines: undefined,
    openMetricsLines: undefined,
    head: lines.subarray(0, FIRST),
    tail: lines.subarray(lines.length - DEFLATE_WINDOW),
    shared,
  };
}

/**
 * Everything up to the compression runs synchronously, so the groups may be replaced as soon
 * as the returned promise is pending: the lines are copied by then.
 */
export async function buildBodies(input: BuildInput): Promise<BuildOutput> {
  const laidOut = layOutLines(input);
  const queue = new CompressionQueue(input.gzipLevel);
  const now: FamilyNow[] = input.families.map((family, f) => {
    if (family.previous) return family.previous;
    return layOutFamily(laidOut.lines[f] as Buffer, laidOut.openMetricsLines[f], queue);
  });

  const plan = (format: 'text' | 'openmetrics'): BodyPlan => {
    const body = new BodyPlan(queue);
    input.families.forEach((family, f) => {
      const current = now[f] as FamilyNow;
      body.add(format === 'text' ? family.textHeader : family.openMetricsHeader);
      if (current.head && current.tail) {
        body.add(current.head);
        body.reuse(current.shared, current.tail);
      } else {
        body.add((format === 'openmetrics' ? current.openMetricsLines : undefined) ?? (current.lines as Buffer));
      }
    });
    body.close();
    return body;
  };
  const text = plan('text');
  const openMetrics = plan('openmetrics');
  const results = await runLimited(queue.tasks, COMPRESS_CONCURRENCY);

  // Keep copies of what later builds need: the laid-out lines themselves go to the serving thread.
  const built: BuiltFamily[] = now.map((current, f) => {
    if (input.families[f]?.previous) return current as BuiltFamily;
    return {
      length: current.length,
      openMetricsLength: current.openMetricsLength,
      lines: current.lines && copyOf(current.lines),
      openMetricsLines: current.openMetricsLines && copyOf(current.openMetricsLines),
      head: current.head && copyOf(current.head),
      tail: current.tail && copyOf(current.tail),
      shared: current.shared.map((unit) => ({
        length: unit.length,
        crc32: unit.crc32,
        deflated: typeof unit.deflated === 'number' ? (results[unit.deflated] as Buffer) : unit.deflated,
      })),
    };
  });
  return { text: text.finish(results), openMetrics: openMetrics.finish(results), built, lines: laidOut.lines, openMetricsLines: laidOut.openMetricsLines };
}
