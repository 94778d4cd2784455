import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IDeployment, IStatefulSet } from 'kubernetes-models/apps/v1';
import type { IJob } from 'kubernetes-models/batch/v1';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IResourceRequirements } from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { CHART, CI_VALUES, OPERATOR_APIS, find, helm, parseManifests, render, ROOT, type K8sObject } from './chart-harness.js';

/**
 * The chart against the linters of the field (docs/helm-chart.md, "Linters"): kube-score
 * v1.20.0 (scripts/kube-score builds it from the Go module proxy) on every rendered ci values
 * file, with each check the chart fails on purpose named in a kube-score/ignore annotation and
 * its reason in a comment; chart-testing's conventions (maintainers, yamllint with its
 * lintconf); and what the fixes promise: resources by the sizing rule of docs/scaling.md,
 * shards spread over nodes, a disruption budget that never holds up a drain.
 * kube-score and yamllint missing is a failure, never a skip: .ci/run provides both.
 */

/** Every check a workload of the chart may ignore, and the condition the annotation's comment gives. */
const EXCEPTIONS: Record<string, RegExp> = {
  'container-image-pull-policy': /image\.pullPolicy is (IfNotPresent|Never)/,
  'pod-networkpolicy': /networkPolicy\.enabled is false/,
  'deployment-strategy': /Recreate/,
  'deployment-replicas': /one pod/,
};

function kubeScoreBinary(): string {
  const where = spawnSync('bash', [join(ROOT, 'scripts/kube-score'), '--where'], { encoding: 'utf8' });
  const path = join(where.stdout.trim(), 'kube-score');
  if (where.status !== 0 || !existsSync(path)) {
    throw new Error(`kube-score is not built (${path} is missing): run scripts/kube-score, which builds it from the Go module proxy; .ci/run does this`);
  }
  return path;
}

function yamllintBinary(): string {
  const found = spawnSync('sh', ['-c', 'command -v yamllint'], { encoding: 'utf8' });
  if (found.status !== 0 || found.stdout.trim() === '') throw new Error('yamllint is not installed: install the Debian package "yamllint" (apt-get install -y yamllint); .ci/run does this');
  return found.stdout.trim();
}

/** `helm template` as text (comments kept), helm 4; chart.test.ts checks helm 3 renders the same. */
function renderText(values: string[], set: string[] = [], extra: string[] = []): string {
  const args = ['template', 'monapi', CHART, '--namespace', 'monitoring', ...values.flatMap((v) => ['-f', `${CHART}/ci/${v}`]), ...set.flatMap((s) => ['--set', s])];
  const result = helm(4, [...args, ...OPERATOR_APIS.flatMap((api) => ['--api-versions', api]), ...extra]);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  return result.stdout;
}

interface Finding {
  readonly grade: string;
  readonly line: string;
}

const dir = mkdtempSync(join(tmpdir(), 'monapi-chart-linters-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kubeScore(manifests: string, flags: string[] = []): { status: number | null; findings: Finding[]; output: string } {
  const file = join(dir, `rendered-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, manifests);
  const result = spawnSync(kubeScoreBinary(), ['score', '--output-format', 'ci', ...flags, file], { encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  const findings = result.stdout
    .split('\n')
    .map((line) => ({ grade: /^\[([A-Z]+)\]/.exec(line)?.[1] ?? '', line }))
    .filter((f) => f.grade === 'CRITICAL' || f.grade === 'WARNING');
  return { status: result.status, findings, output: `${result.stdout}${result.stderr}` };
}

/** The cases scored: every ci values file, and the defaults sharded (the anti-affinity and budget they bring). */
const CASES: [string, string[], string[]][] = [
  ...CI_VALUES.map((file): [string, string[], string[]] => [file, [file], []]),
  ['the defaults, sharded over 3 pods', ['default-values.yaml'], ['sharding.enabled=true', 'replicas=3']],
  ['a restricted network and images always pulled', ['default-values.yaml'], ['networkPolicy.enabled=true', 'image.pullPolicy=Always']],
];

describe('kube-score v1.20.0 on the rendered chart', () => {
  it('is the pinned version', () => {
    const result = spawnSync(kubeScoreBinary(), ['version'], { encoding: 'utf8' });
    expect(result.stdout).toMatch(/^kube-score version: 1\.20\.0,/);
  });

  it.each(CASES)('finds nothing CRITICAL or WARNING in %s', (_, values, set) => {
    const { status, findings, output } = kubeScore(renderText(values, set));
    expect(findings.map((f) => f.line)).toEqual([]);
    expect(status, output).toBe(0);
  });

  it.each(CASES)('has each exception of %s named in a kube-score/ignore annotation with its reason in a comment', (_, values, set) => {
    const documents = renderText(values, set).split(/^---$/m);
    for (const text of documents) {
      const [object] = parseManifests(text);
      const ignored = object?.metadata.annotations?.['kube-score/ignore'];
      if (!object || ignored === undefined) continue;
      for (const check of ignored.split(',')) {
        expect(Object.keys(EXCEPTIONS), `${object.kind}: ${check}`).toContain(check);
        const reason = new RegExp(`^\\s+# - ${check}: (.+)$`, 'm').exec(text)?.[1];
        expect(reason, `${object.kind}: the comment giving the reason for ${check}`).toMatch(EXCEPTIONS[check]!);
      }
    }
  });

  it('ignores no more than it must: without the annotations, only the documented exceptions come back', () => {
    // kube-score's order of checks varies from run to run (a Go map): compare sorted.
    const unannotated = (values: string[], set: string[] = []) =>
      kubeScore(renderText(values, set), ['--disable-ignore-checks-annotations'])
        .findings.map((f) => f.line.replace(/^\[([A-Z]+)\] [^:]+: /, '$1 '))
        .sort();
    expect(unannotated(['default-values.yaml'])).toEqual([
      'CRITICAL (exporter) ImagePullPolicy is not set to Always',
      'CRITICAL The pod does not have a matching NetworkPolicy',
      'WARNING Deployment few replicas',
      'WARNING Deployment update strategy',
    ]);
    // With the network policy on, images always pulled and a rolling update, only the single replica remains.
    expect(unannotated(['default-values.yaml'], ['networkPolicy.enabled=true', 'image.pullPolicy=Always', 'deploymentStrategy.type=RollingUpdate'])).toEqual(['WARNING Deployment few replicas']);
    expect(unannotated(['sharding-values.yaml'], ['image.pullPolicy=Always'])).toEqual([]);
  });

  it('would fail a chart without resources or anti-affinity (the check is not vacuous)', () => {
    const bare = kubeScore(renderText(['sharding-values.yaml'], ['resources=null', 'sharding.podAntiAffinity=']));
    expect(bare.status).not.toBe(0);
    const lines = bare.findings.map((f) => f.line).join('\n');
    expect(lines).toContain('[CRITICAL]');
    expect(lines).toMatch(/Memory limit is not set/);
    expect(lines).toMatch(/Ephemeral Storage limit is not set/);
    expect(lines).toMatch(/does not have a host podAntiAffinity set/);
  });
});

describe('resources by the sizing rule of docs/scaling.md', () => {
  const valuesText = readFileSync(`${CHART}/values.yaml`, 'utf8');
  const defaults = (parseYaml(valuesText) as { resources: IResourceRequirements }).resources;
  const mebibytes = (quantity: unknown): number => {
    const match = /^(\d+)(Mi|Gi)$/.exec(String(quantity));
    if (!match) throw new Error(`not a quantity in Mi or Gi: ${String(quantity)}`);
    return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
  };

  it('size the exporter for the series count values.yaml states: 640 MiB + 80 MiB per 100,000 series, about 80% requested', () => {
    const stated = /^# Sized for ([\d,]+) series/m.exec(valuesText)?.[1];
    expect(stated).toBeDefined();
    const series = Number(stated!.replaceAll(',', ''));
    expect(mebibytes(defaults.limits?.memory)).toBe(640 + (80 * series) / 100_000);
    const share = mebibytes(defaults.requests?.memory) / mebibytes(defaults.limits?.memory);
    expect(share).toBeGreaterThanOrEqual(0.75);
    expect(share).toBeLessThanOrEqual(0.85);
    // 1 CPU up to 100,000 series, 2 beyond; a limit of twice the request.
    expect(String(defaults.requests?.cpu)).toBe(series <= 100_000 ? '1' : '2');
    expect(String(defaults.limits?.cpu)).toBe(series <= 100_000 ? '2' : '4');
    expect(mebibytes(defaults.requests?.['ephemeral-storage'])).toBeLessThanOrEqual(mebibytes(defaults.limits?.['ephemeral-storage']));
    // The table of docs/scaling.md gives the same figures.
    const doc = readFileSync(join(ROOT, 'docs/scaling.md'), 'utf8');
    expect(doc).toContain(`requests ${String(defaults.requests?.memory)}, limits ${String(defaults.limits?.memory)}`);
  });

  it('give the exporter and, unless backfill.resources says otherwise, the backfill Job those resources', () => {
    const objects = render(4, { values: ['backfill-values.yaml'] });
    const exporter = find<IDeployment>(objects, 'Deployment').spec!.template.spec!.containers[0]!.resources;
    expect(exporter).toEqual(defaults);
    expect(find<IJob>(objects, 'Job').spec!.template.spec!.containers[0]!.resources).toEqual(defaults);
    const own = render(4, { values: ['backfill-values.yaml'], set: ['backfill.resources.requests.cpu=100m', 'backfill.resources.limits.memory=256Mi'] });
    expect(find<IJob>(own, 'Job').spec!.template.spec!.containers[0]!.resources).toEqual({ requests: { cpu: '100m' }, limits: { memory: '256Mi' } });
  });

  it('let a key be removed with null, and merge the rest with the defaults', () => {
    const objects = render(4, { values: ['default-values.yaml'], set: ['resources.limits.cpu=null', 'resources.requests.memory=1Gi'] });
    const resources = find<IDeployment>(objects, 'Deployment').spec!.template.spec!.containers[0]!.resources!;
    expect(resources.limits).toEqual({ memory: '720Mi', 'ephemeral-storage': '256Mi' });
    expect(resources.requests).toMatchObject({ cpu: '1', memory: '1Gi' });
  });
});

describe('shards and disruptions', () => {
  const sharded = (set: string[] = []) => render(4, { values: ['sharding-values.yaml'], set });
  const affinity = (objects: K8sObject[]) => find<IStatefulSet>(objects, 'StatefulSet').spec!.template.spec!.affinity;
  const exporterPods = { 'app.kubernetes.io/name': 'monapi-exporter', 'app.kubernetes.io/instance': 'monapi', 'app.kubernetes.io/component': 'exporter' };

  it('spreads the shards over nodes, preferred by default, required with hard', () => {
    expect(affinity(sharded())).toEqual({
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: exporterPods }, topologyKey: 'kubernetes.io/hostname' } }],
      },
    });
    expect(affinity(sharded(['sharding.podAntiAffinity=hard', 'sharding.topologyKey=topology.kubernetes.io/zone']))).toEqual({
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: exporterPods }, topologyKey: 'topology.kubernetes.io/zone' }] },
    });
    expect(affinity(sharded(['sharding.podAntiAffinity=']))).toBeUndefined();
  });

  it('keeps the values\' affinity beside it, and their own podAntiAffinity instead of it', () => {
    const nodeAffinity = { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'node-role.kubernetes.io/monitoring', operator: 'Exists' }] } }] };
    const file = join(dir, 'node-affinity-values.yaml');
    writeFileSync(file, JSON.stringify({ affinity: { nodeAffinity } }));
    const withNode = affinity(render(4, { values: ['sharding-values.yaml', file] }));
    expect(withNode?.nodeAffinity).toEqual(nodeAffinity);
    expect(withNode?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution).toHaveLength(1);
    const own = affinity(sharded(['affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey=kubernetes.io/hostname']));
    expect(own).toEqual({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname' }] } });
    // A single pod of a Deployment has no shard to keep apart from.
    expect(find<IDeployment>(render(4, { values: ['default-values.yaml'] }), 'Deployment').spec!.template.spec!.affinity).toBeUndefined();
  });

  it('makes a disruption budget for 2 or more shards by default, none for a single pod, and lets enabled decide', () => {
    const budgets = (values: string, set: string[] = []) => render(4, { values: [values], set }).filter((o) => o.kind === 'PodDisruptionBudget');
    expect(budgets('default-values.yaml')).toEqual([]);
    expect(budgets('state-sharded-values.yaml')).toHaveLength(1);
    expect(budgets('state-sharded-values.yaml', ['replicas=1'])).toEqual([]);
    expect(budgets('state-sharded-values.yaml', ['podDisruptionBudget.enabled=false'])).toEqual([]);
    expect(budgets('default-values.yaml', ['podDisruptionBudget.enabled=true'])).toHaveLength(1);
  });

  it('never holds up a drain for a pod that is not ready, and counts only the exporter\'s pods', () => {
    const budget = find<IPodDisruptionBudget>(render(4, { values: ['state-sharded-values.yaml'] }), 'PodDisruptionBudget');
    expect(budget.spec).toMatchObject({ maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    // The backfill Job's pod has the chart's selector labels too; a budget over it would have no scale to count against.
    expect(budget.spec?.selector?.matchExpressions).toEqual([{ key: 'app.kubernetes.io/component', operator: 'In', values: ['exporter'] }]);
    // Kubernetes 1.25 does not know the field.
    const old = parseManifests(renderText(['state-sharded-values.yaml'], [], ['--kube-version', '1.25.0']));
    expect(find<IPodDisruptionBudget>(old, 'PodDisruptionBudget').spec).not.toHaveProperty('unhealthyPodEvictionPolicy');
  });
});

describe('chart-testing conventions', () => {
  it('name the maintainers in Chart.yaml', () => {
    const chart = parseYaml(readFileSync(`${CHART}/Chart.yaml`, 'utf8')) as { maintainers?: { name?: string; url?: string; email?: string }[] };
    expect(chart.maintainers?.length).toBeGreaterThan(0);
    for (const maintainer of chart.maintainers ?? []) {
      expect(maintainer.name).toMatch(/^[A-Za-z0-9-]+$/);
      expect(maintainer.url ?? maintainer.email).toBeTruthy();
    }
  });

  it('keep Chart.yaml, values.yaml and every ci values file yamllint-clean with chart-testing\'s lintconf', () => {
    const files = ['Chart.yaml', 'values.yaml', ...CI_VALUES.map((f) => `ci/${f}`)].map((f) => `${CHART}/${f}`);
    const result = spawnSync(yamllintBinary(), ['-f', 'parsable', '-c', join(ROOT, 'helm/lintconf.yaml'), ...files], { encoding: 'utf8', timeout: 60_000 });
    expect(result.stdout, result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('would fail a values file with spaces inside braces (the check is not vacuous)', () => {
    const file = join(dir, 'spaced-values.yaml');
    writeFileSync(file, 'config:\n  accounts:\n    - { name: prod, base_url: "https://m.example.com/api/v2" }\n');
    const result = spawnSync(yamllintBinary(), ['-f', 'parsable', '-c', join(ROOT, 'helm/lintconf.yaml'), file], { encoding: 'utf8', timeout: 60_000 });
    expect(result.status).not.toBe(0);
    expect(result.stdout).toContain('too many spaces inside braces (braces)');
  });

  it('marks a ServiceAccount made outside the chart for kube-linter, which cannot see it', () => {
    const objects = render(4, { values: ['existing-secret-values.yaml'] });
    const deployment = find<IDeployment>(objects, 'Deployment');
    expect(deployment.spec?.template.spec?.serviceAccountName).toBe('monitoring-readers');
    expect(deployment.metadata?.annotations?.['ignore-check.kube-linter.io/non-existent-service-account']).toBe('serviceAccount.create is false: monitoring-readers is made outside the chart');
    // A ServiceAccount of the chart needs no such note.
    for (const file of CI_VALUES.filter((f) => f !== 'existing-secret-values.yaml')) {
      for (const obj of render(4, { values: [file] })) expect(obj.metadata.annotations?.['ignore-check.kube-linter.io/non-existent-service-account'], `${file} ${obj.kind}`).toBeUndefined();
    }
  });
});
