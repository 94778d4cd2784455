import { Gauge, type Registry } from 'prom-client';
import type { ShardAssignment } from './shard.js';

/**
 * `monapi_exporter_shard_ordinal` and `monapi_exporter_total_shards`, as kube-state-metrics
 * names them: always present (0 and 1 without sharding), so one rule can tell a missing shard
 * or two shards that disagree on the total.
 */
export function registerShardMetrics(registry: Registry, shard: ShardAssignment): void {
  new Gauge({
    name: 'monapi_exporter_shard_ordinal',
    help: 'Which shard this exporter is (0 without sharding): it polls the accounts whose names jump-hash to this ordinal.',
    registers: [registry],
  }).set(shard.ordinal);
  new Gauge({
    name: 'monapi_exporter_total_shards',
    help: 'How many shards the accounts are spread over (1 without sharding); every shard must report the same number.',
    registers: [registry],
  }).set(shard.total);
}
