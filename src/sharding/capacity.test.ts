import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { thrownBy } from '../../test/support/thrown.js';
import { shardOfName } from './jump-hash.js';
import { checkCapacity, MAX_ACCOUNTS_PER_EXPORTER, shardsNeeded } from './capacity.js';
import { ConfigError } from '../config/errors.js';
import { parseConfig } from '../exporter/config.js';

const configWith = (accounts: number) =>
  parseConfig(`accounts:\n${Array.from({ length: accounts }, (_, i) => `  - name: a${i}\n    base_url: https://m.example.com/api/v2\n    api_key_env: K${i}\n`).join('')}`, {
    env: Object.fromEntries(Array.from({ length: accounts }, (_, i) => [`K${i}`, `key-number-${i}-0123456789`])),
  });

describe('the accounts one exporter may poll', () => {
  it('are refused beyond the maximum, with the shards that would do', () => {
    const config = configWith(12);
    expect(() => checkCapacity(config, 'monapi.yaml', { ordinal: 0, total: 1 }, 12)).not.toThrow();
    const error = thrownBy(ConfigError, () => checkCapacity(config, 'monapi.yaml', { ordinal: 0, total: 1 }, 5));
    const needed = shardsNeeded(config.accounts.map((a) => a.name), 5);
    expect(error.message).toBe(
      `invalid configuration monapi.yaml: 1 problem\n  - accounts: 12 accounts on one exporter, over the measured maximum of 5 per exporter (docs/scaling.md): shard them, with --total-shards=${needed} (the Helm chart: sharding.enabled and replicas: ${needed})`,
    );
  });

  it('count per shard when sharded', () => {
    const config = configWith(12);
    const needed = shardsNeeded(config.accounts.map((a) => a.name), 5);
    for (let ordinal = 0; ordinal < needed; ordinal++) expect(() => checkCapacity(config, 'x', { ordinal, total: needed }, 5)).not.toThrow();
    expect(() => checkCapacity(config, 'x', { ordinal: 0, total: 2 }, 1)).toThrow(/shard 0 of 2 would poll \d+ of the 12 accounts/);
  });

  it('suggest the fewest shards that leave none over the maximum, as the jump hash spreads the names', () => {
    const names = Array.from({ length: 2_500 }, (_, i) => `account-${i}`);
    const needed = shardsNeeded(names, 1_000);
    expect(needed).toBeGreaterThanOrEqual(3);
    const load = (total: number) => Math.max(...Array.from({ length: total }, (_, s) => names.filter((n) => shardOfName(n, total) === s).length));
    expect(load(needed)).toBeLessThanOrEqual(1_000);
    expect(load(needed - 1)).toBeGreaterThan(1_000);
  });

  it('--config.check refuses one account over the maximum, and passes it on the shard it is given', () => {
    const dir = mkdtempSync(join(tmpdir(), 'monapi-capacity-'));
    try {
      const n = MAX_ACCOUNTS_PER_EXPORTER + 1;
      const lines = ['accounts:'];
      const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
      for (let i = 0; i < n; i++) {
        lines.push(`  - name: a${i}`, '    base_url: https://m.example.com/api/v2', `    api_key_env: K${i}`);
        env[`K${i}`] = `key-number-${i}-0123456789`;
      }
      writeFileSync(join(dir, 'monapi.yaml'), `${lines.join('\n')}\n`);
      const run = (...extra: string[]) =>
        spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', `--config.file=${join(dir, 'monapi.yaml')}`, '--config.check', ...extra], {
          cwd: fileURLToPath(new URL('../..', import.meta.url)),
          env,
          encoding: 'utf8',
        });
      const refused = run();
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(`accounts: ${n} accounts on one exporter, over the measured maximum of ${MAX_ACCOUNTS_PER_EXPORTER} per exporter (docs/scaling.md): shard them, with --total-shards=`);
      expect(run('--shard=0', '--total-shards=3').status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
