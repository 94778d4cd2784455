import { DEFLATE_WINDOW, crc32Combine, crc32Of, deflateUnit, type PreparedBody } from './gzip.js';

/**
 * Builds the two bodies (text and OpenMetrics) from the groups' pre-rendered lines.
 *
 * Layout: families by name; each family is its header (different per format) followed by its
 * lines L, the groups' lines in group order (the same bytes in both formats unless samples
 * carry timestamps). L is laid out only for families whose lines changed; the others reuse
 * the last build's.
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

export interface CompressedUnit {
  /** Raw bytes (a view into the family's lines for shared units). */
  readonly raw: Buffer;
  readonly crc32: number;
  readonly deflated: Buffer;
}

/** What a build made of one family's lines; reused by the next build while they stay the same. */
export interface BuiltFamily {
  readonly lines: Buffer;
  /** Only when the lines differ in OpenMetrics (timestamps). */
  readonly openMetricsLines: Buffer | undefined;
  /** Units of `lines` from FIRST on, when the family is large and the same in both formats. */
  readonly shared: readonly CompressedUnit[];
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

export interface BuildOutput {
  readonly text: PreparedBody;
  readonly openMetrics: PreparedBody;
  /** Per family, in input order. */
  readonly built: readonly BuiltFamily[];
}

function segmentStart(ends: Uint32Array, i: number): number {
  return i === 0 ? 0 : (ends[i - 1] as number);
}

/**
 * Copies every changed family's lines out of the groups, in group order, into shared memory
 * (the event loop that serves scrapes reads them from there).
 */
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
    lines[f] = sharedBuffer(textSize[f] as number);
    if (differs[f]) openMetricsLines[f] = sharedBuffer(openMetricsSize[f] as number);
  }
  for (const group of groups) {
    const { familyIds, ends } = group;
    for (let s = 0; s < familyIds.length; s++) {
      const f = indexOfId[familyIds[s] as number] as number;
      if (!changed[f]) continue;
      const target = lines[f] as Buffer;
      const start = segmentStart(ends, s);
      textAt[f] = (textAt[f] as number) + group.lines.copy(target, textAt[f], start, ends[s]);
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

export function sharedBuffer(size: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(size));
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

interface PlannedUnit {
  readonly length: number;
  readonly crc32: number;
  /** Index into the build's compression results, or the finished unit when reused. */
  readonly deflated: number | Buffer;
}

/** Everything compressions need, queued while planning and run together. */
class CompressionQueue {
  readonly tasks: (() => Promise<Buffer>)[] = [];
  constructor(private readonly level: number) {}
  add(raw: Buffer, dictionary: Buffer | undefined): number {
    this.tasks.push(() => deflateUnit(raw, dictionary, this.level));
    return this.tasks.length - 1;
  }
}

/** Plans one format's body: identity pieces, and units in order (new ones queued for compression). */
class BodyPlan {
  readonly pieces: Buffer[] = [];
  readonly units: PlannedUnit[] = [];
  private length = 0;
  /** Raw bytes already covered by units, in order (views, no copies), for dictionaries. */
  private readonly emitted: Buffer[] = [];
  private open: Buffer[] = [];
  private openLength = 0;

  constructor(private readonly queue: CompressionQueue) {}

  piece(buffer: Buffer): void {
    this.pieces.push(buffer);
    this.length += buffer.length;
  }

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
    const crc = crc32Of(raw);
    this.units.push({ length: raw.length, crc32: crc, deflated: this.queue.add(raw, this.window()) });
    this.emitted.push(...this.open);
    this.open = [];
    this.openLength = 0;
  }

  /** A unit compressed once for both formats (queued in this build, or kept from the last). */
  reuse(raw: Buffer, crc32: number, deflated: number | Buffer): void {
    this.units.push({ length: raw.length, crc32, deflated });
    this.emitted.push(raw);
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

  finish(results: readonly Buffer[]): PreparedBody {
    const deflated: Buffer[] = [];
    let deflatedLength = 0;
    let crc = 0;
    let covered = 0;
    for (const unit of this.units) {
      const data = typeof unit.deflated === 'number' ? (results[unit.deflated] as Buffer) : unit.deflated;
      deflated.push(data);
      deflatedLength += data.length;
      crc = crc32Combine(crc, unit.crc32, unit.length);
      covered += unit.length;
    }
    if (covered !== this.length) throw new Error(`exposition build: compressed units cover ${covered} bytes of a ${this.length}-byte body`);
    return { pieces: this.pieces, length: this.length, crc32: crc, deflated, deflatedLength };
  }
}

/** A shared unit planned in this build: compressed with the others, filled in at the end. */
interface PlannedShared {
  readonly raw: Buffer;
  readonly crc32: number;
  readonly task: number;
}

/** Queues the shared units of a family's lines from FIRST on, each with the lines before it as dictionary. */
function planShared(lines: Buffer, queue: CompressionQueue): PlannedShared[] {
  const units: PlannedShared[] = [];
  for (let at = FIRST; at < lines.length; at += SHARED_UNIT) {
    const raw = lines.subarray(at, at + SHARED_UNIT);
    units.push({ raw, crc32: crc32Of(raw), task: queue.add(raw, lines.subarray(Math.max(0, at - DEFLATE_WINDOW), at)) });
  }
  return units;
}

/**
 * Everything up to the compression runs synchronously, so the input may change as soon as the
 * returned promise is pending: the lines are copied by then.
 */
export async function buildBodies(input: BuildInput): Promise<BuildOutput> {
  const laidOut = layOutLines(input);
  const queue = new CompressionQueue(input.gzipLevel);

  // Families whose lines changed: new shared units, queued first (they are most of the work).
  const fresh = new Map<number, { lines: Buffer; openMetricsLines: Buffer | undefined; shared: PlannedShared[] }>();
  for (const [f, family] of input.families.entries()) {
    if (family.previous) continue;
    const lines = laidOut.lines[f] as Buffer;
    const openMetricsLines = laidOut.openMetricsLines[f];
    const shared = !openMetricsLines && lines.length > SHARED_MIN ? planShared(lines, queue) : [];
    fresh.set(f, { lines, openMetricsLines, shared });
  }

  const plan = (format: 'text' | 'openmetrics'): BodyPlan => {
    const body = new BodyPlan(queue);
    for (const [f, family] of input.families.entries()) {
      const previous = family.previous;
      const now = fresh.get(f);
      const base = previous ?? (now as { lines: Buffer; openMetricsLines: Buffer | undefined });
      const header = format === 'text' ? family.textHeader : family.openMetricsHeader;
      const lines = format === 'openmetrics' ? (base.openMetricsLines ?? base.lines) : base.lines;
      body.piece(header);
      if (lines.length > 0) body.piece(lines);
      body.add(header);
      if (!base.openMetricsLines && lines.length > SHARED_MIN) {
        body.add(lines.subarray(0, FIRST));
        body.close();
        if (previous) for (const unit of previous.shared) body.reuse(unit.raw, unit.crc32, unit.deflated);
        else for (const unit of (now as { shared: PlannedShared[] }).shared) body.reuse(unit.raw, unit.crc32, unit.task);
      } else {
        body.add(lines);
      }
    }
    body.close();
    return body;
  };
  const text = plan('text');
  const openMetrics = plan('openmetrics');
  const results = await runLimited(queue.tasks, COMPRESS_CONCURRENCY);

  const built: BuiltFamily[] = input.families.map((family, f) => {
    if (family.previous) return family.previous;
    const now = fresh.get(f) as { lines: Buffer; openMetricsLines: Buffer | undefined; shared: PlannedShared[] };
    return {
      lines: now.lines,
      openMetricsLines: now.openMetricsLines,
      shared: now.shared.map((unit) => ({ raw: unit.raw, crc32: unit.crc32, deflated: results[unit.task] as Buffer })),
    };
  });
  return { text: text.finish(results), openMetrics: openMetrics.finish(results), built };
}
