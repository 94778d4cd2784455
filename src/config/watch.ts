import { createHash } from 'node:crypto';
import { resolve as resolvePath } from 'node:path';
import type { Clock, TimerHandle } from '../lib/clock.js';
import { CONFIG_FILE_MAX_BYTES, InputFileError, readBoundedFile } from './input.js';
import type { Config } from './types.js';

/**
 * Notices a changed configuration file, or a changed key or CA file it names, so a running
 * exporter reloads in place (`--config.watch-interval`). Kubernetes updates a mounted
 * ConfigMap or Secret by swapping the `..data` symlink of its volume, which inotify-based
 * watching misses; so each file's content is read and hashed on a timer, through whatever
 * symlinks lead to it.
 */

/** The files a configuration is made of: the file itself and every key and CA file it names. */
export function configFiles(configFile: string, config: Config): string[] {
  const files = [resolvePath(configFile)];
  for (const account of config.accounts) {
    if (account.apiKeySource.kind === 'file') files.push(account.apiKeySource.path);
    if (account.http?.caFile !== undefined) files.push(account.http.caFile);
  }
  const releases = config.releases;
  if (releases?.mode === 'marketplace' && releases.marketplaceKeySource.kind === 'file') files.push(releases.marketplaceKeySource.path);
  if (releases?.http?.caFile !== undefined) files.push(releases.http.caFile);
  return [...new Set(files)];
}

export interface ConfigWatchOptions {
  /** Time between two looks at the files. */
  readonly intervalMs: number;
  readonly clock: Clock;
  /** The files to look at; asked again after every change, as a reload may name other files. */
  readonly files: () => readonly string[];
  /** Called with the files whose content changed (or that appeared or vanished). */
  readonly onChange: (changed: readonly string[]) => void;
  /** Reads a file; throws when it cannot. Default: a bounded read of a regular file. */
  readonly readFile?: (path: string) => string;
}

export interface ConfigWatch {
  /** Looks at the files now (the timer does this every interval); returns the changed ones. */
  check(): string[];
  stop(): void;
}

const readWatched = (path: string): string => readBoundedFile(path, CONFIG_FILE_MAX_BYTES, 'watched file');

/** Starts watching: the files as they are now are the baseline. */
export function watchConfigFiles(options: ConfigWatchOptions): ConfigWatch {
  const read = options.readFile ?? readWatched;
  const fingerprint = (path: string): string => {
    try {
      return createHash('sha256').update(read(path)).digest('hex');
    } catch (error) {
      // A missing or unreadable file is a state like any other: its repair is a change too.
      return `unreadable: ${error instanceof InputFileError ? error.reason : error instanceof Error ? error.message : String(error)}`;
    }
  };
  const snapshot = (paths: readonly string[], known?: ReadonlyMap<string, string>) =>
    new Map(paths.map((path) => [path, known?.get(path) ?? fingerprint(path)]));

  let seen = snapshot(options.files());
  let timer: TimerHandle | undefined;
  let stopped = false;

  const check = (): string[] => {
    const now = snapshot([...seen.keys()]);
    const changed = [...now].filter(([path, print]) => seen.get(path) !== print).map(([path]) => path);
    if (changed.length === 0) return changed;
    try {
      options.onChange(changed);
    } finally {
      // What was read before the reload is the baseline, so a change during the reload is seen
      // next time; files the reloaded configuration newly names are read now.
      seen = snapshot(options.files(), now);
    }
    return changed;
  };

  const schedule = () => {
    if (stopped) return;
    timer = options.clock.setTimeout(() => {
      try {
        check();
      } finally {
        schedule();
      }
    }, options.intervalMs);
  };
  schedule();

  return {
    check,
    stop() {
      stopped = true;
      if (timer !== undefined) options.clock.clearTimeout(timer);
    },
  };
}
