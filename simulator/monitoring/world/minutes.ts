import { readableFromMs } from './agents.js';
import { hash2, hash3, unit } from './hash.js';
import type { HostProfile } from './hosts.js';

/**
 * Per-minute quantities every metric of a host draws on (daily cycle, bursts, overall
 * activity, noise, when the minute becomes readable), computed a block of minutes at a
 * time and kept for the most recently used host-blocks.
 *
 * Why: a series request asks for dozens of names over the same minutes, and hashing per
 * (name, minute) made a one-week request at 900 s over 60 names take about a second on a
 * busy 2-core machine. Here the hashing happens once per (host, minute); a metric reads its
 * noise from one of NOISE_CHANNELS arrays at a salt-dependent rotation. Every value is still
 * a pure function of (host, minute, salt), so caching changes no value.
 */

const BLOCK_MINUTES = 240;
const NOISE_CHANNELS = 4;
/** About 15 KB per block; 1200 blocks cover a 90-day request comfortably. */
const MAX_BLOCKS = 1200;
const TAU = 2 * Math.PI;

export interface Block {
  /** The block's first minute. */
  readonly first: number;
  readonly daily: Float64Array;
  readonly burst: Float64Array;
  readonly activity: Float64Array;
  readonly readableFrom: Float64Array;
  /** NOISE_CHANNELS rows of BLOCK_MINUTES values in [0, 1). */
  readonly noise: Float64Array;
}

const blocksByHost = new WeakMap<HostProfile, Map<number, Block>>();
let insertionOrder: { readonly blocks: Map<number, Block>; readonly index: number }[] = [];
let lastProfile: HostProfile | undefined;
let lastIndex = NaN;
let lastBlock: Block | undefined;

function computeBlock(p: HostProfile, index: number): Block {
  const daily = new Float64Array(BLOCK_MINUTES);
  const burst = new Float64Array(BLOCK_MINUTES);
  const activity = new Float64Array(BLOCK_MINUTES);
  const readableFrom = new Float64Array(BLOCK_MINUTES);
  const noise = new Float64Array(BLOCK_MINUTES * NOISE_CHANNELS);
  const first = index * BLOCK_MINUTES;
  let burstFactor = 1;
  for (let i = 0; i < BLOCK_MINUTES; i++) {
    const m = first + i;
    for (let c = 0; c < NOISE_CHANNELS; c++) noise[c * BLOCK_MINUTES + i] = unit(hash3(p.key, c, m));
    const cycle = 0.55 + 0.45 * Math.sin(TAU * ((m % 1440) / 1440 - p.peakPhase));
    if (i === 0 || m % 10 === 0) {
      const h = hash3(p.key, 0xb0257, Math.floor(m / 10));
      burstFactor = unit(h) < 0.02 ? 1.5 + 1.5 * unit(hash2(h, 1)) : 1;
    }
    daily[i] = cycle;
    burst[i] = burstFactor;
    activity[i] = p.busy * cycle * burstFactor * (0.9 + 0.2 * (noise[i] ?? 0));
    readableFrom[i] = readableFromMs(p, m);
  }
  return { first, daily, burst, activity, readableFrom, noise };
}

function blockAt(p: HostProfile, index: number): Block {
  let blocks = blocksByHost.get(p);
  if (!blocks) {
    blocks = new Map();
    blocksByHost.set(p, blocks);
  }
  let block = blocks.get(index);
  if (!block) {
    block = computeBlock(p, index);
    blocks.set(index, block);
    insertionOrder.push({ blocks, index });
    if (insertionOrder.length > MAX_BLOCKS) {
      const evicted = insertionOrder.slice(0, MAX_BLOCKS / 2);
      insertionOrder = insertionOrder.slice(MAX_BLOCKS / 2);
      for (const e of evicted) e.blocks.delete(e.index);
    }
  }
  return block;
}

export function blockFor(p: HostProfile, minute: number): Block {
  const index = Math.floor(minute / BLOCK_MINUTES);
  if (p === lastProfile && index === lastIndex && lastBlock) return lastBlock;
  const block = blockAt(p, index);
  lastProfile = p;
  lastIndex = index;
  lastBlock = block;
  return block;
}

/** 0.1-1: the host's daily cycle in minute `i` of block `b`. */
export function daily(b: Block, i: number): number {
  return b.daily[i] ?? 0;
}

/** 1, or 1.5-3 during a 10-minute burst (about 2 % of the time). */
export function burst(b: Block, i: number): number {
  return b.burst[i] ?? 1;
}

/** Load on the host relative to its peak: about 0.015 to 2.5. */
export function activity(b: Block, i: number): number {
  return b.activity[i] ?? 0;
}

/** When the minute becomes readable (see agents.ts), or Infinity. */
export function readableFrom(p: HostProfile, minute: number): number {
  const b = blockFor(p, minute);
  return b.readableFrom[minute - b.first] ?? Infinity;
}

/**
 * [0, 1) noise for (host, minute, salt). Salts that differ get different channels or
 * rotations (97 is coprime to the block length), so metrics do not move in lockstep.
 */
export function noise(b: Block, i: number, salt: number): number {
  return b.noise[(salt % NOISE_CHANNELS) * BLOCK_MINUTES + ((i + salt * 97) % BLOCK_MINUTES)] ?? 0;
}
