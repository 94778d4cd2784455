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

/** Full path of a program on PATH, or an error saying how to install it. */
export function requireProgram(name: string, debianPackage: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === '') {
    throw new Error(`${name} is not installed: the scale harness needs it (apt-get install -y ${debianPackage})`);
  }
  return path;
}
