import { OWN_CHUNK_MIN_BYTES } from './chunks.js';
import { DEFLATE_WINDOW, crc32Combine, crc32Of, deflateUnit } from './gzip.js';

/**
 * Builds the two bodies (text and OpenMetrics) from the groups' pre-rendered lines, on the
 * builder thread.
 *
 * Layout: families by name; each family is its header (different per format) followed by its
 * lines L, the groups' lines in group order (the same bytes in both formats unless samples
 * carry timestamps). L is laid out only for families whose lines changed; the builder keeps
 * the last L of the others, and lays every family out as the chunks of the bodies once the
 * compression is done (builder.ts).
 *
 * Compression, the expensive part, is split into units compressed independently, in the
 * builder thread. Families of a few lines, families with OpenMetrics lines of their own (a
 * group with timestamped samples gives each of its families those) and their headers go into
 * per-format units, each with up to 32 KiB of body before it as a preset dictionary, so the
 * result is about as small as compressing the body in one go (DEFLATE back references never
 * reach further back than 32 KiB; the decoder's window holds exactly those bytes). Those are
 * compressed again in every build, so they hold little. The header of a family compressed on
 * its own (below) is a unit of its own, compressed once (no dictionary) and kept.
 *
 * A family with more than ALONE_MIN bytes of lines, the same in both formats, is compressed
 * once for both bodies on its own (no dictionary) and kept while its lines stay the same.
 *
 * A large family's lines are the same in both formats; they are laid out as runs of groups,
 * each run compressed once, on its own (no dictionary), for both bodies and kept while none of
 * its groups changes. A build dissolves only the runs holding a changed group and lays their
 * groups out again as new runs at the end of the family. The exporter polls each host at a
 * steady pace, so the groups that change together in one build tend to change together again:
 * a build compresses about what changed, not the whole family. Within a run, groups keep
 * their order; across runs, the order follows the history of changes.
 */

/**
 * Lines of a family compressed on their own, once for both formats, beyond this size. Every
 * unit on its own costs its own code tables, about a hundred bytes: beyond 4 KiB that is at most
 * a few percent. Below it, families go into the per-format units, which every build compresses
 * again: at 100,000 series those held 2.4 MB of lines (193 of the 254 families, all up to
 * RUNS_MIN), compressed twice a build, changed or not; now 95 kB (106 families). The gzip body
 * at 100,000 series is 2.4% larger, at a million no larger (docs/scaling.md); with every
 * family on its own, the golden body (small families only) was 1.9 times as large.
 */
export const ALONE_MIN = 4 * 1024;
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
export interface CompressedUnit {
  readonly length: number;
  readonly crc32: number;
  readonly deflated: Buffer;
}

/**
 * What the builder keeps of a family's lines between builds, while they stay the same: the
 * lines (or runs) the bodies are copied from, and either what the per-format units are made
 * from again each build or the units compressed once for both formats (its runs', or its
 * lines' when it has more than ALONE_MIN bytes of them).
 */
export interface BuiltFamily {
  readonly length: number;
  readonly openMetricsLength: number;
  /** All of the lines, of every family not laid out as runs (the raw bodies are copied from them). */
  readonly lines: Buffer | undefined;
  readonly openMetricsLines: Buffer | undefined;
  /** Of a family compressed once for both formats (as runs, or whole): its last DEFLATE_WINDOW bytes, the next unit's dictionary. */
  readonly tail: Buffer | undefined;
  /** Of a family compressed once for both formats: its units in order (its runs', or its lines'). */
  readonly shared: readonly CompressedUnit[];
}

/**
 * How a large family's lines were last laid out as runs: the run of every group (by slot),
 * and the runs in body order. The next build that lays the family out edits `runOf` in place
 * (a failed build discards every family's runs) and replaces `runs`.
 */
export interface FamilyRuns {
  /** By group slot: the id of the run holding the group's lines of this family, or -1. */
  readonly runOf: Float64Array;
  readonly runs: readonly Run[];
}

/** A run's groups, lines and DEFLATE data, kept by the builder while none of its groups changes. */
export interface Run {
  /** Unique in the process (ids count up to 2^53: they never wrap). */
  readonly id: number;
  /** Slots of its groups, in the order of their lines. */
  readonly slots: Int32Array;
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
  /** By group slot: the index of this family's segment in the group, or -1 (or beyond the end) where it has none. */
  readonly segmentOf: Int32Array;
  /** Bytes of its lines in all groups, per format. */
  readonly textBytes: number;
  readonly openMetricsBytes: number;
  /** Some group holding lines of this family has OpenMetrics lines of its own (timestamps). */
  readonly differs: boolean;
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

/**
 * A build reads only the groups of the families that changed, through each family's
 * `segmentOf`: at a million series most groups and most runs are the same as in the last
 * build, and walking all of them took most of a build's time.
 */
export interface BuildInput {
  /** In output order. */
  readonly families: readonly FamilyToBuild[];
  /** By slot: the group there, if any. */
  readonly groupAt: readonly (GroupToBuild | undefined)[];
  /** By slot: the group's place in output order. */
  readonly orderOf: Int32Array;
  /** The slots of all groups, in output order. */
  readonly slotsInOrder: Int32Array;
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
  /** Per family: its runs for the next build (the same object where `previous` was reused). */
  readonly runs: readonly (FamilyRuns | undefined)[];
  /** Raw bytes this build compressed, of both bodies (a measure of its work). */
  readonly compressedBytes: number;
}

/** Where segment `i` of a group's lines starts: each ends where the next starts. */
export function segmentStart(ends: Uint32Array, i: number): number {
  return i === 0 ? 0 : (ends[i - 1] as number);
}

/** A buffer of its own (not a slice of a pool), so that it can be handed to another thread. */
function ownBuffer(size: number): Buffer {
  return Buffer.from(new ArrayBuffer(size));
}

/**
 * In shared memory, one buffer each: a run's lines (and its DEFLATE data where that is as
 * large as a chunk) are chunks of the bodies as they are (chunks.ts), shared by the threads
 * that serve them, never copied again.
 */
function sharedBuffer(size: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(size));
}

function exactCopy(buffer: Buffer): Buffer {
  return buffer.byteOffset === 0 && buffer.length === buffer.buffer.byteLength ? buffer : Buffer.from(new Uint8Array(buffer).buffer);
}

function sharedCopy(buffer: Buffer): Buffer {
  const copy = sharedBuffer(buffer.length);
  buffer.copy(copy);
  return copy;
}

/** A family laid out as runs in this build: each run's lines, and which runs are kept as they were. */
interface RunLayout {
  readonly runOf: Float64Array;
  /** Per run in body order: its lines, kept from the last build or laid out anew. */
  readonly lines: readonly Buffer[];
  /** Per run: the run kept from the last build, or undefined for a new one. */
  readonly kept: readonly (Run | undefined)[];
  /** Per run: its id and its groups' slots. */
  readonly ids: readonly number[];
  readonly slots: readonly Int32Array[];
}

interface Layout {
  readonly lines: (Buffer | undefined)[];
  readonly openMetricsLines: (Buffer | undefined)[];
  readonly runs: (RunLayout | undefined)[];
}

/** One family's segment of one group, in either format. */
class Segments {
  constructor(
    private readonly family: FamilyToBuild,
    private readonly groupAt: readonly (GroupToBuild | undefined)[],
  ) {}

  private group(slot: number): { group: GroupToBuild; segment: number } {
    const segment = this.family.segmentOf[slot] ?? -1;
    const group = this.groupAt[slot];
    if (segment < 0 || !group) throw new Error(`no group in slot ${slot} holds lines of this family`);
    return { group, segment };
  }

  length(slot: number): number {
    const { group, segment } = this.group(slot);
    return (group.ends[segment] as number) - segmentStart(group.ends, segment);
  }

  /** Copies the segments of the groups in `slots`, in that order, into one buffer of `size` bytes. */
  copy(slots: ArrayLike<number>, target: Buffer, format: 'text' | 'openmetrics'): Buffer {
    let at = 0;
    for (let i = 0; i < slots.length; i++) {
      const { group, segment } = this.group(slots[i] as number);
      const lines = format === 'openmetrics' ? group.openMetricsLines ?? group.lines : group.lines;
      const ends = format === 'openmetrics' ? group.openMetricsEnds ?? group.ends : group.ends;
      at += lines.copy(target, at, segmentStart(ends, segment), ends[segment]);
    }
    // The family's byte counts and its groups are kept apart (builder.ts): a difference is a bug there.
    if (at !== target.length) throw new Error(`a family's groups hold ${at} bytes of its lines where ${target.length} were counted`);
    return target;
  }
}

/** The slots of the groups holding lines of the family, in output order. */
function membersInOrder(family: FamilyToBuild, input: BuildInput): number[] {
  const members: number[] = [];
  for (const slot of input.slotsInOrder) if ((family.segmentOf[slot] ?? -1) >= 0) members.push(slot);
  return members;
}

/** Slots of groups that exist, in output order: their ranks sorted as numbers (natively), then the slots of those ranks. */
function inOutputOrder(slots: readonly number[], input: BuildInput): Int32Array {
  const ranks = Int32Array.from(slots, (slot) => input.orderOf[slot] as number);
  ranks.sort();
  return ranks.map((rank) => input.slotsInOrder[rank] as number);
}

/** While laying out runs: a slot in `runOf` whose group goes into a new run with the changed ones. */
const CHANGED = -2;

/**
 * Lays a large family out as runs. Dissolves the runs holding a changed group and keeps the
 * others as they are, in order. The changed groups go into new runs of their own at the end
 * (with the last run when it is short, so that runs do not splinter), the other groups of the
 * dissolved runs into new runs before them: the groups that changed together stay together.
 * Edits `runOf` of the last build in place: a failed build discards every family's runs.
 */
function layOutRuns(family: FamilyToBuild, input: BuildInput): RunLayout {
  const segments = new Segments(family, input.groupAt);
  const previous = family.runs;
  let runOf = previous?.runOf ?? new Float64Array(input.groupAt.length).fill(-1);
  if (runOf.length < input.groupAt.length) {
    const grown = new Float64Array(Math.max(input.groupAt.length, runOf.length * 2)).fill(-1);
    grown.set(runOf);
    runOf = grown;
  }
  const kept: Run[] = [];
  let leftovers: number[] = [];
  const changed: number[] = [];
  if (!previous) {
    // Not push(...members): spreading a list of a hundred thousand slots overflows the stack.
    leftovers = membersInOrder(family, input);
  } else {
    const indexOfRun = new Map<number, number>();
    previous.runs.forEach((run, i) => indexOfRun.set(run.id, i));
    const dissolved = new Uint8Array(previous.runs.length);
    for (const slot of family.changedSlots) {
      const run = slot < runOf.length ? indexOfRun.get(runOf[slot] as number) : undefined;
      if (run !== undefined) dissolved[run] = 1;
    }
    for (const slot of family.changedSlots) {
      if (runOf[slot] === CHANGED) continue;
      runOf[slot] = CHANGED;
      changed.push(slot);
    }
    let lastKept = dissolved.lastIndexOf(0);
    if (lastKept >= 0 && (previous.runs[lastKept] as Run).lines.length >= RUN_TARGET / 2) lastKept = -1;
    previous.runs.forEach((run, i) => {
      if (i === lastKept) for (const slot of run.slots) changed.push(slot);
      else if (!dissolved[i]) kept.push(run);
      else for (const slot of run.slots) if (runOf[slot] !== CHANGED) leftovers.push(slot);
    });
  }

  const ids = kept.map((run) => run.id);
  const slots: Int32Array[] = kept.map((run) => run.slots);
  const lines: Buffer[] = kept.map((run) => run.lines);
  const placeAll = (groups: number[]): void => {
    let open: number[] = [];
    let size = 0;
    const close = (): void => {
      if (open.length === 0) return;
      const id = ++lastRunId;
      const run = Int32Array.from(open);
      for (const slot of run) runOf[slot] = id;
      ids.push(id);
      slots.push(run);
      lines.push(segments.copy(run, sharedBuffer(size), 'text'));
      open = [];
      size = 0;
    };
    const holding = groups.filter((slot) => {
      // A changed group without lines of this family any more (or gone).
      if ((family.segmentOf[slot] ?? -1) >= 0) return true;
      runOf[slot] = -1;
      return false;
    });
    for (const slot of inOutputOrder(holding, input)) {
      open.push(slot);
      size += segments.length(slot);
      if (size >= RUN_TARGET) close();
    }
    close();
  };
  placeAll(leftovers);
  placeAll(changed);
  return { runOf, lines, kept: lines.map((_, run) => kept[run]), ids, slots };
}

/** Copies every changed family's lines out of its groups: in group order, or as runs. */
function layOutLines(input: BuildInput): Layout {
  const n = input.families.length;
  const lines = new Array<Buffer | undefined>(n);
  const openMetricsLines = new Array<Buffer | undefined>(n);
  const runs = new Array<RunLayout | undefined>(n);
  input.families.forEach((family, f) => {
    if (family.previous) return;
    if (!family.differs && family.textBytes > RUNS_MIN) {
      runs[f] = layOutRuns(family, input);
      return;
    }
    const segments = new Segments(family, input.groupAt);
    const slots = membersInOrder(family, input);
    lines[f] = segments.copy(slots, ownBuffer(family.textBytes), 'text');
    if (family.differs) openMetricsLines[f] = segments.copy(slots, ownBuffer(family.openMetricsBytes), 'openmetrics');
  });
  return { lines, openMetricsLines, runs };
}

/** Compresses the units of one build, counting the raw bytes it compressed. */
class Compressor {
  rawBytes = 0;
  constructor(private readonly level: number) {}
  unit(raw: Buffer, dictionary: Buffer | undefined, shared = false): CompressedUnit {
    this.rawBytes += raw.length;
    // Kept across builds, so never a view: zlib hands back a slice of its 16 KiB output buffer.
    const deflated = deflateUnit(raw, dictionary, this.level);
    // Shared only where it is a chunk as it is: a smaller one is copied into a chunk anyway, and
    // as an array buffer it counts as this thread's external memory, which shared ones do not.
    return { length: raw.length, crc32: crc32Of(raw), deflated: shared && deflated.length >= OWN_CHUNK_MIN_BYTES ? sharedCopy(deflated) : exactCopy(deflated) };
  }
}

/**
 * The units of the headers of families compressed once for both formats, by header: a header
 * between two such families would otherwise be a unit of a hundred bytes compressed again in
 * every build, twice (one per format), each with a dictionary to read first.
 */
const headerUnits = new WeakMap<Buffer, CompressedUnit>();

/**
 * A per-format unit's dictionary is at most this many times as long as the unit: loading a
 * dictionary costs about what compressing as many bytes does, and the few bytes of a unit
 * between two families compressed on their own gain little from 32 KiB of body before them.
 */
const DICTIONARY_PER_BYTE = 4;

/** One format's body as units in order, compressing the new ones. */
class BodyPlan {
  readonly units: CompressedUnit[] = [];
  /** Raw bytes already covered by units, in order (views, no copies), for dictionaries. */
  private readonly emitted: Buffer[] = [];
  private open: Buffer[] = [];
  private openLength = 0;

  constructor(private readonly compressor: Compressor) {}

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
    this.units.push(this.compressor.unit(raw, this.window(Math.min(DEFLATE_WINDOW, DICTIONARY_PER_BYTE * raw.length))));
    this.emitted.push(...this.open);
    this.open = [];
    this.openLength = 0;
  }

  /** A family's header, as a unit of its own that is compressed once and kept while the header is the same. */
  header(header: Buffer): void {
    this.close();
    let unit = headerUnits.get(header);
    if (!unit) {
      unit = this.compressor.unit(header, undefined);
      headerUnits.set(header, unit);
    }
    this.units.push(unit);
    this.emitted.push(header);
  }

  /**
   * Units compressed once for both formats (in this build, or kept from the last),
   * followed by the last bytes they cover, which later dictionaries may need.
   */
  reuse(units: readonly CompressedUnit[], tail: Buffer): void {
    this.close();
    this.units.push(...units);
    this.emitted.push(tail);
  }

  /** The last `want` bytes emitted so far (fewer at the start of the body). */
  private window(want: number): Buffer {
    return lastBytes(this.emitted, want);
  }

  finish(): BuiltBody {
    const deflated: Buffer[] = [];
    let deflatedLength = 0;
    let crc = 0;
    let length = 0;
    for (const unit of this.units) {
      deflated.push(unit.deflated);
      deflatedLength += unit.deflated.length;
      crc = crc32Combine(crc, unit.crc32, unit.length);
      length += unit.length;
    }
    return { deflated, deflatedLength, crc32: crc, length };
  }
}

/** The last `size` bytes of the pieces (fewer if they hold less), in one buffer: a view of the last piece when it holds them. */
function lastBytes(pieces: readonly Buffer[], size: number): Buffer {
  const last = pieces.at(-1);
  if (last && last.length >= size) return last.subarray(last.length - size);
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

/** Lays out a changed family: its lines for per-format units, or one unit of its own for both formats, or its runs; compresses the new units. */
function layOutFamily(lines: Buffer | undefined, openMetricsLines: Buffer | undefined, runs: RunLayout | undefined, compressor: Compressor): BuiltFamily {
  if (!runs) {
    const text = lines as Buffer;
    if (openMetricsLines || text.length <= ALONE_MIN) {
      return { length: text.length, openMetricsLength: (openMetricsLines ?? text).length, lines: text, openMetricsLines, tail: undefined, shared: [] };
    }
    // The same lines in both formats: one unit of their own, kept while they stay the same.
    const unit = compressor.unit(text, undefined);
    return { length: text.length, openMetricsLength: text.length, lines: text, openMetricsLines: undefined, tail: text.subarray(Math.max(0, text.length - DEFLATE_WINDOW)), shared: [unit] };
  }
  let length = 0;
  const shared = runs.lines.map((raw, run): CompressedUnit => {
    length += raw.length;
    const kept = runs.kept[run];
    if (kept) return kept.unit;
    return compressor.unit(raw, undefined, true);
  });
  return { length, openMetricsLength: length, lines: undefined, openMetricsLines: undefined, tail: lastBytes(runs.lines, DEFLATE_WINDOW), shared };
}

/** Builds both bodies, synchronously: the groups may be replaced as soon as it returns. */
export function buildBodies(input: BuildInput): BuildOutput {
  const laidOut = layOutLines(input);
  const compressor = new Compressor(input.gzipLevel);
  const built: BuiltFamily[] = input.families.map((family, f) => {
    if (family.previous) return family.previous;
    return layOutFamily(laidOut.lines[f], laidOut.openMetricsLines[f], laidOut.runs[f], compressor);
  });

  const plan = (format: 'text' | 'openmetrics'): BodyPlan => {
    const body = new BodyPlan(compressor);
    input.families.forEach((family, f) => {
      const current = built[f] as BuiltFamily;
      const header = format === 'text' ? family.textHeader : family.openMetricsHeader;
      if (current.tail) {
        body.header(header);
        body.reuse(current.shared, current.tail);
      } else {
        body.add(header);
        body.add((format === 'openmetrics' ? current.openMetricsLines : undefined) ?? (current.lines as Buffer));
      }
    });
    body.close();
    return body;
  };
  const text = plan('text');
  const openMetrics = plan('openmetrics');
  const runs = input.families.map((family, f): FamilyRuns | undefined => {
    if (family.previous) return family.runs;
    const layout = laidOut.runs[f];
    if (!layout) return undefined;
    const units = (built[f] as BuiltFamily).shared;
    const familyRuns = layout.lines.map((lines, i): Run => {
      const kept = layout.kept[i];
      if (kept) return kept;
      return { id: layout.ids[i] as number, slots: layout.slots[i] as Int32Array, lines, unit: units[i] as CompressedUnit };
    });
    return { runOf: layout.runOf, runs: familyRuns };
  });
  return {
    text: text.finish(),
    openMetrics: openMetrics.finish(),
    built,
    runs,
    compressedBytes: compressor.rawBytes,
  };
}
