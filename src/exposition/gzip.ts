import { promisify } from 'node:util';
import { constants, crc32, deflateRaw } from 'node:zlib';

const deflateRawAsync = promisify(deflateRaw);

/**
 * The large, slowly changing part of a body, compressed once per rebuild. `deflated` is
 * a raw DEFLATE stream ended with a sync flush instead of a final block, so further
 * DEFLATE data can follow it inside the same gzip member.
 */
export interface CompressedPrefix {
  readonly raw: Buffer;
  readonly crc32: number;
  readonly deflated: Buffer;
}

/** Gzip header: magic, method deflate, no flags, mtime 0, no extra flags, OS unknown. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff]);

export const DEFAULT_GZIP_LEVEL = 6;

/**
 * Compresses on the libuv thread pool, off the event loop. `crc` may be passed when the
 * caller already computed it chunk by chunk.
 */
export async function compressPrefix(raw: Buffer, crc?: number, level = DEFAULT_GZIP_LEVEL): Promise<CompressedPrefix> {
  const deflated = await deflateRawAsync(raw, { level, finishFlush: constants.Z_SYNC_FLUSH });
  return { raw, crc32: crc ?? crc32(raw), deflated };
}

/**
 * One gzip member holding `prefix.raw` followed by `tail`, returned as the buffers to
 * write in order. Only the small tail is compressed per call; the prefix's DEFLATE data
 * is reused as is (a DEFLATE decoder reads block after block and does not care that the
 * tail's blocks never refer back into the prefix). A single member rather than two
 * concatenated members, because some decoders (browsers, older curl) stop after the first.
 */
export async function gzipWithTail(prefix: CompressedPrefix, tail: Buffer, level = DEFAULT_GZIP_LEVEL): Promise<Buffer[]> {
  const deflatedTail = await deflateRawAsync(tail, { level });
  const trailer = Buffer.alloc(8);
  // zlib's crc32 answers 0 for a NULL buffer, which an empty Buffer may be: skip it.
  const crc = tail.length === 0 ? prefix.crc32 : crc32(tail, prefix.crc32);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE((prefix.raw.length + tail.length) % 0x1_0000_0000, 4);
  return [GZIP_HEADER, prefix.deflated, deflatedTail, trailer];
}
