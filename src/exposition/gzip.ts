import { promisify } from 'node:util';
import { constants, crc32, deflateRaw, deflateRawSync, type ZlibOptions } from 'node:zlib';

const deflateRawAsync = promisify<Buffer, ZlibOptions, Buffer>(deflateRaw);

export const DEFAULT_GZIP_LEVEL = 1;

/** DEFLATE keeps a 32 KiB window: a dictionary longer than that is of no use. */
export const DEFLATE_WINDOW = 32 * 1024;

/**
 * A body kept ready for scrapes: its raw pieces (written as they are for identity) and its
 * raw DEFLATE data, a sequence of independently compressed units each ended with a sync
 * flush instead of a final block, so that more DEFLATE data (the self-metrics) can follow
 * inside the same gzip member.
 */
export interface PreparedBody {
  readonly pieces: readonly Buffer[];
  readonly length: number;
  /** CRC-32 of the concatenated pieces. */
  readonly crc32: number;
  readonly deflated: readonly Buffer[];
  readonly deflatedLength: number;
}

export const EMPTY_BODY: PreparedBody = { pieces: [], length: 0, crc32: 0, deflated: [], deflatedLength: 0 };

/** The whole raw body in one buffer (tests, tools): scrapes write the pieces as they are. */
export function joinBody(body: PreparedBody): Buffer {
  return Buffer.concat(body.pieces, body.length);
}

/**
 * Compresses `input` in the calling thread (the builder thread). With a dictionary (the bytes
 * that will precede `input` in the body, at most the last 32 KiB of them), back references may
 * reach into it: the result is only valid right after exactly those bytes.
 *
 * Not on libuv's thread pool: a unit is at most 64 KiB, most far less, and handing one
 * over (a zlib stream, a 16 KiB output buffer, a round trip through the pool) cost the
 * builder thread three times what compressing it here costs (docs/scaling.md).
 */
export function deflateUnit(input: Buffer, dictionary: Buffer | undefined, level: number): Buffer {
  return deflateRawSync(input, {
    level,
    finishFlush: constants.Z_SYNC_FLUSH,
    ...(dictionary && dictionary.length > 0 ? { dictionary } : {}),
  });
}

/** zlib's crc32 answers 0 for a NULL (empty) buffer instead of the running value. */
export function crc32Of(data: Buffer, previous = 0): number {
  return data.length === 0 ? previous : crc32(data, previous);
}

// CRC-32 of a concatenation from the CRCs of its parts (zlib's crc32_combine, which Node does
// not expose): arithmetic on polynomials over GF(2), reflected, modulo the CRC polynomial.
const POLY = 0xedb88320;

function multiplyModP(a: number, b: number): number {
  let product = 0;
  for (let bit = 0x80000000; bit !== 0; bit >>>= 1) {
    if (a & bit) product ^= b;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return product >>> 0;
}

/** X2N[k] is x^(2^k) modulo the polynomial. */
const X2N: number[] = [0x40000000];
for (let k = 1; k < 32; k++) X2N.push(multiplyModP(X2N[k - 1] as number, X2N[k - 1] as number));

/** x^(8 * bytes) modulo the polynomial: the factor that shifts a CRC past `bytes` zero bytes. */
function shiftFactor(bytes: number): number {
  let factor = 0x80000000;
  let k = 3;
  // `bytes` may exceed 2^32 in principle: walk it as a float, bit by bit.
  for (let n = bytes; n > 0; n = Math.floor(n / 2), k++) {
    if (n % 2 === 1) factor = multiplyModP(X2N[k % 32] as number, factor);
  }
  return factor;
}

/**
 * Shift factors by length, since a build combines the CRCs of every unit of both bodies and
 * most units keep their length from one build to the next (runs, unchanged families): one
 * multiplication a unit instead of about sixteen. Bounded: forgotten all at once when full.
 */
const shiftFactors = new Map<number, number>();
const SHIFT_FACTORS_KEPT = 16_384;

function knownShiftFactor(bytes: number): number {
  let factor = shiftFactors.get(bytes);
  if (factor === undefined) {
    if (shiftFactors.size >= SHIFT_FACTORS_KEPT) shiftFactors.clear();
    factor = shiftFactor(bytes);
    shiftFactors.set(bytes, factor);
  }
  return factor;
}

/** CRC-32 of A followed by B, from crc(A), crc(B) and B's length. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  if (lengthB === 0) return crcA >>> 0;
  return (multiplyModP(knownShiftFactor(lengthB), crcA >>> 0) ^ crcB) >>> 0;
}

/** Gzip header: magic, method deflate, no flags, mtime 0, no extra flags, OS unknown. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff]);

/** A small buffer compressed as the end of a DEFLATE stream (final block), with its CRC. */
export interface CompressedTail {
  readonly raw: Buffer;
  readonly crc32: number;
  readonly deflated: Buffer;
}

export async function compressTail(raw: Buffer, level = DEFAULT_GZIP_LEVEL): Promise<CompressedTail> {
  return { raw, crc32: crc32Of(raw), deflated: await deflateRawAsync(raw, { level }) };
}

/**
 * One gzip member holding `body` followed by `tail`, as the buffers to write in order. The
 * body's DEFLATE data is reused as it is; a DEFLATE decoder reads block after block and does
 * not mind that the tail's blocks never refer back into it. A single member rather than
 * concatenated members, because some decoders (browsers, older curl) stop after the first.
 */
export function gzipMember(body: PreparedBody, tail: CompressedTail): Buffer[] {
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32Combine(body.crc32, tail.crc32, tail.raw.length), 0);
  trailer.writeUInt32LE((body.length + tail.raw.length) % 0x1_0000_0000, 4);
  return [GZIP_HEADER, ...body.deflated, tail.deflated, trailer];
}
