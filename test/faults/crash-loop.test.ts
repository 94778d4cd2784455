import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { freePort } from '../support/prometheus.js';
import { startExporterProcess, type ExporterProcess } from './process.js';

/**
 * Issue 21, item 5: a crash loop costs nothing. The real program, killed with SIGKILL at a
 * random moment of its first seconds and started again at once, 20 times, against the
 * simulator at its documented limit (120 requests a minute, burst 30) with enough hosts that
 * every start wants more than a burst. Before, each start spent a fresh burst: 20 restarts drew
 * 29 x 429 from the upstream key. Now the budget's bucket is in the state file, leased ahead of
 * the spending, and no restart spends what the upstream has not given back.
 */

const RESTARTS = 20;
const BURST = 30;
let sim: RunningSimulator;
let dir: string;
let current: ExporterProcess | undefined;

beforeAll(async () => {
  sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 40, websites: 5 });
  dir = mkdtempSync(join(tmpdir(), 'monapi-crash-loop-'));
});
afterAll(async () => {
  current?.child.kill('SIGKILL');
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

interface SimStats {
  monitoring: Record<string, { total: number; by_status: Record<string, number> }>;
}

async function proStats(): Promise<{ total: number; by_status: Record<string, number> }> {
  const stats = (await (await fetch(`${sim.adminUrl}/stats`)).json()) as SimStats;
  return stats.monitoring.pro ?? { total: 0, by_status: {} };
}

const running = (start: ExporterProcess): boolean => start.child.exitCode === null && start.child.signalCode === null;

/** What a start that spent too little was doing: its exit, its budget's self-metrics and its last log lines. */
async function whyIdle(start: ExporterProcess, pro: { total: number; by_status: Record<string, number> }): Promise<string> {
  let budget = '(no /metrics: the process is gone)';
  if (running(start)) {
    budget = await fetch(`${start.url}/metrics`)
      .then((res) => res.text())
      .then((text) => text.split('\n').filter((line) => /^monapi_(budget|job|exporter_state|upstream)/.test(line)).join('\n'))
      .catch((error: unknown) => `(no /metrics: ${String(error)})`);
  }
  return [`key: ${JSON.stringify(pro)}; exit code ${start.child.exitCode}, signal ${start.child.signalCode}`, budget, ...start.lines.slice(-30)].join('\n');
}

describe('a crash loop', () => {
  it(`${RESTARTS} kill -9 restarts in a row draw no 429 from the upstream and leave no temporary files`, async () => {
    writeFileSync(join(dir, 'monapi.yaml'), `accounts:\n  - name: pro\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: SIM_PRO_KEY\n`);
    const stateFile = join(dir, 'state.json');
    const args = [`--config.file=${join(dir, 'monapi.yaml')}`, `--state.file=${stateFile}`];
    for (let round = 0; round < RESTARTS; round++) {
      current = await startExporterProcess(args, { SIM_PRO_KEY: sim.keys.pro }, await freePort());
      // A random moment of the first seconds, when a start spends the most.
      await new Promise((r) => setTimeout(r, 300 + Math.random() * 3_000));
      current.child.kill('SIGKILL');
      await current.exited();
    }
    // A start killed while it waits out the budget its predecessors leased spends nothing, so
    // the loop alone may spend little. One more start, left running, must then spend (5
    // requests of its own at least, counted from when it listens) and take the key's total past
    // a whole burst, still without a single 429.
    current = await startExporterProcess(args, { SIM_PRO_KEY: sim.keys.pro }, await freePort());
    // The running start may be mid-save of its own lease: only its own temporary file may exist.
    const ownSave = `state.json.tmp-${current.child.pid}`;
    expect(readdirSync(dir).filter((name) => name.includes('.tmp-') && name !== ownSave)).toEqual([]);
    expect(existsSync(stateFile)).toBe(true);
    const final = current;
    const beforeFinal = (await proStats()).total;
    const deadline = Date.now() + 150_000;
    const enough = (total: number) => total >= BURST + 5 && total - beforeFinal >= 5;
    while (!enough((await proStats()).total) && running(final) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const pro = await proStats();
    console.log(`crash loop: the key had answered ${beforeFinal} requests when the last start listened, ${pro.total - beforeFinal} more since, ${pro.by_status['429'] ?? 0} of them 429`);
    if (!enough(pro.total)) expect.fail(await whyIdle(final, pro));
    expect(pro.by_status['429'] ?? 0, JSON.stringify(pro.by_status)).toBe(0);
    current.child.kill('SIGKILL');
    await current.exited();
  }, 360_000);
});
