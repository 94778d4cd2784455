import { DEFLATE_WINDOW, crc32Combine, crc32Of, deflateUnit } from './gzip.js';

/**
 * Builds the two bodies (text and OpenMetrics) from the groups' pre-rendered lines, on the
 * builder thread.
 *
 * Layout: families by name; each family is its header (different per format) followed by its
 * lines L, the groups' lines in group order (the same bytes in both formats unless samples
 * carry timestamps). L is laid out only for families whose lines changed; the builder keeps
 * the last L of the others, and copies every family into one contiguous body per format and
 * encoding once the compression is done (builder.ts).
 *
 * Compression, the expensive part, is split into units compressed independently on the
 * libuv thread pool. Small families and families whose OpenMetrics lines differ go into
 * per-format units, each with the 32 KiB of body before it as a preset dictionary, so the
 * result is as small as compressing the body in one go (DEFLATE back references never reach
 * further back than 32 KiB; the decoder's window holds exactly those bytes).
 *
 * A large family's lines are the same in both formats; they are laid out as runs of groups,
 * each run compressed once, on its own (no dictionary), for both bodies and kept while none of
 * its groups changes. A build dissolves only the runs holding a changed group and lays their
 * groups out again as new runs at the end of the family. The exporter polls each host at a
 * steady pace, so the groups that change together in one build tend to change together again:
 * a build compresses about what changed, not the whole family. Within a run, groups keep
 * their order; across runs, the order follows the history of changes.
 */

/** Lines of a family laid out as runs (shared by both formats) beyond this size. */
export const RUNS_MIN = 64 * 1024;
/**
 * A run is closed once it holds this much. Smaller runs are redone less often but compress
 * worse on their own: at 32 KiB a family's runs are about 6% larger than the family compressed
 * in one go, its groups in order.
 */
export const RUN_TARGET = 32 * 1024;
/** Raw bytes handed to zlib at once by per-format units. */
const SLICE = 256 * 1024;
/** A per-format unit is closed once it holds this much (several small families share one). */
const UNIT_TARGET = 64 * 1024;
/** Compressions in flight at once: the libuv thread pool has 4 threads by default. */
const COMPRESS_CONCURRENCY = 4;

/** A compressed unit; `Deflated` is a queued compression's index until it is done. */
export interface CompressedUnit<Deflated = Buffer> {
  readonly length: number;
  readonly crc32: number;
  readonly deflated: Deflated;
  /** The run it compresses, if any. */
  readonly runId?: number;
}

/**
 * What the builder keeps of a family's lines between builds, while they stay the same: the
 * lines (or runs) the bodies are copied from, what the per-format units are made from again
 * each build, and the runs' units.
 */
export interface BuiltFamily<Deflated = Buffer> {
  readonly length: number;
  readonly openMetricsLength: number;
  /** All of the lines: for small families and for families whose OpenMetrics lines differ. */
  readonly lines: Buffer | undefined;
  readonly openMetricsLines: Buffer | undefined;
  /** Of a family laid out as runs: its last DEFLATE_WINDOW bytes, the next unit's dictionary. */
  readonly tail: Buffer | undefined;
  /** Of a family laid out as runs: their units in order, the same in both formats. */
  readonly shared: readonly CompressedUnit<Deflated>[];
}

/**
 * How a large family's lines were last laid out as runs: the run of every group (by slot),
 * and the runs in body order. The next build that lays the family out edits `runOf` in place
 * (a failed build discards every family's runs) and replaces `runs`.
 */
export interface FamilyRuns {
  /** By group slot: the number of the run holding the group's lines of this family, or -1. */
  readonly runOf: Int32Array;
  readonly runs: readonly Run[];
}

/** A run's lines and their DEFLATE data, kept by the builder while none of its groups changes. */
export interface Run {
  readonly id: number;
  readonly lines: Buffer;
  readonly unit: CompressedUnit;
}

let lastRunId = 0;

export interface FamilyToBuild {
  readonly textHeader: Buffer;
  readonly openMetricsHeader: Buffer;
  /** The last build of this family's lines, when they have not changed since. */
  readonly previous: BuiltFamily | undefined;
  /** The runs of the last build that laid this family out as runs, if any. */
  readonly runs: FamilyRuns | undefined;
  /** Slots of the groups whose lines of this family changed, came or went since then. */
  readonly changedSlots: readonly number[];
}

export interface GroupToBuild {
  /** A small number of its own while the group exists, reused after it goes. */
  readonly slot: number;
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
  /** Per unit: the run it compresses, or undefined for a unit of this format alone. */
  readonly runIds: readonly (number | undefined)[];
  readonly deflatedLength: number;
  readonly crc32: number;
  readonly length: number;
}

export interface BuildOutput {
  readonly text: BuiltBody;
  readonly openMetrics: BuiltBody;
  /** Per family, in input order: what to keep for the next build. */
  readonly built: readonly BuiltFamily[];
  /** Per family: its runs for the next build (the same object where `previous` was reused). */
  readonly runs: readonly (FamilyRuns | undefined)[];
  /** Raw bytes this build compressed, of both bodies (a measure of its work). */
  readonly compressedBytes: number;
}

function segmentStart(ends: Uint32Array, i: number): number {
  return i === 0 ? 0 : (ends[i - 1] as number);
}

/** A buffer of its own (not a slice of a pool), so that it can be handed to another thread. */
function ownBuffer(size: number): Buffer {
  return Buffer.from(new ArrayBuffer(size));
}


/**
 * In shared memory, one buffer each: a run's lines and DEFLATE data are chunks of the bodies
 * as they are (chunks.ts), shared by the threads that serve them, never copied again.
 */
function sharedBuffer(size: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(size));
}

function sharedCopy(buffer: Buffer): Buffer {
  const copy = sharedBuffer(buffer.length);
  buffer.copy(copy);
  return copy;
}

/** A family laid out as runs in this build: each run's lines, and which runs are kept as they were. */
interface RunLayout {
  readonly runOf: Int32Array;
  /** Per run in body order: its lines, kept from the last build or laid out anew. */
  readonly lines: readonly Buffer[];
  /** Per run: the run kept from the last build, or undefined for a new one. */
  readonly kept: readonly (Run | undefined)[];
}

interface Layout {
  readonly lines: (Buffer | undefined)[];
  readonly openMetricsLines: (Buffer | undefined)[];
  readonly runs: (RunLayout | undefined)[];
}

/** In `runOf` while laying out: a group to place in a new run, with the groups that changed or after them. */
const LEFTOVER = -1;
const CHANGED = -2;
/** In `runOf` while laying out: the k-th new run of leftovers is LEFTOVER_RUN + k, of changed groups CHANGED_RUN + k. */
const LEFTOVER_RUN = 1 << 28;
const CHANGED_RUN = 1 << 29;

interface KeptRuns {
  readonly runOf: Int32Array;
  readonly kept: Run[];
}

/**
 * Dissolves the runs holding a changed group, and numbers the others 0.. in order. The
 * changed groups will go into new runs of their own at the end (with the last run when it is
 * short, so that runs do not splinter), the other groups of dissolved runs into new runs
 * before them: the groups that changed together stay together. Edits `runOf` of the last
 * build in place: a failed build discards every family's runs.
 */
function keepRuns(previous: FamilyRuns | undefined, changedSlots: readonly number[], slots: number): KeptRuns {
  if (!previous) return { runOf: new Int32Array(slots).fill(LEFTOVER), kept: [] };
  let runOf = previous.runOf;
  if (runOf.length < slots) {
    const grown = new Int32Array(Math.max(slots, runOf.length * 2)).fill(LEFTOVER);
    grown.set(runOf);
    runOf = grown;
  }
  const dissolved = new Uint8Array(previous.runs.length);
  for (const slot of changedSlots) {
    const run = slot < runOf.length ? (runOf[slot] as number) : -1;
    if (run >= 0) dissolved[run] = 1;
  }
  let lastKept = dissolved.lastIndexOf(0);
  if (lastKept >= 0 && (previous.runs[lastKept] as Run).lines.length >= RUN_TARGET / 2) lastKept = -1;
  const renumbered = new Int32Array(previous.runs.length);
  const kept: Run[] = [];
  previous.runs.forEach((run, i) => {
    renumbered[i] = i === lastKept ? CHANGED : dissolved[i] ? LEFTOVER : kept.length;
    if (i !== lastKept && !dissolved[i]) kept.push(run);
  });
  for (let slot = 0; slot < runOf.length; slot++) {
    const run = runOf[slot] as number;
    if (run >= 0) runOf[slot] = renumbered[run] as number;
  }
  for (const slot of changedSlots) runOf[slot] = CHANGED;
  return { runOf, kept };
}

/**
 * Copies every changed family's lines out of the groups: in group order, or run after run.
 * Long because it is the hot loop of a rebuild at a million series: the byte offsets it
 * fills are shared by both layouts, and splitting it would copy or re-walk them.
 */
function layOutLines(input: BuildInput): Layout {
  const { families, groups, indexOfId } = input;
  const n = families.length;
  const changed = families.map((f) => f.previous === undefined);
  const textSize = new Float64Array(n);
  const openMetricsSize = new Float64Array(n);
  const differs = new Uint8Array(n);
  let slots = 0;
  for (const group of groups) {
    slots = Math.max(slots, group.slot + 1);
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

  // Runs: keep the unchanged ones, then give every group without a run a new one at the end.
  const runOf: (Int32Array | undefined)[] = new Array<Int32Array | undefined>(n);
  const kept: (KeptRuns | undefined)[] = new Array<KeptRuns | undefined>(n);
  const keptSize: number[][] = [];
  const leftoverSize: number[][] = [];
  const changedSize: number[][] = [];
  for (let f = 0; f < n; f++) {
    const family = families[f] as FamilyToBuild;
    if (!changed[f] || differs[f] || (textSize[f] as number) <= RUNS_MIN) continue;
    const runs = keepRuns(family.runs, family.changedSlots, slots);
    runOf[f] = runs.runOf;
    kept[f] = runs;
    keptSize[f] = runs.kept.map(() => 0);
    leftoverSize[f] = [];
    changedSize[f] = [];
  }
  const place = (sizes: number[], bytes: number): number => {
    const open = sizes.length - 1;
    if (open >= 0 && (sizes[open] as number) < RUN_TARGET) {
      sizes[open] = (sizes[open] as number) + bytes;
      return open;
    }
    sizes.push(bytes);
    return open + 1;
  };
  for (const group of groups) {
    const { familyIds, ends, slot } = group;
    for (let s = 0; s < familyIds.length; s++) {
      const f = indexOfId[familyIds[s] as number] as number;
      const runsOfFamily = runOf[f];
      if (!runsOfFamily) continue;
      const bytes = (ends[s] as number) - segmentStart(ends, s);
      const run = runsOfFamily[slot] as number;
      if (run === CHANGED) runsOfFamily[slot] = CHANGED_RUN + place(changedSize[f] as number[], bytes);
      else if (run === LEFTOVER) runsOfFamily[slot] = LEFTOVER_RUN + place(leftoverSize[f] as number[], bytes);
      else {
        const sizes = keptSize[f] as number[];
        sizes[run] = (sizes[run] as number) + bytes;
      }
    }
  }
  // Number the new runs after the kept ones: leftovers first, then the changed groups.
  const runSize: number[][] = [];
  for (let f = 0; f < n; f++) {
    const runsOfFamily = runOf[f];
    if (!runsOfFamily) continue;
    const keptCount = (kept[f] as KeptRuns).kept.length;
    const leftovers = (leftoverSize[f] as number[]).length;
    for (let slot = 0; slot < runsOfFamily.length; slot++) {
      const run = runsOfFamily[slot] as number;
      if (run >= CHANGED_RUN) runsOfFamily[slot] = keptCount + leftovers + run - CHANGED_RUN;
      else if (run >= LEFTOVER_RUN) runsOfFamily[slot] = keptCount + run - LEFTOVER_RUN;
      // A group marked but without lines of this family any more.
      else if (run < 0) runsOfFamily[slot] = -1;
    }
    runSize[f] = [...(keptSize[f] as number[]), ...(leftoverSize[f] as number[]), ...(changedSize[f] as number[])];
  }

  const lines: (Buffer | undefined)[] = new Array<Buffer | undefined>(n);
  const openMetricsLines: (Buffer | undefined)[] = new Array<Buffer | undefined>(n);
  const runs: (RunLayout | undefined)[] = new Array<RunLayout | undefined>(n);
  const runAt: Float64Array[] = [];
  const textAt = new Float64Array(n);
  const openMetricsAt = new Float64Array(n);
  const keptCount = new Int32Array(n);
  const runLines: Buffer[][] = [];
  for (let f = 0; f < n; f++) {
    if (!changed[f]) continue;
    const sizes = runSize[f];
    if (!sizes) {
      lines[f] = ownBuffer(textSize[f] as number);
      if (differs[f]) openMetricsLines[f] = ownBuffer(openMetricsSize[f] as number);
      continue;
    }
    const keptRuns = (kept[f] as KeptRuns).kept;
    keptCount[f] = keptRuns.length;
    runLines[f] = sizes.map((size, run) => {
      const keptRun = keptRuns[run];
      if (!keptRun) return sharedBuffer(size);
      // A kept run's groups did not change: anything else is a bug in tracking the changes.
      if (keptRun.lines.length !== size) throw new Error(`run ${run} of a family kept ${keptRun.lines.length} bytes but holds ${size}`);
      return keptRun.lines;
    });
    runAt[f] = new Float64Array(sizes.length);
    runs[f] = { runOf: runOf[f] as Int32Array, lines: runLines[f] as Buffer[], kept: sizes.map((_, run) => keptRuns[run]) };
  }
  for (const group of groups) {
    const { familyIds, ends, slot } = group;
    for (let s = 0; s < familyIds.length; s++) {
      const f = indexOfId[familyIds[s] as number] as number;
      if (!changed[f]) continue;
      const start = segmentStart(ends, s);
      const at = runAt[f];
      if (at) {
        const run = (runOf[f] as Int32Array)[slot] as number;
        if (run >= (keptCount[f] as number)) at[run] = (at[run] as number) + group.lines.copy((runLines[f] as Buffer[])[run] as Buffer, at[run], start, ends[s]);
        continue;
      }
      const target = lines[f] as Buffer;
      textAt[f] = (textAt[f] as number) + group.lines.copy(target, textAt[f], start, ends[s]);
      const openMetricsTarget = openMetricsLines[f];
      if (openMetricsTarget) {
        const source = group.openMetricsLines ?? group.lines;
        const sourceEnds = group.openMetricsEnds ?? ends;
        openMetricsAt[f] = (openMetricsAt[f] as number) + source.copy(openMetricsTarget, openMetricsAt[f], segmentStart(sourceEnds, s), sourceEnds[s]);
      }
    }
  }
  return { lines, openMetricsLines, runs };
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
  rawBytes = 0;
  constructor(private readonly level: number) {}
  add(raw: Buffer, dictionary: Buffer | undefined, shared = false): number {
    this.rawBytes += raw.length;
    this.tasks.push(shared ? () => deflateUnit(raw, dictionary, this.level).then(sharedCopy) : () => deflateUnit(raw, dictionary, this.level));
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
    for (let at = 0; at < part.length; at += SLICE) {
      const slice = part.subarray(at, at + SLICE);
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
    const runIds: (number | undefined)[] = [];
    let deflatedLength = 0;
    let crc = 0;
    let length = 0;
    for (const unit of this.units) {
      const data = typeof unit.deflated === 'number' ? (results[unit.deflated] as Buffer) : unit.deflated;
      deflated.push(data);
      runIds.push(unit.runId);
      deflatedLength += data.length;
      crc = crc32Combine(crc, unit.crc32, unit.length);
      length += unit.length;
    }
    return { deflated, runIds, deflatedLength, crc32: crc, length };
  }
}

/** A family as this build sees it: kept from the last build, or laid out now. */
type FamilyNow = BuiltFamily<number | Buffer>;

/** The last `size` bytes of the pieces, in one buffer. */
function lastBytes(pieces: readonly Buffer[], size: number): Buffer {
  const parts: Buffer[] = [];
  let length = 0;
  for (let i = pieces.length - 1; i >= 0 && length < size; i--) {
    const piece = pieces[i] as Buffer;
    const take = Math.min(piece.length, size - length);
    parts.unshift(piece.subarray(piece.length - take));
    length += take;
  }
  return Buffer.concat(parts, length);
}

/** Lays out a changed family: its lines for per-format units, or its runs, queueing the new ones. */
function layOutFamily(lines: Buffer | undefined, openMetricsLines: Buffer | undefined, runs: RunLayout | undefined, queue: CompressionQueue): FamilyNow {
  if (!runs) {
    const text = lines as Buffer;
    return { length: text.length, openMetricsLength: (openMetricsLines ?? text).length, lines: text, openMetricsLines, tail: undefined, shared: [] };
  }
  let length = 0;
  const shared = runs.lines.map((raw, run): PlannedUnit => {
    length += raw.length;
    const kept = runs.kept[run];
    if (kept) return kept.unit;
    return { length: raw.length, crc32: crc32Of(raw), deflated: queue.add(raw, undefined, true), runId: ++lastRunId };
  });
  return { length, openMetricsLength: length, lines: undefined, openMetricsLines: undefined, tail: lastBytes(runs.lines, DEFLATE_WINDOW), shared };
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
    return layOutFamily(laidOut.lines[f], laidOut.openMetricsLines[f], laidOut.runs[f], queue);
  });

  const plan = (format: 'text' | 'openmetrics'): BodyPlan => {
    const body = new BodyPlan(queue);
    input.families.forEach((family, f) => {
      const current = now[f] as FamilyNow;
      body.add(format === 'text' ? family.textHeader : family.openMetricsHeader);
      if (current.tail) {
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
  const finished = (unit: PlannedUnit): CompressedUnit => ({
    length: unit.length,
    crc32: unit.crc32,
    deflated: typeof unit.deflated === 'number' ? (results[unit.deflated] as Buffer) : unit.deflated,
    ...(unit.runId === undefined ? {} : { runId: unit.runId }),
  });

  const built: BuiltFamily[] = now.map((current, f) => {
    if (input.families[f]?.previous) return current as BuiltFamily;
    return { ...current, shared: current.shared.map(finished) };
  });
  const runs = input.families.map((family, f): FamilyRuns | undefined => {
    if (family.previous) return family.runs;
    const layout = laidOut.runs[f];
    if (!layout) return undefined;
    const units = (built[f] as BuiltFamily).shared;
    const familyRuns = layout.lines.map((lines, i): Run => {
      const kept = layout.kept[i];
      if (kept) return kept;
      const unit = units[i] as CompressedUnit;
      return { id: unit.runId as number, lines, unit };
    });
    return { runOf: layout.runOf, runs: familyRuns };
  });
  return {
    text: text.finish(results),
    openMetrics: openMetrics.finish(results),
    built,
    runs,
    compressedBytes: queue.rawBytes,
  };
}
