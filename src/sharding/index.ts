export { fnv1a64, jumpHash, shardOfName } from './jump-hash.js';
export { registerShardMetrics } from './metrics.js';
export {
  describeShard,
  ordinalFromPodName,
  resolveShard,
  selectForShard,
  ShardError,
  SINGLE_SHARD,
  type GivenValue,
  type ShardAssignment,
  type ShardInputs,
} from './shard.js';
