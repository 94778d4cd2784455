import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { run } from '../support/run.js';

/**
 * Runs scripts/image-test: builds the real Dockerfile with podman and runs the image against
 * the simulator, for this machine's platform (linux/amd64) and for linux/arm64, which
 * qemu-user-static runs through binfmt_misc. It needs podman, runc and (the first time, to
 * make the stand-in base images) mmdebstrap and the npm registry, and for arm64
 * qemu-user-static, binfmt-support and arch-test (.ci/run installs them all); without them
 * it fails with the script's message.
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
  'the revision label is the commit built',
  'node_modules holds no native addon, so it is the same for every platform',
  'SIGTERM ends the exporter cleanly within 5 s',
];

/** Runs in order, not in parallel: both builds share podman's storage and the stand-in base images. */
describe.each([
  { platform: 'linux/amd64', args: [], extra: ['the image is linux/amd64 and its node runs as x64', 'a build without build arguments labels version'] },
  { platform: 'linux/arm64', args: ['--platform', 'linux/arm64'], extra: ['the image is linux/arm64 and its node runs as arm64'] },
])('the container image for $platform (scripts/image-test)', ({ args, extra }) => {
  let output = '';
  let status: number | null = null;

  beforeAll(async () => {
    const result = await run('scripts/image-test', args, { cwd: ROOT, timeoutMs: 20 * 60_000 });
    output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? `\n${result.error.message}` : ''}`;
    status = result.status;
    process.stdout.write(output.split('\n').filter((line) => /^(image |memory: |ok - the container answers)/.test(line)).join('\n') + '\n');
  }, 21 * 60_000);

  it('runs to the end and passes', () => {
    expect(output).toContain('image-test: every check passed');
    expect(status, output).toBe(0);
  });

  it.each([...CHECKS, ...extra])('%s', (check) => {
    const line = output.split('\n').find((l) => l.replace(/^(not )?ok - /, '').startsWith(check) && /^(not )?ok - /.test(l));
    expect(line, `no result for this check; the script said:\n${output}`).toBeDefined();
    expect(line, output).toMatch(/^ok - /);
  });
});
