import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryCgroup, memoryLimitBytes } from '../../bench/scale/memory-limit.js';

const MiB = 2 ** 20;
const made: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A directory laid out as the kernel lays out a cgroup of that version. */
function fakeCgroup(files: Record<string, string>): string {
  const dir = tempDir('monapi-cgroup-');
  for (const [name, text] of Object.entries({ 'cgroup.procs': '', ...files })) writeFileSync(join(dir, name), text);
  return dir;
}

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('memoryLimitBytes', () => {
  it.each([
    [10_000, 384],
    [100_000, 720],
    [500_000, 1040],
    [1_000_000, 1440],
  ])('%i series: %i MiB, as the table in docs/scaling.md says', (series, mib) => {
    expect(memoryLimitBytes(series)).toBe(mib * MiB);
  });
});

describe('MemoryCgroup', () => {
  it('limits a v1 memory cgroup with no swap beyond it, resets its peak, and counts what happened during the step alone', () => {
    const dir = fakeCgroup({
      'memory.limit_in_bytes': '9223372036854771712\n',
      'memory.memsw.limit_in_bytes': '9223372036854771712\n',
      'memory.max_usage_in_bytes': '5000\n',
      'memory.failcnt': '7\n',
      'memory.oom_control': 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n',
    });
    const cgroup = new MemoryCgroup(dir);
    cgroup.limitTo(memoryLimitBytes(1_000_000));
    expect(readFileSync(join(dir, 'memory.limit_in_bytes'), 'utf8')).toBe(String(1440 * MiB));
    expect(readFileSync(join(dir, 'memory.memsw.limit_in_bytes'), 'utf8')).toBe(String(1440 * MiB));
    expect(readFileSync(join(dir, 'memory.max_usage_in_bytes'), 'utf8')).toBe('0');
    // What the kernel would write during the step.
    writeFileSync(join(dir, 'memory.max_usage_in_bytes'), '1423147008\n');
    writeFileSync(join(dir, 'memory.failcnt'), '9\n');
    writeFileSync(join(dir, 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 3\n');
    expect(cgroup.figures()).toEqual({ limit: 1440 * MiB, peakUsage: 1423147008, limitHits: 2, oomKills: 1 });
  });

  it('limits a v2 cgroup through memory.max with no swap, and counts its memory.events of the step alone', () => {
    const dir = fakeCgroup({ 'memory.max': 'max\n', 'memory.swap.max': 'max\n', 'memory.peak': '7\n', 'memory.events': 'low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n' });
    const cgroup = new MemoryCgroup(dir);
    cgroup.limitTo(memoryLimitBytes(100_000));
    expect(readFileSync(join(dir, 'memory.max'), 'utf8')).toBe(String(720 * MiB));
    expect(readFileSync(join(dir, 'memory.swap.max'), 'utf8')).toBe('0');
    writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 6\noom 2\noom_kill 2\n');
    // memory.peak covers the cgroup's whole life: not given as the step's.
    expect(cgroup.figures()).toEqual({ limit: 720 * MiB, peakUsage: undefined, limitHits: 2, oomKills: 1 });
  });

  it('starts a process inside it before the process runs, its arguments and IPC channel intact', async () => {
    const dir = fakeCgroup({ 'memory.max': 'max\n' });
    const command = new MemoryCgroup(dir).wrap([process.execPath, '-e', 'process.send(process.argv.slice(1))', 'an argument with spaces', '$HOME']);
    const child = spawn(command[0] as string, command.slice(1), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const message = await new Promise((resolve) => child.once('message', resolve));
    await new Promise((resolve) => child.once('exit', resolve));
    expect(message).toEqual(['an argument with spaces', '$HOME']);
    // The shell's pid, which exec hands on to node: the process the cgroup holds is the one started.
    expect(readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim()).toBe(String(child.pid));
  });

  it('refuses a directory that is no cgroup, or one without a memory controller, naming it', () => {
    const plain = tempDir('monapi-not-cgroup-');
    expect(() => new MemoryCgroup(plain)).toThrow(`--exporter-cgroup must be a cgroup's directory (one with a cgroup.procs file), got ${JSON.stringify(plain)}`);
    const noMemory = fakeCgroup({});
    expect(() => new MemoryCgroup(noMemory)).toThrow(/has no memory controller/);
  });
});
