/**
 * The same assignment kube-state-metrics uses: FNV-1a (64 bit) of the name, then Lamping and
 * Veach's jump consistent hash. A name's shard never depends on the other names, and going
 * from n to n+1 shards moves only about 1/(n+1) of the names, all of them to the new shard.
 */

const MASK_64 = (1n << 64n) - 1n;
const FNV_OFFSET_BASIS = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const LCG_MULTIPLIER = 2862933555777941757n;

/** FNV-1a over the UTF-8 bytes of `text`, as an unsigned 64-bit integer. */
export function fnv1a64(text: string): bigint {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of new TextEncoder().encode(text)) {
    hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & MASK_64;
  }
  return hash;
}

/** The bucket in [0, buckets) of a 64-bit key (A Fast, Minimal Memory, Consistent Hash Algorithm, 2014). */
export function jumpHash(key: bigint, buckets: number): number {
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > 2 ** 31 - 1) {
    throw new RangeError(`jumpHash needs a whole number of buckets from 1 to 2^31-1 (got ${buckets})`);
  }
  let k = BigInt.asUintN(64, key);
  let bucket = -1;
  let next = 0;
  while (next < buckets) {
    bucket = next;
    k = (k * LCG_MULTIPLIER + 1n) & MASK_64;
    next = Math.floor((bucket + 1) * (2 ** 31 / (Number(k >> 33n) + 1)));
  }
  return bucket;
}

/** The shard of an account name among `total` shards. */
export function shardOfName(name: string, total: number): number {
  return jumpHash(fnv1a64(name), total);
}
