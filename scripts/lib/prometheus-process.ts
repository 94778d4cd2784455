import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/**
 * What starting a Prometheus takes wherever the project does it (the demo's, the tests'): a free
 * loopback port for it, and waiting until it says it is ready or dies.
 */

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Polls `<url>/-/ready` until it answers 200; throws, with what the process wrote to stderr,
 * when it exits or fails to start first, or after `timeoutMs`.
 */
export async function waitUntilReady(url: string, child: ChildProcess, what: string, stderr: () => string, spawnError: () => Error | undefined = () => undefined, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failed = spawnError();
    if (failed !== undefined) throw new Error(`could not start ${what}: ${failed.message}`);
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited with ${child.exitCode ?? child.signalCode}: ${stderr().trim()}`);
    try {
      if ((await fetch(`${url}/-/ready`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not become ready in ${Math.round(timeoutMs / 1000)} s: ${stderr().trim()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
