import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ServiceMonitor, PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, PersistentVolumeClaim, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';

/** Runs the pinned helm binaries (scripts/helm) on the chart and validates what they render. */

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CHART = `${ROOT}helm/monapi-exporter`;
export const CI_VALUES = readdirSync(`${CHART}/ci`)
  .filter((name) => name.endsWith('-values.yaml'))
  .sort();
export const HELMS = [3, 4] as const;
export type HelmMajor = (typeof HELMS)[number];

export interface HelmResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function helm(major: HelmMajor, args: readonly string[]): HelmResult {
  const result = spawnSync(`${ROOT}scripts/helm`, [String(major), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** What `helm template --api-versions` adds: a cluster with the Prometheus Operator's CRDs. */
export const OPERATOR_APIS = ['monitoring.coreos.com/v1/ServiceMonitor', 'monitoring.coreos.com/v1/PrometheusRule'] as const;

export interface RenderOptions {
  readonly values?: readonly string[];
  readonly set?: readonly string[];
  readonly chart?: string;
  readonly release?: string;
  /** API versions the simulated cluster serves beyond the built-in ones (default: OPERATOR_APIS). */
  readonly apiVersions?: readonly string[];
}

function templateArgs(options: RenderOptions): string[] {
  return [
    'template',
    options.release ?? 'monapi',
    options.chart ?? CHART,
    '--namespace',
    'monitoring',
    ...(options.values ?? []).flatMap((file) => ['-f', file.includes('/') ? file : `${CHART}/ci/${file}`]),
    ...(options.set ?? []).flatMap((s) => ['--set', s]),
    ...(options.apiVersions ?? OPERATOR_APIS).flatMap((api) => ['--api-versions', api]),
  ];
}

/** `helm template`; throws with helm's message when it refuses. */
export function render(major: HelmMajor, options: RenderOptions = {}): K8sObject[] {
  const result = helm(major, templateArgs(options));
  if (result.status !== 0) throw new Error(`helm ${major} template failed:\n${result.stderr}`);
  return parseManifests(result.stdout);
}

/** `helm template` that must fail; returns helm's message. */
export function renderError(major: HelmMajor, options: RenderOptions & { extraArgs?: readonly string[] }): string {
  const result = helm(major, [...templateArgs(options), ...(options.extraArgs ?? [])]);
  if (result.status === 0) throw new Error(`helm ${major} template succeeded, expected a refusal`);
  return result.stderr;
}

export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
      return doc.toJS() as unknown;
    })
    .filter((obj): obj is K8sObject => obj !== null && typeof obj === 'object');
}

/** The model of every kind the chart may render; anything else is a test failure. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

/** Validates against the Kubernetes (or prometheus-operator) schema; throws naming the object and the field. */
export function validateObject(obj: K8sObject): void {
  const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
  if (!Model) throw new Error(`${obj.apiVersion} ${obj.kind} ${obj.metadata.name}: no schema to validate this kind against`);
  try {
    new Model(obj as never).validate();
  } catch (error) {
    throw new Error(`${obj.kind} ${obj.metadata.name} is invalid: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function find<T>(objects: readonly K8sObject[], kind: string): T {
  const found = objects.filter((o) => o.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, rendered ${found.length}`);
  return found[0] as T;
}

export function readValues(file: string): Record<string, unknown> {
  return (parseAllDocuments(readFileSync(file.includes('/') ? file : `${CHART}/ci/${file}`, 'utf8'))[0]?.toJS() ?? {}) as Record<string, unknown>;
}
