import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Test support: the real command line (`node --import tsx src/cli.ts`) as a child process,
 * for what only a process shows: signals, kill -9, exit codes, log lines.
 */
export interface ExporterProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Every log line so far (JSON). */
  readonly lines: string[];
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  exited(): Promise<number | null>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export async function startExporterProcess(args: readonly string[], env: Record<string, string>, port: number, scheme = 'http'): Promise<ExporterProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', `--web.listen-address=127.0.0.1:${port}`, '--log.format=json', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const onText = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line === '') continue;
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.pattern.test(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  };
  child.stdout?.on('data', onText);
  child.stderr?.on('data', onText);
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForLine = (pattern: RegExp, timeoutMs = 20_000) => {
    const found = lines.find((line) => pattern.test(line));
    if (found) return Promise.resolve(found);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no log line matching ${pattern} within ${timeoutMs} ms; got:\n${lines.slice(-20).join('\n')}`)), timeoutMs);
      waiters.push({
        pattern,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  };
  const process_: ExporterProcess = { child, url: `${scheme}://127.0.0.1:${port}`, lines, waitForLine, exited: () => exit };
  await Promise.race([waitForLine(/monapi-exporter listening/, 30_000), exit.then((code) => Promise.reject(new Error(`exporter exited with ${code}:\n${lines.join('\n')}`)))]);
  return process_;
}
