import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { until } from './until.js';

/** `npm run demo` as its own process, as a user starts it: for the tests of what the process does (signals, exit codes). */

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The demo started with `args`; `output` is its stdout and stderr so far. */
export function demo(args: string[], env: NodeJS.ProcessEnv = process.env): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** The banner the demo prints once everything listens (it ends with "Press Ctrl+C"); rejects with the output if the demo exits first. */
export function banner(child: ChildProcess, output: () => string, timeoutMs = 25_000): Promise<string> {
  return until('the demo banner', async () => (/Press Ctrl\+C/.test(output()) ? output() : child.exitCode !== null ? Promise.reject(new Error(output())) : undefined), timeoutMs);
}

export const exited = (child: ChildProcess) =>
  new Promise<number | string | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode ?? child.signalCode);
    else child.once('exit', (code, signal) => resolve(code ?? signal));
  });
