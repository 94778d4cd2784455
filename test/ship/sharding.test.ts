import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IStatefulSet } from 'kubernetes-models/apps/v1';
import type { IConfigMap } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOfName } from '../../src/sharding/index.js';
import { startSimulator, type RunningSimulator, type SimStats } from '../../simulator/index.js';
import { find, render, ROOT } from './chart-harness.js';

/**
 * The sharded StatefulSet really shards: the chart renders a StatefulSet of three pods; each
 * pod is started here as an exporter process with exactly the arguments, environment and
 * configuration the chart gives it, against one simulator with four accounts. The simulator
 * counts requests per API key (/_sim/stats): each shard alone polls exactly its accounts'
 * keys, and the three together poll every key.
 */

// Four accounts over three shards: two hash to shard 0, one each to shards 1 and 2.
// The simulator tells its keys apart by plan; any unknown key counts as "invalid".
const ACCOUNTS = [
  { name: 'apac-prod', key: 'sim-pro-key', client: 'pro' },
  { name: 'staging', key: 'sim-starter-key', client: 'starter' },
  { name: 'eu-prod', key: 'sim-business-key', client: 'business' },
  { name: 'us-prod', key: 'sim-revoked-key', client: 'invalid' },
];
const TOTAL = 3;
const envName = (account: string) => `MONAPI_KEY_${account.toUpperCase().replace(/-/g, '_')}`;

interface Shard {
  readonly ordinal: number;
  readonly args: string[];
  readonly env: NodeJS.ProcessEnv;
}

interface ShardStatus {
  shard: { ordinal: number; total: number; accounts: string[]; releases: boolean };
  accounts: { account: string }[];
  releases?: { projects: unknown[] };
}

let simulator: RunningSimulator;
let dir: string;
let shards: Shard[];
const running = new Set<ChildProcess>();

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

async function simStats(): Promise<SimStats> {
  const response = await fetch(`${simulator.adminUrl}/stats`);
  return (await response.json()) as SimStats;
}

async function resetSimStats(): Promise<void> {
  expect((await fetch(`${simulator.adminUrl}/stats/reset`, { method: 'POST' })).status).toBe(200);
}

const polledKeys = (stats: SimStats) => Object.keys(stats.monitoring).filter((client) => (stats.monitoring[client]?.total ?? 0) > 0).sort();

/** Starts one pod's exporter; resolves with its URL once /-/ready answers 200 (its first complete polling cycle). */
async function startShard(shard: Shard): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const port = await freePort();
  const probePort = await freePort();
  // The pods' ports, each on a port of its own: here they all run on one machine.
  const args = shard.args.map((arg) =>
    arg.startsWith('--web.listen-address=') ? `--web.listen-address=127.0.0.1:${port}` : arg.startsWith('--web.probe-listen-address=') ? `--web.probe-listen-address=127.0.0.1:${probePort}` : arg,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env: { ...process.env, ...shard.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`shard ${shard.ordinal} exited with ${child.exitCode}:\n${output}`);
    const ready = await fetch(`${url}/-/ready`).then((r) => r.status === 200, () => false);
    if (ready) return { url, child, output: () => output };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`shard ${shard.ordinal} did not become ready in 30 s:\n${output}`);
}

async function stopShard(child: ChildProcess): Promise<number | null> {
  const exited = child.exitCode === null ? once(child, 'exit') : Promise.resolve();
  child.kill('SIGTERM');
  await exited;
  running.delete(child);
  return child.exitCode;
}

beforeAll(async () => {
  simulator = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 2, websites: 1 });
  dir = mkdtempSync(join(tmpdir(), 'monapi-sharding-'));
  const values = {
    sharding: { enabled: true },
    replicas: TOTAL,
    config: {
      accounts: ACCOUNTS.map((a) => ({ name: a.name, base_url: simulator.monitoringBaseUrl, api_key_env: envName(a.name) })),
      releases: { mode: 'free', free_base_url: simulator.releasesBaseUrl, projects: ['nginx/nginx'] },
    },
  };
  writeFileSync(join(dir, 'values.yaml'), JSON.stringify(values));
  const objects = render(4, { values: [join(dir, 'values.yaml')] });
  const statefulSet = find<IStatefulSet>(objects, 'StatefulSet');
  const configMap = objects.find((o) => o.kind === 'ConfigMap') as IConfigMap;
  writeFileSync(join(dir, 'config.yaml'), configMap.data!['config.yaml']!);
  const container = statefulSet.spec!.template.spec!.containers[0]!;
  expect(container.env?.find((e) => e.name === 'MONAPI_SHARD_POD_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
  const keys = Object.fromEntries(ACCOUNTS.map((a) => [envName(a.name), a.key]));
  shards = Array.from({ length: statefulSet.spec!.replicas! }, (_, ordinal) => ({
    ordinal,
    // The chart's arguments, with the config file where this test wrote the ConfigMap's content.
    args: (container.args ?? []).map((arg) => (arg.startsWith('--config.file=') ? `--config.file=${join(dir, 'config.yaml')}` : arg)),
    // What the downward API gives pod N, and the keys the pod would get from its Secret.
    env: { ...keys, MONAPI_SHARD_POD_NAME: `${statefulSet.metadata!.name}-${ordinal}` },
  }));
}, 60_000);

afterAll(async () => {
  for (const child of running) child.kill('SIGKILL');
  await simulator?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the sharded StatefulSet', () => {
  it('is rendered with one pod per shard, each passed the total', () => {
    expect(shards).toHaveLength(TOTAL);
    for (const shard of shards) expect(shard.args).toContain(`--total-shards=${TOTAL}`);
    // The test is only meaningful if the accounts spread over every shard, unevenly.
    expect(ACCOUNTS.map((a) => shardOfName(a.name, TOTAL))).toEqual([0, 0, 1, 2]);
  });

  it.each([0, 1, 2])('shard %i alone polls exactly the keys of the accounts that hash to it', async (ordinal) => {
    await resetSimStats();
    const { url, child, output } = await startShard(shards[ordinal]!);
    const status = (await (await fetch(`${url}/status`)).json()) as ShardStatus;
    const stats = await simStats();
    expect(await stopShard(child), output()).toBe(0);

    const mine = ACCOUNTS.filter((a) => shardOfName(a.name, TOTAL) === ordinal);
    expect(status.shard).toEqual({ ordinal, total: TOTAL, accounts: mine.map((a) => a.name), accounts_on_other_shards: ACCOUNTS.length - mine.length, releases: ordinal === 0 });
    expect(status.accounts.map((a) => a.account)).toEqual(mine.map((a) => a.name));
    expect(polledKeys(stats)).toEqual(mine.map((a) => a.client).sort());
    // Release lookups spend no account's key. The configured projects are looked up on shard 0
    // only; every shard looks up the version lines of its own components (the outdated check).
    expect(status.releases?.projects.length ?? 0).toBe(ordinal === 0 ? 1 : 0);
  });

  it('polls every key, each from one pod, with all shards running together', async () => {
    await resetSimStats();
    const started = await Promise.all(shards.map((shard) => startShard(shard)));
    const statuses = await Promise.all(started.map(async ({ url }) => ((await (await fetch(`${url}/status`)).json()) as ShardStatus).shard));
    const stats = await simStats();
    const codes = await Promise.all(started.map(({ child }) => stopShard(child)));

    expect(codes).toEqual([0, 0, 0]);
    expect(polledKeys(stats)).toEqual(ACCOUNTS.map((a) => a.client).sort());
    const owners = statuses.flatMap((s) => s.accounts.map((account) => ({ account, ordinal: s.ordinal })));
    expect(owners.map((o) => o.account).sort()).toEqual(ACCOUNTS.map((a) => a.name).sort());
    for (const { account, ordinal } of owners) expect(shardOfName(account, TOTAL)).toBe(ordinal);
  });

  it('refuses to start a pod beyond the total, as after kubectl scale', async () => {
    const extra = { ...shards[0]!, env: { ...shards[0]!.env, MONAPI_SHARD_POD_NAME: 'monapi-monapi-exporter-3' } };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...extra.args], { cwd: ROOT, env: { ...process.env, ...extra.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(2);
    expect(stderr).toContain('shard 3 (from MONAPI_SHARD_POD_NAME "monapi-monapi-exporter-3") does not exist: --total-shards is 3, so shards are numbered 0 to 2');
  });
});
