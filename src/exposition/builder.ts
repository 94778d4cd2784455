import { buildBodies, type BuiltBody, type BuiltFamily, type FamilyRuns, type GroupToBuild } from './assemble.js';

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

export interface MemoryRequest {
  readonly type: 'memory';
  readonly request: number;
}

export type BuilderMessage = FamilyMessage | DropFamilyMessage | GroupMessage | RetractMessage | BuildRequest | MemoryRequest;

/** One format's compressed data part, as the serving thread needs it. */
export interface BuiltFormat {
  readonly crc32: number;
  readonly length: number;
  /** The DEFLATE units of this format alone, one after the other (handed over, not copied). */
  readonly deflated: ArrayBuffer;
  /** Where each of those units ends in `deflated`. */
  readonly ends: Uint32Array;
  /** The body's units in order: a run's id, or -1 for the next unit of `deflated`. */
  readonly units: Int32Array;
}

export type BuilderReply =
  | { readonly type: 'built'; readonly request: number; readonly changed: false }
  | {
      readonly type: 'built';
      readonly request: number;
      readonly changed: true;
      /** Family ids in body order, so the serving thread can check it pairs the right headers. */
      readonly familyIds: Int32Array;
      /**
       * Per family, its lines laid out in this build (handed over), or null where they did not
       * change or are in runs: the serving thread keeps the ones it was given last.
       */
      readonly lines: readonly (ArrayBuffer | null)[];
      /** Per family laid out as runs in this build: the ids of its runs in order, or null. */
      readonly familyRuns: readonly (Int32Array | null)[];
      /** The lines and DEFLATE data of the runs first laid out in this build (shared: the builder keeps them too). */
      readonly newRuns: readonly { readonly id: number; readonly lines: SharedArrayBuffer; readonly deflated: SharedArrayBuffer }[];
      /** Per family laid out in this build: its OpenMetrics lines when they differ from the text lines. */
      readonly openMetricsLines: readonly (ArrayBuffer | null)[];
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

/** The buffers of a reply that move to the serving thread instead of being copied. */
export function transferList(reply: BuilderReply): ArrayBuffer[] {
  if (reply.type !== 'built' || !reply.changed) return [];
  const list = [reply.text.deflated, reply.openMetrics.deflated];
  for (const lines of [...reply.lines, ...reply.openMetricsLines]) if (lines) list.push(lines);
  return list;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function segment(lines: Buffer, ends: Uint32Array, i: number): Buffer {
  return lines.subarray(i === 0 ? 0 : ends[i - 1], ends[i]);
}

export class BodyBuilder {
  private readonly families = new Map<number, Family>();
  private readonly groups = new Map<string, Group>();
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;
  private sortedFamilies: Family[] | undefined;
  private sortedGroups: string[] | undefined;
  /** Something in the bodies differs from the last build. */
  private changed = true;

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
    if (!old) this.sortedGroups = undefined;
    this.markChanged(old, next);
  }

  removeGroup(name: string): void {
    const old = this.groups.get(name);
    if (!old) return;
    this.groups.delete(name);
    this.freeSlots.push(old.slot);
    this.sortedGroups = undefined;
    for (const id of old.familyIds) this.markDirty(id, old.slot);
  }

  /**
   * Builds both bodies from the current state, or says nothing changed since the last build.
   * The reply's buffers are to be transferred, not copied: see `transferList`.
   */
  async build(request: number, gzipLevel: number): Promise<BuilderReply> {
    if (!this.changed) return { type: 'built', request, changed: false };
    this.changed = false;
    this.sortedGroups ??= [...this.groups.keys()].sort(compareStrings);
    this.sortedFamilies ??= [...this.families.values()].sort((a, b) => compareStrings(a.name, b.name));
    const families = this.sortedFamilies;
    let maxId = 0;
    for (const family of families) maxId = Math.max(maxId, family.id);
    const indexOfId = new Int32Array(maxId + 1).fill(-1);
    families.forEach((family, i) => (indexOfId[family.id] = i));
    const input = {
      families: families.map((family) => {
        const previous = family.dirty ? undefined : family.built;
        const changedSlots = family.changedSlots;
        family.dirty = false;
        family.changedSlots = [];
        return { textHeader: family.textHeader, openMetricsHeader: family.openMetricsHeader, previous, runs: family.runs, changedSlots };
      }),
      indexOfId,
      groups: this.sortedGroups.map((name) => this.groups.get(name) as Group),
      gzipLevel,
    };
    // buildBodies reads the groups synchronously before its first await: later messages may
    // replace them meanwhile.
    let output;
    try {
      output = await buildBodies(input);
    } catch (error) {
      // Nothing of this build is kept: the next one starts from scratch.
      for (const family of families) {
        family.dirty = true;
        family.runs = undefined;
      }
      this.changed = true;
      throw error;
    }
    output.built.forEach((built, i) => {
      const family = families[i] as Family;
      // The runs describe this build's layout; later changes are in changedSlots.
      family.runs = output.runs[i];
      if (!family.dirty) family.built = built;
    });
    const pack = (body: BuiltBody): BuiltFormat => {
      let size = 0;
      body.deflated.forEach((unit, i) => (size += body.runIds[i] === undefined ? unit.length : 0));
      const packed = Buffer.from(new ArrayBuffer(size));
      const ends: number[] = [];
      let at = 0;
      const units = Int32Array.from(body.deflated, (unit, i) => {
        const runId = body.runIds[i];
        if (runId !== undefined) return runId;
        at += unit.copy(packed, at);
        ends.push(at);
        return -1;
      });
      return { crc32: body.crc32, length: body.length, deflated: packed.buffer, ends: Uint32Array.from(ends), units };
    };
    return {
      type: 'built',
      request,
      changed: true,
      familyIds: Int32Array.from(families, (family) => family.id),
      lines: output.lines.map((lines) => (lines ? (lines.buffer as ArrayBuffer) : null)),
      familyRuns: families.map((family, i) => (output.lines[i] === undefined && !input.families[i]?.previous ? Int32Array.from((output.runs[i] as FamilyRuns).runs, (run) => run.id) : null)),
      newRuns: output.newRuns.map((run) => ({ id: run.id, lines: run.lines.buffer as SharedArrayBuffer, deflated: run.unit.deflated.buffer as SharedArrayBuffer })),
      openMetricsLines: output.openMetricsLines.map((lines) => (lines ? (lines.buffer as ArrayBuffer) : null)),
      text: pack(output.text),
      openMetrics: pack(output.openMetrics),
      compressedBytes: output.compressedBytes,
    };
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
