import { shardOfName } from './jump-hash.js';

/** Which of `total` shards this process is: it polls the accounts whose names hash to `ordinal`. */
export interface ShardAssignment {
  readonly ordinal: number;
  readonly total: number;
}

export const SINGLE_SHARD: ShardAssignment = { ordinal: 0, total: 1 };

/** A value as given, with where it came from (`--shard` or `MONAPI_SHARD`), for error messages. */
export interface GivenValue {
  readonly value: string;
  readonly from: string;
}

export interface ShardInputs {
  readonly shard?: GivenValue;
  readonly totalShards?: GivenValue;
  /** A StatefulSet pod's name; its ordinal suffix (`-0`, `-1`, ...) is the shard. */
  readonly podName?: GivenValue;
}

/** A bad combination of shard settings; the message names the flags or variables and the fix. */
export class ShardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShardError';
  }
}

const MAX_SHARDS = 2 ** 31 - 1;

function wholeNumber(given: GivenValue, min: number, what: string): number {
  const n = Number(given.value);
  if (!/^\d+$/.test(given.value) || !Number.isSafeInteger(n) || n < min || n > MAX_SHARDS) {
    throw new ShardError(`${given.from} must be ${what} (got ${JSON.stringify(given.value)})`);
  }
  return n;
}

/** The ordinal of a StatefulSet pod from its name: `monapi-exporter-2` is 2. */
export function ordinalFromPodName(given: GivenValue): number {
  const match = /-(0|[1-9]\d*)$/.exec(given.value);
  if (!match?.[1] || !Number.isSafeInteger(Number(match[1]))) {
    throw new ShardError(
      `${given.from} ${JSON.stringify(given.value)} does not end in a StatefulSet ordinal: expected a pod name such as monapi-exporter-0 (sharding needs a StatefulSet, whose pods are numbered; a Deployment's are not)`,
    );
  }
  return Number(match[1]);
}

/**
 * Reads `--shard`, `--total-shards` and `--shard.pod-name` into an assignment. Nothing given
 * is one shard that polls every account; anything half given is an error, because a shard
 * that guesses its place would poll some keys twice or leave some unpolled.
 */
export function resolveShard(inputs: ShardInputs): ShardAssignment {
  const { shard, totalShards, podName } = inputs;
  if (shard && podName) {
    throw new ShardError(`${shard.from} and ${podName.from} both say which shard this is: give one of them`);
  }
  const total = totalShards ? wholeNumber(totalShards, 1, 'a whole number of at least 1 (the number of shards, i.e. StatefulSet replicas)') : undefined;
  const ordinalSource = shard ?? podName;
  if (ordinalSource === undefined) {
    if (total === undefined || total === 1) return SINGLE_SHARD;
    throw new ShardError(
      `${totalShards?.from}=${total} needs --shard or --shard.pod-name to say which of the ${total} shards this process is`,
    );
  }
  if (total === undefined) {
    throw new ShardError(`${ordinalSource.from} needs --total-shards: the number of shards (StatefulSet replicas) the accounts are spread over`);
  }
  const ordinal = shard ? wholeNumber(shard, 0, 'a whole number from 0') : ordinalFromPodName(ordinalSource);
  if (ordinal >= total) {
    const fromPod = podName !== undefined && shard === undefined;
    const origin = fromPod ? ` (from ${podName.from} ${JSON.stringify(podName.value)})` : '';
    const hint = fromPod ? '; a StatefulSet scaled by hand (kubectl scale) no longer matches --total-shards: change the replica count through the chart instead' : '';
    throw new ShardError(`shard ${ordinal}${origin} does not exist: ${totalShards?.from} is ${total}, so shards are numbered 0 to ${total - 1}${hint}`);
  }
  return { ordinal, total };
}

/** The items (accounts) this shard polls, in their configured order. */
export function selectForShard<T extends { readonly name: string }>(items: readonly T[], shard: ShardAssignment): T[] {
  return items.filter((item) => shardOfName(item.name, shard.total) === shard.ordinal);
}

/** `shard 1 of 3` for logs. */
export function describeShard(shard: ShardAssignment): string {
  return `shard ${shard.ordinal} of ${shard.total}`;
}
