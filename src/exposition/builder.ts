import type { MessagePort } from 'node:worker_threads';
import { buildBodies, segmentStart, type BuildOutput, type BuiltBody, type BuiltFamily, type FamilyRuns, type FamilyToBuild, type GroupToBuild } from './assemble.js';
import { ChunkedBodies, type Chunk, type ChunkLayout } from './chunks.js';

/**
 * The builder thread's side of one MetricStore: the groups' encoded lines (handed over at
 * publish time, so the thread that serves scrapes keeps none of them), the family headers,
 * which families changed, and what the last build made of each family. `build` turns that
 * into the two bodies.
 *
 * The messages below are all that crosses between the threads; they are applied in the order
 * they were posted, so a build sees exactly the publishes made before it was asked for.
 */

export interface FamilyMessage {
  readonly type: 'family';
  readonly store: number;
  readonly id: number;
  readonly name: string;
  readonly textHeader: string;
  readonly openMetricsHeader: string;
}

export interface DropFamilyMessage {
  readonly type: 'drop-family';
  readonly store: number;
  readonly id: number;
}

export interface GroupMessage {
  readonly type: 'group';
  readonly store: number;
  readonly name: string;
  readonly familyIds: Int32Array;
  readonly lines: Uint8Array;
  readonly ends: Uint32Array;
  readonly openMetricsLines: Uint8Array | undefined;
  readonly openMetricsEnds: Uint32Array | undefined;
}

export interface RetractMessage {
  readonly type: 'retract';
  readonly store: number;
  readonly name: string;
}

export interface BuildRequest {
  readonly type: 'build';
  readonly store: number;
  readonly request: number;
  readonly gzipLevel: number;
}

/** The serving side lost a reply: the next build sends every chunk again. */
export interface ForgetChunksMessage {
  readonly type: 'forget-chunks';
  readonly store: number;
}

/**
 * How many nice steps the builder thread runs below the rest of the process (Linux): builds
 * are background work, and on a machine with few cores they took the CPU from polling and from
 * the scrapes; the compression runs in it too. At a million series on two shared cores under
 * eight scrapers, with builds that cost twice what they do now, the main thread's event-loop
 * delay p99 went from 157-290 ms at 0 to 29-95 ms at 5; at 10 a saturated machine left builds so
 * little CPU that no change reached /metrics for the 8 s the scrapers ran. With today's builds,
 * 2 keeps the loops where 5 did and a change under the scrapers reaches /metrics in 1.0 to
 * 1.3 s instead of 1.6 to 1.8 s (docs/scaling.md).
 */
export const BUILDER_NICE_INCREMENT = 2;

export interface MemoryRequest {
  readonly type: 'memory';
  readonly request: number;
  /** Collect garbage first, where the process runs with --expose-gc (the scale bench): the heap after a full collection. */
  readonly collectGarbage?: boolean;
}

/**
 * From now on, send this store's chunks to `port` (a serving thread's) instead of in the build
 * replies: the thread that serves the bodies gets them, the main thread holds none (when it
 * forwarded them, its collector marked on the event loop in steps back to back at a million
 * series: docs/scaling.md).
 */
export interface ChunkPortMessage {
  readonly type: 'chunk-port';
  readonly store: number;
  readonly port: MessagePort;
}

/** On a chunk port: the chunks a build made (or, first, every chunk of the last build). */
export interface ChunksMessage {
  readonly type: 'chunks';
  /** The build's request number; a snapshot's `build` names the build it shows. */
  readonly build: number;
  readonly chunks: readonly Chunk[];
}

export type BuilderMessage = FamilyMessage | DropFamilyMessage | GroupMessage | RetractMessage | BuildRequest | ForgetChunksMessage | MemoryRequest | ChunkPortMessage;

/** One format's data part as scrapes write it: each encoding a few large chunks (chunks.ts). */
export interface BuiltFormat {
  /** Chunk ids of the raw body, in order. */
  readonly raw: Int32Array;
  /** Chunk ids of its DEFLATE data, in order. */
  readonly deflated: Int32Array;
  /** CRC-32 of the raw body. */
  readonly crc32: number;
  readonly length: number;
  readonly deflatedLength: number;
}

/** Said by the builder thread unasked, once it started: how it runs. */
export interface BuilderNotice {
  readonly type: 'notice';
  /** warn: something an operator should know; debug: as designed. */
  readonly level: 'debug' | 'info' | 'warn';
  readonly message: string;
}

export type BuilderReply =
  | { readonly type: 'built'; readonly request: number; readonly changed: false }
  | {
      readonly type: 'built';
      readonly request: number;
      readonly changed: true;
      /** Family ids in body order, so the serving thread can check the builder built what it holds. */
      readonly familyIds: Int32Array;
      /** The chunks made in this build (shared memory: posting shares them); the others were sent before. None where the store's chunks go to chunk ports. */
      readonly chunks: readonly Chunk[];
      readonly text: BuiltFormat;
      readonly openMetrics: BuiltFormat;
      /** Raw bytes this build compressed, of both bodies. */
      readonly compressedBytes: number;
    }
  | { readonly type: 'failed'; readonly request: number; readonly message: string }
  | { readonly type: 'memory'; readonly request: number; readonly heapUsed: number };

interface Family {
  readonly id: number;
  readonly name: string;
  textHeader: Buffer;
  openMetricsHeader: Buffer;
  dirty: boolean;
  built: BuiltFamily | undefined;
  runs: FamilyRuns | undefined;
  /** Slots of the groups whose lines of this family changed since the last build. */
  changedSlots: number[];
}

interface Group extends GroupToBuild {
  readonly name: string;
  readonly lines: Buffer;
}

/**
 * Where a family's lines are, kept up to date as groups come, change and go (by family id: a
 * group may name a family before its header arrives), so that a build visits only the groups
 * of the families that changed.
 */
interface FamilyLines {
  /** By group slot: the index of this family's segment in the group, or -1 (4 bytes per slot: a Map took 30 times that). */
  segmentOf: Int32Array;
  /** Groups holding lines of this family. */
  members: number;
  textBytes: number;
  openMetricsBytes: number;
  /** Groups holding this family that have OpenMetrics lines of their own. */
  differing: number;
}

const NO_LINES: FamilyLines = { segmentOf: new Int32Array(0), members: 0, textBytes: 0, openMetricsBytes: 0, differing: 0 };

function segmentLength(ends: Uint32Array, i: number): number {
  return (ends[i] as number) - segmentStart(ends, i);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function segment(lines: Buffer, ends: Uint32Array, i: number): Buffer {
  return lines.subarray(segmentStart(ends, i), ends[i]);
}

export class BodyBuilder {
  private lastBuildRequest = 0;
  /** The chunks of the bodies of the last build that succeeded: a thread that starts serving gets them. */
  private lastBuiltChunks: readonly ReadonlyMap<number, SharedArrayBuffer>[] = [];
  private readonly families = new Map<number, Family>();
  private readonly groups = new Map<string, Group>();
  private readonly groupAt: (Group | undefined)[] = [];
  private readonly linesOf = new Map<number, FamilyLines>();
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;
  private sortedFamilies: Family[] | undefined;
  /** The groups' output order (by name); undefined after a group came or went. */
  private order: { readonly orderOf: Int32Array; readonly slotsInOrder: Int32Array } | undefined;
  /** Something in the bodies differs from the last build. */
  private changed = true;
  private readonly chunkedRaw = new ChunkedBodies();
  private readonly chunkedDeflated = new ChunkedBodies();

  /** `onChunksDropped`: after each build, the bytes of the last build's chunks this one no longer uses, and of those it uses. */
  constructor(private readonly onChunksDropped: (dropped: number, held: number) => void = () => {}) {}

  setFamily(message: FamilyMessage): void {
    const existing = this.families.get(message.id);
    if (existing && existing.name === message.name) {
      existing.textHeader = Buffer.from(message.textHeader, 'utf8');
      existing.openMetricsHeader = Buffer.from(message.openMetricsHeader, 'utf8');
    } else {
      this.families.set(message.id, {
        id: message.id,
        name: message.name,
        textHeader: Buffer.from(message.textHeader, 'utf8'),
        openMetricsHeader: Buffer.from(message.openMetricsHeader, 'utf8'),
        dirty: true,
        built: undefined,
        runs: undefined,
        changedSlots: [],
      });
      this.sortedFamilies = undefined;
    }
    this.changed = true;
  }

  dropFamily(id: number): void {
    if (this.families.delete(id)) {
      this.sortedFamilies = undefined;
      this.changed = true;
    }
  }

  putGroup(message: GroupMessage): void {
    const old = this.groups.get(message.name);
    const next: Group = {
      slot: old?.slot ?? this.freeSlots.pop() ?? this.nextSlot++,
      name: message.name,
      familyIds: message.familyIds,
      lines: asBuffer(message.lines),
      ends: message.ends,
      openMetricsLines: message.openMetricsLines ? asBuffer(message.openMetricsLines) : undefined,
      openMetricsEnds: message.openMetricsEnds,
    };
    this.groups.set(message.name, next);
    if (!old) this.order = undefined;
    this.markChanged(old, next);
    if (old) this.count(old, -1);
    this.count(next, 1);
    this.groupAt[next.slot] = next;
  }

  removeGroup(name: string): void {
    const old = this.groups.get(name);
    if (!old) return;
    this.groups.delete(name);
    this.freeSlots.push(old.slot);
    this.order = undefined;
    for (const id of old.familyIds) this.markDirty(id, old.slot);
    this.count(old, -1);
    this.groupAt[old.slot] = undefined;
  }

  /** Adds a group's lines to its families' (+1), or takes them away (-1). */
  private count(group: Group, sign: 1 | -1): void {
    const openMetricsEnds = group.openMetricsEnds ?? group.ends;
    group.familyIds.forEach((id, i) => {
      let lines = this.linesOf.get(id);
      if (!lines) {
        lines = { segmentOf: new Int32Array(0), members: 0, textBytes: 0, openMetricsBytes: 0, differing: 0 };
        this.linesOf.set(id, lines);
      }
      if (group.slot >= lines.segmentOf.length) {
        const grown = new Int32Array(Math.max(group.slot + 1, Math.ceil(lines.segmentOf.length * 1.25), 64)).fill(-1);
        grown.set(lines.segmentOf);
        lines.segmentOf = grown;
      }
      lines.segmentOf[group.slot] = sign > 0 ? i : -1;
      lines.members += sign;
      lines.textBytes += sign * segmentLength(group.ends, i);
      lines.openMetricsBytes += sign * segmentLength(openMetricsEnds, i);
      if (group.openMetricsLines) lines.differing += sign;
      if (lines.members === 0) this.linesOf.delete(id);
    });
  }

  /**
   * Builds both bodies from the current state, or says nothing changed since the last build.
   * The reply's bodies are in shared memory: posted, they are shared, not copied.
   */
  build(request: number, gzipLevel: number): BuilderReply {
    if (!this.changed) return { type: 'built', request, changed: false };
    this.changed = false;
    this.order ??= this.groupOrder();
    this.sortedFamilies ??= [...this.families.values()].sort((a, b) => compareStrings(a.name, b.name));
    const families = this.sortedFamilies;
    const input = {
      families: families.map((family): FamilyToBuild => {
        const previous = family.dirty ? undefined : family.built;
        const changedSlots = family.changedSlots;
        family.dirty = false;
        family.changedSlots = [];
        const lines = this.linesOf.get(family.id) ?? NO_LINES;
        return {
          textHeader: family.textHeader,
          openMetricsHeader: family.openMetricsHeader,
          previous,
          runs: family.runs,
          changedSlots,
          segmentOf: lines.segmentOf,
          textBytes: lines.textBytes,
          openMetricsBytes: lines.openMetricsBytes,
          differs: lines.differing > 0,
        };
      }),
      groupAt: this.groupAt,
      orderOf: this.order.orderOf,
      slotsInOrder: this.order.slotsInOrder,
      gzipLevel,
    };
    try {
      return this.reply(request, families, buildBodies(input));
    } catch (error) {
      // Nothing of this build is kept: the next one starts from scratch and sends every chunk.
      for (const family of families) {
        family.dirty = true;
        family.runs = undefined;
      }
      this.forgetChunks();
      throw error;
    }
  }

  /** Keeps what the build laid out, and lays the bodies out as chunks. */
  private reply(request: number, families: readonly Family[], output: BuildOutput): BuilderReply {
    output.built.forEach((built, i) => {
      const family = families[i] as Family;
      // The runs describe this build's layout; later changes are in changedSlots.
      family.runs = output.runs[i];
      if (!family.dirty) family.built = built;
    });
    const rawPieces = (format: 'text' | 'openmetrics'): Buffer[] => {
      const pieces: Buffer[] = [];
      families.forEach((family, i) => {
        pieces.push(format === 'text' ? family.textHeader : family.openMetricsHeader);
        const built = output.built[i] as BuiltFamily;
        if (built.lines) pieces.push((format === 'openmetrics' ? built.openMetricsLines : undefined) ?? built.lines);
        else for (const run of output.runs[i]?.runs ?? []) pieces.push(run.lines);
      });
      return pieces;
    };
    const [textRaw, openMetricsRaw] = this.chunkedRaw.layOut([rawPieces('text'), rawPieces('openmetrics')]) as [ChunkLayout, ChunkLayout];
    const [textDeflated, openMetricsDeflated] = this.chunkedDeflated.layOut([output.text.deflated, output.openMetrics.deflated]) as [ChunkLayout, ChunkLayout];
    const format = (body: BuiltBody, raw: ChunkLayout, deflated: ChunkLayout, name: string): BuiltFormat => {
      if (raw.length !== body.length) throw new Error(`the ${name} body holds ${raw.length} bytes where ${body.length} were laid out`);
      return { raw: raw.ids, deflated: deflated.ids, crc32: body.crc32, length: body.length, deflatedLength: deflated.length };
    };
    const text = format(output.text, textRaw, textDeflated, 'text');
    const openMetrics = format(output.openMetrics, openMetricsRaw, openMetricsDeflated, 'OpenMetrics');
    const chunks = [textRaw, openMetricsRaw, textDeflated, openMetricsDeflated].flatMap((layout) => layout.fresh);
    this.lastBuildRequest = request;
    const before = this.lastBuiltChunks;
    this.lastBuiltChunks = [this.chunkedRaw.usedByLastLayout(), this.chunkedDeflated.usedByLastLayout()];
    this.reportDropped(before);
    return { type: 'built', request, changed: true, familyIds: Int32Array.from(families, (family) => family.id), chunks, text, openMetrics, compressedBytes: output.compressedBytes };
  }

  private reportDropped(before: readonly ReadonlyMap<number, SharedArrayBuffer>[]): void {
    const uses = (id: number): boolean => this.lastBuiltChunks.some((used) => used.has(id));
    let dropped = 0;
    let held = 0;
    for (const used of before) used.forEach((bytes, id) => (dropped += uses(id) ? 0 : bytes.byteLength));
    for (const used of this.lastBuiltChunks) used.forEach((bytes) => (held += bytes.byteLength));
    if (dropped > 0) this.onChunksDropped(dropped, held);
  }

  private groupOrder(): { orderOf: Int32Array; slotsInOrder: Int32Array } {
    const slotsInOrder = Int32Array.from([...this.groups.values()].sort((a, b) => compareStrings(a.name, b.name)), (group) => group.slot);
    const orderOf = new Int32Array(this.nextSlot);
    slotsInOrder.forEach((slot, i) => (orderOf[slot] = i));
    return { orderOf, slotsInOrder };
  }

  /** The request number of the last build that changed the bodies, 0 before one. */
  get lastBuild(): number {
    return this.lastBuildRequest;
  }

  /**
   * Every chunk of the bodies of the last build that succeeded, those a snapshot from it names.
   * (A build that fails after laying its bodies out leaves these as they were; one the main
   * thread then rejects is the last that succeeded here, and the next build sends every chunk.)
   */
  heldChunks(): Chunk[] {
    return this.lastBuiltChunks.flatMap((used) => Array.from(used, ([id, bytes]) => ({ id, bytes })));
  }

  /** The next build sends every chunk again. */
  forgetChunks(): void {
    this.chunkedRaw.reset();
    this.chunkedDeflated.reset();
    this.changed = true;
  }

  private markDirty(id: number, slot: number): void {
    const family = this.families.get(id);
    if (family) {
      family.dirty = true;
      family.changedSlots.push(slot);
    }
    this.changed = true;
  }

  /** Marks the families whose bytes differ between a group's old and new lines. */
  private markChanged(old: Group | undefined, next: Group): void {
    const before = new Map<number, number>();
    old?.familyIds.forEach((id, i) => before.set(id, i));
    next.familyIds.forEach((id, i) => {
      const j = before.get(id);
      before.delete(id);
      if (j === undefined || !old || !sameSegment(old, j, next, i)) this.markDirty(id, next.slot);
    });
    for (const id of before.keys()) this.markDirty(id, next.slot);
  }
}

function sameSegment(a: Group, i: number, b: Group, j: number): boolean {
  if (!segment(a.lines, a.ends, i).equals(segment(b.lines, b.ends, j))) return false;
  if (!a.openMetricsLines && !b.openMetricsLines) return true;
  const aLines = segment(a.openMetricsLines ?? a.lines, a.openMetricsEnds ?? a.ends, i);
  const bLines = segment(b.openMetricsLines ?? b.lines, b.openMetricsEnds ?? b.ends, j);
  return aLines.equals(bLines);
}
