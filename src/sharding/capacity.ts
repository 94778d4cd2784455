import { shardOfName } from './jump-hash.js';
import { selectForShard, type ShardAssignment } from './shard.js';
import { ConfigError } from '../config/errors.js';
import type { Config } from '../config/types.js';

/**
 * The most accounts one exporter polls, measured (docs/scaling.md, `bench/accounts.ts`):
 * with 1,000 small accounts a gzip scrape of /metrics took up to 4.5 s, resident memory was
 * 1.1 to 1.3 GiB and the main port's health probe waited up to 2 s (the probe listener under
 * 0.1 s); with 2,000 a scrape took 51 s and probes failed. (The 10,000 accepted accounts gave a
 * 195 MB body taking 17 to 28 s and 3 GB of memory.) Beyond it, the configuration is refused
 * with the number of shards that would bring each under it.
 */
export const MAX_ACCOUNTS_PER_EXPORTER = 1_000;

/** The fewest shards (jump hash of the account names, as `--total-shards` spreads them) with no shard above `max`. */
export function shardsNeeded(names: readonly string[], max = MAX_ACCOUNTS_PER_EXPORTER): number {
  for (let total = Math.max(1, Math.ceil(names.length / max)); ; total++) {
    const perShard = new Array<number>(total).fill(0);
    for (const name of names) perShard[shardOfName(name, total)]! += 1;
    if (Math.max(...perShard) <= max) return total;
  }
}

/**
 * Throws a ConfigError when this process (this shard, with sharding) would poll more accounts
 * than `max`; the message says how many shards would do.
 */
export function checkCapacity(config: Config, source: string, shard: ShardAssignment, max = MAX_ACCOUNTS_PER_EXPORTER): void {
  const polled = selectForShard(config.accounts, shard).length;
  if (polled <= max) return;
  const needed = shardsNeeded(config.accounts.map((a) => a.name), max);
  const where = shard.total > 1 ? `shard ${shard.ordinal} of ${shard.total} would poll ${polled} of the ${config.accounts.length} accounts` : `${polled} accounts on one exporter`;
  throw new ConfigError(source, [
    {
      path: 'accounts',
      message: `${where}, over the measured maximum of ${max} per exporter (docs/scaling.md): shard them, with --total-shards=${needed} (the Helm chart: sharding.enabled and replicas: ${needed})`,
    },
  ]);
}
