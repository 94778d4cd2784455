import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { parseProbeFlags, renderProbes } from '../../src/command-line/probe.js';
import { parseConfig } from '../../src/exporter/config.js';
import { probeAccounts, type AccountProbe } from '../../src/exporter/probe.js';
import { SINGLE_SHARD } from '../../src/sharding/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const silent = pino({ level: 'silent' });

let sim: RunningSimulator;
let dir: string;
beforeAll(async () => {
  sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 2, websites: 3, rateLimitPerMinute: 6_000, burst: 100 });
  dir = mkdtempSync(join(tmpdir(), 'monapi-probe-'));
});
afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

const account = (extra = '') => `accounts:\n  - name: pro\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: PRO_KEY\n${extra}`;
const probeOf = async (yaml: string): Promise<AccountProbe> => {
  const config = parseConfig(yaml, { env: { PRO_KEY: sim.keys.pro } });
  const [probe] = await probeAccounts(config, { log: silent, shard: SINGLE_SHARD, timeoutMs: 30_000 });
  if (!probe) throw new Error('no account probed');
  return probe;
};

describe('probeAccounts against the simulator', () => {
  it('runs every source once on one target, finds every declared field, and says where the lists were', async () => {
    const probe = await probeOf(account());
    expect(probe.timedOut).toBe(false);
    expect(probe.sources.filter((s) => s.health?.up !== true).map((s) => `${s.source}: ${s.health?.reason}`)).toEqual([]);
    expect(probe.sources.flatMap((s) => s.fields.filter((f) => f.missing).map((f) => `${s.source}.${f.field}`))).toEqual([]);
    const websites = probe.sources.find((s) => s.source === 'websites');
    expect(websites?.answers.map((a) => [a.target, a.report.list?.path, a.report.list?.length])).toEqual([['/websites', 'websites', 3]]);
    expect(websites?.fields.find((f) => f.field === 'uptime_24h')?.found).toMatchObject({ path: 'uptime_pct_24h', unit: 'percent (pct in the name)' });
    // One target per source: the first website's checks only.
    expect(probe.sources.find((s) => s.source === 'checks')?.answers).toHaveLength(1);
    expect(renderProbes([probe])).toContain('Every declared field was found.');
    // A source that declares its fields but had nothing to ask is not described as reading fixed names.
    expect(probe.sources.find((s) => s.source === 'host_details')).toMatchObject({ declaresFields: true, answers: [] });
    expect(probe.sources.find((s) => s.source === 'api_description')?.declaresFields).toBe(false);
    const text = renderProbes([probe]);
    expect(text).toMatch(/^ {2}host_details: ok\n {4}\(asked nothing this pass: none of its targets needed a request\)$/m);
    expect(text).toMatch(/^ {2}api_description: ok\n {4}\(declares no fields: read by fixed names\)$/m);
  });

  it('reports a field at a configured path that is not there, and guesses the path from the answer', async () => {
    const probe = await probeOf(account('    fields:\n      account:\n        host_limit: quota.nowhere\n'));
    const accountSource = probe.sources.find((s) => s.source === 'account');
    expect(accountSource?.fields.find((f) => f.field === 'host_limit')).toMatchObject({ missing: true });
    const text = renderProbes([probe]);
    expect(text).toMatch(/^ {4}missing {2}host_limit +hosts the plan allows$/m);
    expect(text).toContain('accounts:\n  - name: pro\n    fields:\n      account:\n        host_limit: limits.hosts   # a guess: hosts the plan allows');
  });
});

describe('monapi-exporter probe', () => {
  const run = (args: readonly string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'probe', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('prints the report, exits 0 when everything was found, and never shows the key', async () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, account());
    const result = await run([`--config.file=${file}`], { PRO_KEY: sim.keys.pro });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {2}websites: ok$/m);
    expect(result.stdout).toContain('Every declared field was found.');
    expect(result.stdout + result.stderr).not.toContain(sim.keys.pro);
  }, 60_000);

  it('exits 3 with a field missing, and gives JSON on request', async () => {
    const file = join(dir, 'missing.yaml');
    writeFileSync(file, account('    fields:\n      websites:\n        uptime_24h: stats.nowhere\n'));
    const result = await run([`--config.file=${file}`, '--probe.format=json'], { PRO_KEY: sim.keys.pro });
    expect(result.code).toBe(3);
    const probes = JSON.parse(result.stdout) as AccountProbe[];
    const websites = probes[0]?.sources.find((s) => s.source === 'websites');
    expect(websites?.fields.filter((f) => f.missing).map((f) => f.field)).toEqual(['uptime_24h']);
    expect(websites?.configuredPaths).toEqual({ uptime_24h: 'stats.nowhere' });
  }, 60_000);

  it('refuses bad probe flags and unknown accounts with exit 2, and a broken config with 1', async () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, account());
    const badTimeout = await run([`--config.file=${file}`, '--probe.timeout=soon'], {});
    expect([badTimeout.code, badTimeout.stderr]).toEqual([2, expect.stringContaining('--probe.timeout')]);
    const unknown = await run([`--config.file=${file}`, '--probe.account=nope'], { PRO_KEY: sim.keys.pro });
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining('--probe.account names no account of')]);
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'accounts: []\n');
    expect((await run([`--config.file=${broken}`], {})).code).toBe(1);
  }, 60_000);
});

describe('parseProbeFlags', () => {
  it.each([
    [['--probe.timeout=30s', '--config.file=x'], { timeoutMs: 30_000, accounts: undefined, format: 'text', rest: ['--config.file=x'] }],
    [['--probe.account', 'a', '--probe.account=b', '--probe.format', 'json'], { timeoutMs: 120_000, accounts: ['a', 'b'], format: 'json', rest: [] }],
  ])('%j', (argv, want) => {
    expect(parseProbeFlags(argv)).toEqual(want);
  });

  it.each([
    [['--probe.timeout=500ms'], '--probe.timeout must be at least 1s'],
    [['--probe.format=yaml'], '--probe.format must be text or json (got "yaml")'],
    [['--probe.acount=a'], 'unknown flag --probe.acount'],
    [['--probe.account'], '--probe.account needs a value'],
  ])('%j is refused', (argv, message) => {
    expect(() => parseProbeFlags(argv)).toThrow(message);
  });
});
