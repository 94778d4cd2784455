/** The container memory limit docs/scaling.md gives, and a cgroup to run the exporter under it. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** "Memory per series" in docs/scaling.md: 640 MiB plus 80 MiB per 100,000 series. */
export function memoryLimitBytes(series: number): number {
  return (640 + (80 * series) / 100_000) * 2 ** 20;
}

/** What the kernel saw of a step's exporter in its cgroup. */
export interface CgroupFigures {
  /** The memory limit the step ran under. */
  readonly limit: number;
  /** The cgroup's largest charge (resident memory and page cache), where the kernel keeps it. */
  readonly peakUsage: number | undefined;
  /** Processes the kernel's OOM killer ended in the cgroup during the step, where it counts them. */
  readonly oomKills: number | undefined;
}

/**
 * A cgroup (v1 memory controller or v2) the harness sets to a step's limit before starting its
 * exporter in it, as Kubernetes would with `resources.limits.memory`: Node then sizes its heaps
 * by that limit, as it does in a container.
 */
export class MemoryCgroup {
  private readonly v2: boolean;
  private oomKillsAtStart: number | undefined;
  private limit = 0;

  constructor(readonly dir: string) {
    this.dir = resolve(dir);
    if (!existsSync(join(this.dir, 'cgroup.procs'))) throw new Error(`--exporter-cgroup must be a cgroup's directory (one with a cgroup.procs file), got ${JSON.stringify(dir)}`);
    this.v2 = existsSync(join(this.dir, 'memory.max'));
    if (!this.v2 && !existsSync(join(this.dir, 'memory.limit_in_bytes'))) throw new Error(`--exporter-cgroup ${dir} has no memory controller (neither memory.max nor memory.limit_in_bytes)`);
  }

  /** Sets the limit and starts the step's counts afresh; the processes already in it should be gone. */
  limitTo(bytes: number): void {
    this.limit = Math.round(bytes);
    if (this.v2) {
      writeFileSync(join(this.dir, 'memory.max'), String(this.limit));
      // memory.peak is reset by writing to it only on recent kernels; where it is not, the step's peak is the cgroup's.
      this.tryWrite('memory.peak', '0');
    } else {
      writeFileSync(join(this.dir, 'memory.limit_in_bytes'), String(this.limit));
      writeFileSync(join(this.dir, 'memory.max_usage_in_bytes'), '0');
    }
    this.oomKillsAtStart = this.oomKills();
  }

  figures(): CgroupFigures {
    const peak = this.readNumber(this.v2 ? 'memory.peak' : 'memory.max_usage_in_bytes');
    const kills = this.oomKills();
    return { limit: this.limit, peakUsage: peak, oomKills: kills === undefined || this.oomKillsAtStart === undefined ? undefined : kills - this.oomKillsAtStart };
  }

  private oomKills(): number | undefined {
    const text = this.read(this.v2 ? 'memory.events' : 'memory.oom_control');
    const count = text === undefined ? undefined : /^oom_kill (\d+)$/m.exec(text)?.[1];
    return count === undefined ? undefined : Number(count);
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

  private tryWrite(file: string, text: string): void {
    try {
      writeFileSync(join(this.dir, file), text);
    } catch {
      // Not resettable here: the figure then covers the cgroup's life.
    }
  }
}
