import { spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** Helpers to run the harness's helper processes and to fail clearly when one misbehaves. */

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Node with tsx, so the processes run the TypeScript sources of this tree. */
export function nodeArgs(script: string, args: readonly string[] = [], extraNodeArgs: readonly string[] = []): string[] {
  return [...extraNodeArgs, '--import', 'tsx', script, ...args];
}

/** The first line of a child's stdout that matches, or an error naming the child and what it printed. */
export function waitForLine(child: ChildProcess, name: string, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => fail(new Error(`${name} printed no line matching ${pattern} within ${timeoutMs} ms; it printed:\n${seen.slice(-2000)}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      for (const line of seen.split('\n')) {
        const match = line.match(pattern);
        if (match) {
          cleanup();
          resolve(match);
          return;
        }
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      fail(new Error(`${name} exited (${code ?? signal}) before it was ready; it printed:\n${seen.slice(-2000)}`));
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
    };
    const fail = (error: Error): void => {
      cleanup();
      reject(error);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

/** SIGTERM, then SIGKILL if the process is still there after `graceMs`. */
export async function stopProcess(child: ChildProcess | undefined, graceMs = 5_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * `command` run `nice` steps below the harness's priority, with every thread it starts: the
 * load (wrk, the simulators) then waits for a core before the servers measured do, as it
 * would on a machine of its own. 0: as given.
 */
export function atLowerPriority(command: readonly string[], nice: number): string[] {
  if (nice === 0) return [...command];
  nicePath ??= requireProgram('nice', 'coreutils');
  return [nicePath, '-n', String(nice), ...command];
}

/** Looked up on PATH once: wrk starts anew for every round. */
let nicePath: string | undefined;

/** Full path of a program on PATH, or an error saying how to install it. */
export function requireProgram(name: string, debianPackage: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === '') {
    throw new Error(`${name} is not installed: the scale harness needs it (apt-get install -y ${debianPackage})`);
  }
  return path;
}

/**
 * Prints which of the harness's processes died, of what, and what it was doing: an error with
 * no handler (a socket reset, say) otherwise ends the run with a stack of Node's frames alone.
 */
export function reportCrashes(role: string, doing: () => string, before?: () => Promise<void>): void {
  const crash = (error: unknown, kind: string): void => {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    const code = typeof error === 'object' && error !== null && 'code' in error ? ` (${String(error.code)})` : '';
    process.stderr.write(`\n${role} (pid ${process.pid}) crashed: ${kind}${code} while ${doing()}\n${detail}\n`);
    void (before?.() ?? Promise.resolve()).finally(() => process.exit(1));
  };
  process.on('uncaughtException', (error) => crash(error, 'an uncaught exception'));
  process.on('unhandledRejection', (error) => crash(error, 'an unhandled rejection'));
}

/** A child's stderr, each line prefixed with its name, on this process's stderr. */
export function relayStderr(child: ChildProcess, name: string): void {
  let partial = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) process.stderr.write(`[${name}] ${line}\n`);
  });
}
