import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryCgroup, memoryLimitBytes } from '../../bench/scale/memory-limit.js';

const MiB = 2 ** 20;

/** A directory laid out as the kernel lays out a cgroup of that version. */
function fakeCgroup(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'monapi-cgroup-'));
  for (const [name, text] of Object.entries({ 'cgroup.procs': '', ...files })) writeFileSync(join(dir, name), text);
  return dir;
}

describe('memoryLimitBytes', () => {
  it.each([
    [100_000, 720],
    [1_000_000, 1440],
    [500_000, 1040],
  ])('%i series: %i MiB, as docs/scaling.md says', (series, mib) => {
    expect(memoryLimitBytes(series)).toBe(mib * MiB);
  });
});

describe('MemoryCgroup', () => {
  it('limits a v1 memory cgroup, resets its peak, and counts the OOM kills of the step alone', () => {
    const dir = fakeCgroup({ 'memory.limit_in_bytes': '9223372036854771712\n', 'memory.max_usage_in_bytes': '5000\n', 'memory.oom_control': 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n' });
    const cgroup = new MemoryCgroup(dir);
    cgroup.limitTo(memoryLimitBytes(1_000_000));
    expect(readFileSync(join(dir, 'memory.limit_in_bytes'), 'utf8')).toBe(String(1440 * MiB));
    expect(readFileSync(join(dir, 'memory.max_usage_in_bytes'), 'utf8')).toBe('0');
    // What the kernel would write during the step.
    writeFileSync(join(dir, 'memory.max_usage_in_bytes'), '1423147008\n');
    writeFileSync(join(dir, 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 3\n');
    expect(cgroup.figures()).toEqual({ limit: 1440 * MiB, peakUsage: 1423147008, oomKills: 1 });
  });

  it('limits a v2 cgroup through memory.max and reads memory.peak and memory.events', () => {
    const dir = fakeCgroup({ 'memory.max': 'max\n', 'memory.peak': '7\n', 'memory.events': 'low 0\nhigh 0\nmax 4\noom 0\noom_kill 0\n' });
    const cgroup = new MemoryCgroup(dir);
    cgroup.limitTo(memoryLimitBytes(100_000));
    expect(readFileSync(join(dir, 'memory.max'), 'utf8')).toBe(String(720 * MiB));
    writeFileSync(join(dir, 'memory.peak'), '600000000\n');
    expect(cgroup.figures()).toEqual({ limit: 720 * MiB, peakUsage: 600000000, oomKills: 0 });
  });

  it('refuses a directory that is no cgroup, or one without a memory controller, naming it', () => {
    const plain = mkdtempSync(join(tmpdir(), 'monapi-not-cgroup-'));
    expect(() => new MemoryCgroup(plain)).toThrow(`--exporter-cgroup must be a cgroup's directory (one with a cgroup.procs file), got ${JSON.stringify(plain)}`);
    const noMemory = fakeCgroup({});
    expect(() => new MemoryCgroup(noMemory)).toThrow(/has no memory controller/);
  });
});
