import { spawn } from 'node:child_process';

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

/**
 * A child process run without blocking the test worker's event loop: spawnSync of a minutes-long
 * build starves vitest's worker RPC, which then fails the whole run with "Timeout calling
 * onTaskUpdate" although every test passed.
 */
export function run(command: string, args: readonly string[], options: { cwd?: string; timeoutMs: number; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, [...args], { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let error: Error | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      error = new Error(`${command} did not finish within ${options.timeoutMs} ms`);
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.once('error', (e) => (error = e));
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, ...(error ? { error } : {}) });
    });
  });
}
