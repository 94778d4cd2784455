/** The container limit docs/scaling.md gives, and a cgroup to run the exporter under it. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** "Memory per series" in docs/scaling.md: 640 MiB plus 80 MiB per 100,000 series; 384 MiB below 20,000. */
export function memoryLimitBytes(series: number): number {
  return (series < 20_000 ? 384 : 640 + (80 * series) / 100_000) * 2 ** 20;
}

/** What the kernel saw of a step's exporter in its cgroup. */
export interface CgroupFigures {
  /** The memory limit the step ran under. */
  readonly limit: number;
  /** The cgroup's largest charge during the step (resident memory and page cache); v1 only: v2's memory.peak covers the cgroup's life. */
  readonly peakUsage: number | undefined;
  /** Times the charge reached the limit and the kernel had to reclaim (v1 memory.failcnt, v2 memory.events max). */
  readonly limitHits: number | undefined;
  /** Processes the kernel's OOM killer ended in the cgroup during the step. */
  readonly oomKills: number | undefined;
}

/**
 * A cgroup (v1 memory controller or v2) the harness limits before each step and starts the
 * exporter in, as Kubernetes does with `resources.limits.memory` (swap included: none): Node
 * then sizes its heaps by that limit, as it does in a container.
 */
export class MemoryCgroup {
  readonly dir: string;
  private readonly v2: boolean;
  private limit = 0;
  private atStart: { readonly limitHits: number | undefined; readonly oomKills: number | undefined } = { limitHits: undefined, oomKills: undefined };

  constructor(dir: string) {
    this.dir = resolve(dir);
    if (!existsSync(join(this.dir, 'cgroup.procs'))) throw new Error(`--exporter-cgroup must be a cgroup's directory (one with a cgroup.procs file), got ${JSON.stringify(dir)}`);
    this.v2 = existsSync(join(this.dir, 'memory.max'));
    if (!this.v2 && !existsSync(join(this.dir, 'memory.limit_in_bytes'))) throw new Error(`--exporter-cgroup ${dir} has no memory controller (neither memory.max nor memory.limit_in_bytes)`);
  }

  /** The command that starts `command` inside the cgroup: it joins before Node starts, so Node sizes its heaps by the limit. */
  wrap(command: readonly string[]): string[] {
    return ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', this.dir, ...command];
  }

  /** Sets the limit (no swap beyond it) and starts the step's counts afresh. */
  limitTo(bytes: number): void {
    this.limit = Math.round(bytes);
    if (this.v2) {
      writeFileSync(join(this.dir, 'memory.max'), String(this.limit));
      if (existsSync(join(this.dir, 'memory.swap.max'))) writeFileSync(join(this.dir, 'memory.swap.max'), '0');
    } else {
      // Memory and swap together may not go below memory alone: lower the pair in that order, raise it the other way.
      const memsw = join(this.dir, 'memory.memsw.limit_in_bytes');
      const lower = existsSync(memsw) && this.limit < (this.readNumber('memory.limit_in_bytes') ?? Infinity);
      if (!lower && existsSync(memsw)) writeFileSync(memsw, String(this.limit));
      writeFileSync(join(this.dir, 'memory.limit_in_bytes'), String(this.limit));
      if (lower) writeFileSync(memsw, String(this.limit));
      writeFileSync(join(this.dir, 'memory.max_usage_in_bytes'), '0');
    }
    this.atStart = this.counts();
  }

  figures(): CgroupFigures {
    const now = this.counts();
    const since = (start: number | undefined, end: number | undefined): number | undefined => (start === undefined || end === undefined ? undefined : end - start);
    return {
      limit: this.limit,
      peakUsage: this.v2 ? undefined : this.readNumber('memory.max_usage_in_bytes'),
      limitHits: since(this.atStart.limitHits, now.limitHits),
      oomKills: since(this.atStart.oomKills, now.oomKills),
    };
  }

  private counts(): { limitHits: number | undefined; oomKills: number | undefined } {
    if (this.v2) {
      const events = this.read('memory.events');
      return { limitHits: field(events, 'max'), oomKills: field(events, 'oom_kill') };
    }
    return { limitHits: this.readNumber('memory.failcnt'), oomKills: field(this.read('memory.oom_control'), 'oom_kill') };
  }

  private readNumber(file: string): number | undefined {
    const text = this.read(file)?.trim();
    return text === undefined || !/^\d+$/.test(text) ? undefined : Number(text);
  }

  private read(file: string): string | undefined {
    try {
      return readFileSync(join(this.dir, file), 'utf8');
    } catch {
      return undefined;
    }
  }
}

/** A "name value" line of a cgroup's flat-keyed file. */
function field(text: string | undefined, name: string): number | undefined {
  const value = text === undefined ? undefined : new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1];
  return value === undefined ? undefined : Number(value);
}
