import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { shardOfName } from './jump-hash.js';
import { registerShardMetrics } from './metrics.js';
import { ordinalFromPodName, resolveShard, selectForShard, ShardError, SINGLE_SHARD, type ShardInputs } from './shard.js';

const flag = (name: string, value: string) => ({ value, from: `--${name}` });

function errorOf(inputs: ShardInputs): string {
  try {
    resolveShard(inputs);
  } catch (error) {
    expect(error).toBeInstanceOf(ShardError);
    return (error as Error).message;
  }
  throw new Error('expected a ShardError');
}

describe('resolveShard', () => {
  it.each<[string, ShardInputs, { ordinal: number; total: number }]>([
    ['nothing: one shard', {}, SINGLE_SHARD],
    ['a total of 1 alone', { totalShards: flag('total-shards', '1') }, SINGLE_SHARD],
    ['--shard and --total-shards', { shard: flag('shard', '2'), totalShards: flag('total-shards', '3') }, { ordinal: 2, total: 3 }],
    ['the pod name', { podName: flag('shard.pod-name', 'monapi-exporter-1'), totalShards: flag('total-shards', '2') }, { ordinal: 1, total: 2 }],
    ['a pod name with digits before the ordinal', { podName: flag('shard.pod-name', 'exp-v2-10'), totalShards: flag('total-shards', '11') }, { ordinal: 10, total: 11 }],
  ])('reads %s', (_, inputs, expected) => {
    expect(resolveShard(inputs)).toEqual(expected);
  });

  it.each<[string, ShardInputs, string]>([
    ['a shard without a total', { shard: flag('shard', '0') }, '--shard needs --total-shards: the number of shards (StatefulSet replicas) the accounts are spread over'],
    ['a total without a shard', { totalShards: { value: '3', from: 'MONAPI_TOTAL_SHARDS' } }, 'MONAPI_TOTAL_SHARDS=3 needs --shard or --shard.pod-name to say which of the 3 shards this process is'],
    [
      'both --shard and a pod name',
      { shard: flag('shard', '0'), podName: { value: 'x-0', from: 'MONAPI_SHARD_POD_NAME' }, totalShards: flag('total-shards', '2') },
      '--shard and MONAPI_SHARD_POD_NAME both say which shard this is: give one of them',
    ],
    ['a word as the shard', { shard: flag('shard', 'one'), totalShards: flag('total-shards', '2') }, '--shard must be a whole number from 0 (got "one")'],
    ['a negative shard', { shard: flag('shard', '-1'), totalShards: flag('total-shards', '2') }, '--shard must be a whole number from 0 (got "-1")'],
    ['zero shards', { shard: flag('shard', '0'), totalShards: flag('total-shards', '0') }, '--total-shards must be a whole number of at least 1 (the number of shards, i.e. StatefulSet replicas) (got "0")'],
    ['a fraction of shards', { totalShards: flag('total-shards', '1.5') }, '--total-shards must be a whole number of at least 1 (the number of shards, i.e. StatefulSet replicas) (got "1.5")'],
    ['a shard past the total', { shard: flag('shard', '3'), totalShards: flag('total-shards', '3') }, 'shard 3 does not exist: --total-shards is 3, so shards are numbered 0 to 2'],
    [
      'a pod past the total',
      { podName: flag('shard.pod-name', 'monapi-exporter-3'), totalShards: flag('total-shards', '3') },
      'shard 3 (from --shard.pod-name "monapi-exporter-3") does not exist: --total-shards is 3, so shards are numbered 0 to 2; a StatefulSet scaled by hand (kubectl scale) no longer matches --total-shards: change the replica count through the chart instead',
    ],
    [
      'a Deployment pod name',
      { podName: flag('shard.pod-name', 'monapi-exporter-7d9f8b6c5-x2x4z'), totalShards: flag('total-shards', '2') },
      '--shard.pod-name "monapi-exporter-7d9f8b6c5-x2x4z" does not end in a StatefulSet ordinal: expected a pod name such as monapi-exporter-0 (sharding needs a StatefulSet, whose pods are numbered; a Deployment\'s are not)',
    ],
  ])('refuses %s', (_, inputs, message) => {
    expect(errorOf(inputs)).toBe(message);
  });
});

describe('ordinalFromPodName', () => {
  it.each([
    ['monapi-exporter-0', 0],
    ['monapi-exporter-12', 12],
  ])('reads %s as %i', (name, ordinal) => {
    expect(ordinalFromPodName({ value: name, from: 'x' })).toBe(ordinal);
  });

  it.each(['monapi-exporter', 'monapi-exporter-', 'monapi-exporter-01', 'monapi-exporter-1a'])('refuses %s', (name) => {
    expect(() => ordinalFromPodName({ value: name, from: 'x' })).toThrow(ShardError);
  });
});

describe('selectForShard', () => {
  const accounts = ['prod', 'staging', 'eu', 'us', 'apac', 'lab', 'legacy'].map((name) => ({ name }));

  it('gives every account to exactly one of the shards, by its name alone', () => {
    for (const total of [1, 2, 3, 5]) {
      const picked = Array.from({ length: total }, (_, ordinal) => selectForShard(accounts, { ordinal, total }).map((a) => a.name));
      expect(picked.flat().sort()).toEqual(accounts.map((a) => a.name).sort());
      picked.forEach((names, ordinal) => names.forEach((name) => expect(shardOfName(name, total)).toBe(ordinal)));
    }
  });

  it('keeps the configured order', () => {
    const all = selectForShard(accounts, SINGLE_SHARD);
    expect(all).toEqual(accounts);
  });
});

describe('registerShardMetrics', () => {
  it('exposes the ordinal and the total', async () => {
    const registry = new Registry();
    registerShardMetrics(registry, { ordinal: 2, total: 3 });
    const text = await registry.metrics();
    expect(text).toContain('\nmonapi_exporter_shard_ordinal 2\n');
    expect(text).toContain('\nmonapi_exporter_total_shards 3\n');
  });
});
