import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { run } from '../support/run.js';
import { CHART, ROOT } from './chart-harness.js';

/**
 * What an operator installs: the release workflow (.github/workflows/release.yml), checked
 * offline with actionlint (scripts/actionlint builds it from the Go module proxy) and by
 * running its version check here; the Dockerfile's labels; the LICENSE the labels name.
 * test/ship/image.test.ts builds and runs the image itself, for amd64 and arm64.
 */

const WORKFLOW = '.github/workflows/release.yml';

interface Step {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, string | boolean>;
  env?: Record<string, string>;
}
interface Job {
  needs?: string | string[];
  permissions?: Record<string, string>;
  env?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: { push: { tags: string[] } };
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
}

const workflowText = readFileSync(join(ROOT, WORKFLOW), 'utf8');
const workflow = parse(workflowText) as Workflow;
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; license: string };
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

async function actionlint(args: readonly string[]): Promise<{ status: number | null; output: string }> {
  const result = await run(join(ROOT, 'scripts/actionlint'), args, { cwd: ROOT, timeoutMs: 5 * 60_000 });
  if (result.error) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function step(job: string, uses: string): Step {
  const found = workflow.jobs[job]?.steps.find((s) => s.uses?.startsWith(`${uses}@`));
  if (!found) throw new Error(`job ${job} has no step using ${uses}`);
  return found;
}

describe('the release workflow', () => {
  const dir = mkdtempSync(join(tmpdir(), 'monapi-release-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes actionlint, shellcheck of its run: steps included', async () => {
    const { status, output } = await actionlint([WORKFLOW]);
    expect(output).toBe('');
    expect(status).toBe(0);
  }, 6 * 60_000);

  it('would fail actionlint with a misspelt input, a bad expression or a shell mistake (the check is not vacuous)', async () => {
    const broken = workflowText
      .replace('platforms: linux/amd64,linux/arm64', 'platform: linux/amd64,linux/arm64')
      .replace('${{ needs.version.outputs.owner }}/monapi-exporter', '${{ needs.versions.outputs.owner }}/monapi-exporter')
      .replace('helm package helm/monapi-exporter --destination dist-chart', 'helm package helm/monapi-exporter --destination $DEST_DIR');
    const file = join(dir, 'broken.yml');
    writeFileSync(file, broken);
    const { status, output } = await actionlint([file]);
    expect(status).toBe(1);
    expect(output).toMatch(/input "platform" is not defined in action "docker\/build-push-action@v6"/);
    expect(output).toMatch(/property "versions" is not defined/);
    expect(output).toMatch(/SC2086/);
  }, 6 * 60_000);

  it('runs on version tags only, with no permission unless a job asks', () => {
    expect(workflow.on).toEqual({ push: { tags: ['v[0-9]+.[0-9]+.[0-9]+'] } });
    expect(workflow.permissions).toEqual({});
    expect(workflow.jobs.version?.permissions).toEqual({ contents: 'read' });
    for (const job of ['image', 'chart']) expect(workflow.jobs[job]?.permissions, job).toEqual({ contents: 'read', packages: 'write' });
  });

  it('builds linux/amd64 and linux/arm64, pushes them to ghcr.io/<owner>/monapi-exporter with an SBOM and provenance', () => {
    const build = step('image', 'docker/build-push-action');
    expect(build.with).toMatchObject({ platforms: 'linux/amd64,linux/arm64', push: true, sbom: true, provenance: 'mode=max' });
    expect(workflow.jobs.image?.env?.IMAGE).toBe('ghcr.io/${{ needs.version.outputs.owner }}/monapi-exporter');
    expect(step('image', 'docker/login-action').with?.registry).toBe('ghcr.io');
    expect(step('image', 'docker/metadata-action').with?.images).toBe('${{ env.IMAGE }}');
    expect(build.with?.tags).toBe('${{ steps.meta.outputs.tags }}');
  });

  it('labels the image with the tag\'s version, the commit and the time, never "unknown", and checks what was pushed', () => {
    const build = step('image', 'docker/build-push-action');
    const args = String(build.with?.['build-args']).trim().split('\n');
    expect(args).toEqual([
      'VERSION=${{ env.VERSION }}',
      'REVISION=${{ github.sha }}',
      "CREATED=${{ fromJSON(steps.meta.outputs.json).labels['org.opencontainers.image.created'] }}",
    ]);
    expect(workflow.jobs.image?.env?.VERSION).toBe('${{ needs.version.outputs.version }}');
    expect(build.with).toMatchObject({ labels: '${{ steps.meta.outputs.labels }}', annotations: '${{ steps.meta.outputs.annotations }}' });
    const meta = step('image', 'docker/metadata-action');
    expect(String(meta.with?.labels)).toContain('org.opencontainers.image.licenses=Apache-2.0');
    expect(String(meta.with?.labels)).toContain('org.opencontainers.image.base.name=docker.io/library/node:24-bookworm-slim');
    const verify = workflow.jobs.image!.steps.at(-1)!;
    expect(verify.run).toContain('org.opencontainers.image.revision=$GITHUB_SHA');
    expect(verify.run).toContain('for platform in linux/amd64 linux/arm64');
    expect(verify.run).toContain('.SPDX');
  });

  it('pushes the chart as an OCI artefact to oci://ghcr.io/<owner>/charts after the image', () => {
    const chart = workflow.jobs.chart!;
    expect(chart.needs).toEqual(['version', 'image']);
    const push = chart.steps.find((s) => s.run?.includes('helm push'))!;
    expect(push.run).toContain('helm package helm/monapi-exporter');
    expect(push.run).toContain('helm push "dist-chart/monapi-exporter-$CHART_VERSION.tgz" "oci://ghcr.io/$OWNER/charts"');
    expect(push.run).toContain('--password-stdin');
  });

  describe('its version check, run here as the runner would', () => {
    const check = workflow.jobs.version!.steps.find((s) => s.id === 'check')!.run!;
    const runCheck = (tag: string, owner: string) => {
      const output = join(dir, `output-${tag}-${owner}`);
      writeFileSync(output, '');
      const result = spawnSync('bash', ['-c', check], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, GITHUB_REF_NAME: tag, GITHUB_REPOSITORY_OWNER: owner, GITHUB_OUTPUT: output } });
      return { status: result.status, stdout: result.stdout, outputs: readFileSync(output, 'utf8') };
    };

    it('passes for this version and owner, and hands them on', () => {
      const chartVersion = /^version: (\S+)$/m.exec(readFileSync(`${CHART}/Chart.yaml`, 'utf8'))![1];
      const result = runCheck(`v${packageJson.version}`, 'Monapi');
      expect(result.status, result.stdout).toBe(0);
      expect(result.outputs).toBe(`version=${packageJson.version}\nowner=monapi\nchart-version=${chartVersion}\n`);
    });

    it('fails naming every file whose version differs from the tag', () => {
      const result = runCheck('v9.9.9', 'monapi');
      expect(result.status).not.toBe(0);
      expect(result.stdout).toContain(`::error::package.json says ${packageJson.version}, the tag says 9.9.9`);
      expect(result.stdout).toContain(`::error::Dockerfile ARG VERSION says ${packageJson.version}, the tag says 9.9.9`);
      expect(result.stdout).toContain(`::error::Chart.yaml appVersion says ${packageJson.version}, the tag says 9.9.9`);
      expect(result.outputs).toBe('');
    });

    it('fails when the chart\'s default image is not where this repository\'s owner pushes it', () => {
      const result = runCheck(`v${packageJson.version}`, 'someone-else');
      expect(result.status).not.toBe(0);
      expect(result.stdout).toContain("::error::the chart's default image is ghcr.io/monapi/monapi-exporter, but this workflow pushes ghcr.io/someone-else/monapi-exporter");
    });
  });
});

describe('the Dockerfile', () => {
  const lastStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('labels a plain build with the package version and the base image (NODE_IMAGE declared again in the last stage)', () => {
    expect(lastStage).toMatch(/^ARG NODE_IMAGE$/m);
    expect(/^ARG VERSION=(.+)$/m.exec(lastStage)?.[1]).toBe(packageJson.version);
    expect(lastStage).toContain('org.opencontainers.image.base.name="${NODE_IMAGE}"');
    expect(lastStage).toContain('org.opencontainers.image.version="${VERSION}"');
  });

  it('ships the license its labels name', () => {
    expect(packageJson.license).toBe('Apache-2.0');
    expect(lastStage).toContain('org.opencontainers.image.licenses="Apache-2.0"');
    expect(lastStage).toMatch(/^COPY package\.json LICENSE \.\/$/m);
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(license).toContain('TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION');
    expect(license).toContain('END OF TERMS AND CONDITIONS');
    // The full text, not a pointer to it: its nine sections.
    for (let section = 1; section <= 9; section++) expect(license).toMatch(new RegExp(`^\\s+${section}\\. [A-Z]`, 'm'));
  });
});
