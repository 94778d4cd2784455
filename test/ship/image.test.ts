import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * Runs scripts/image-test: builds the real Dockerfile with podman and runs the image against
 * the simulator. It needs podman, runc and (the first time, to make the stand-in base image)
 * mmdebstrap and the npm registry; without them it fails with the script's message.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHECKS = [
  'the container answers /-/ready after its first polling cycle',
  '/metrics serves data of both accounts',
  'the image runs Node.js 24',
  'the exporter runs as user 65532, not root',
  'PID 1 is node running dist/cli.js',
  'the root file system is read-only and the exporter runs on it',
  'the image holds dist/ and production dependencies only',
  'the image holds no simulator, demo or test file',
  'image config: user 65532:65532, exec-form node entrypoint, OCI labels',
  'SIGTERM ends the exporter cleanly within 5 s',
];

let output = '';
let status: number | null = null;

describe('the container image (scripts/image-test)', () => {
  beforeAll(() => {
    const result = spawnSync('scripts/image-test', [], { cwd: ROOT, encoding: 'utf8', timeout: 20 * 60_000 });
    output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? `\n${result.error.message}` : ''}`;
    status = result.status;
    process.stdout.write(output.split('\n').filter((line) => line.startsWith('image ')).join('\n') + '\n');
  }, 21 * 60_000);

  it('runs to the end and passes', () => {
    expect(output).toContain('image-test: every check passed');
    expect(status, output).toBe(0);
  });

  it.each(CHECKS)('%s', (check) => {
    const line = output.split('\n').find((l) => l.replace(/^(not )?ok - /, '').startsWith(check) && /^(not )?ok - /.test(l));
    expect(line, `no result for this check; the script said:\n${output}`).toBeDefined();
    expect(line, output).toMatch(/^ok - /);
  });
});
