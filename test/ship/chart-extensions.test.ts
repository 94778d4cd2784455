import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import type { IDeployment, IStatefulSet } from 'kubernetes-models/apps/v1';
import type { IConfigMap, IPodSpec } from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { CHART, HELMS, OPERATOR_APIS, find, helm, render, type HelmMajor, type K8sObject } from './chart-harness.js';

/**
 * The chart's extension points, in the manner of the prometheus-community charts
 * (ci/extensions-values.yaml is also linted, rendered and validated with every other ci file
 * by chart.test.ts), and what it does when the cluster lacks the Prometheus Operator's CRDs.
 */

const MONITORING_KINDS = ['ServiceMonitor', 'PrometheusRule'];
const EXTENSIONS = 'extensions-values.yaml';

function podSpec(objects: readonly K8sObject[]): IPodSpec {
  const workload = objects.find((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet') as IDeployment | IStatefulSet;
  return workload.spec!.template.spec!;
}

function selectors(objects: readonly K8sObject[]): Record<string, string>[] {
  return objects.flatMap((o) => {
    const spec = o.spec as { selector?: { matchLabels?: Record<string, string> } & Record<string, string>; podSelector?: { matchLabels?: Record<string, string> } } | undefined;
    if (o.kind === 'Service') return [spec?.selector as Record<string, string>];
    return [spec?.selector?.matchLabels, spec?.podSelector?.matchLabels].filter((s): s is Record<string, string> => s !== undefined);
  });
}

describe('extension points (helm 4; helm 3 renders the same, chart.test.ts)', () => {
  const objects = render(4, { values: [EXTENSIONS] });

  it('put commonLabels on every object the chart makes and its pods, never in a selector, and never over a standard label', () => {
    // The contacts ConfigMap is an extraManifests object: its labels are what the user wrote.
    for (const obj of objects.filter((o) => !o.metadata.name.endsWith('-contacts'))) expect(obj.metadata.labels, `${obj.kind} ${obj.metadata.name}`).toMatchObject({ team: 'observability', 'example.com/cost-centre': '4711' });
    const statefulSet = find<IStatefulSet>(objects, 'StatefulSet');
    expect(statefulSet.spec?.template.metadata?.labels).toMatchObject({ team: 'observability', 'app.kubernetes.io/name': 'monapi-exporter' });
    expect(selectors(objects).length).toBeGreaterThanOrEqual(3);
    for (const selector of selectors(objects)) expect(Object.keys(selector).sort()).toEqual(['app.kubernetes.io/instance', 'app.kubernetes.io/name']);
    // A common label named like a standard one changes nothing the chart relies on.
    const clashing = render(4, { values: [EXTENSIONS], set: ['commonLabels.app\\.kubernetes\\.io/name=other', 'podLabels.app\\.kubernetes\\.io/instance=other'] });
    for (const obj of clashing) expect(obj.metadata.labels?.['app.kubernetes.io/name'], obj.kind).toBe('monapi-exporter');
    expect(find<IStatefulSet>(clashing, 'StatefulSet').spec?.template.metadata?.labels?.['app.kubernetes.io/instance']).toBe('monapi');
  });

  it('lets an object\'s own labels win over commonLabels, without writing a key twice', () => {
    const withServiceLabel = render(4, { values: [EXTENSIONS], set: ['service.labels.team=exporters'] });
    expect(find<K8sObject>(withServiceLabel, 'Service').metadata.labels?.team).toBe('exporters');
    const text = helm(4, ['template', 'monapi', CHART, '-f', `${CHART}/ci/${EXTENSIONS}`, '--set', 'service.labels.team=exporters']).stdout;
    const serviceLabels = text.slice(text.indexOf('kind: Service\n'), text.indexOf('spec:', text.indexOf('kind: Service\n')));
    expect(serviceLabels.match(/^\s+team:/gm)).toHaveLength(1);
  });

  it('runs the init containers before the exporter and the extra containers beside it', () => {
    const pod = podSpec(objects);
    expect(pod.initContainers?.map((c) => c.name)).toEqual(['wait-for-proxy']);
    expect(pod.containers.map((c) => c.name)).toEqual(['exporter', 'log-shipper']);
    expect(podSpec(render(4, { values: ['default-values.yaml'] })).initContainers).toBeUndefined();
  });

  it('limits and labels what the ServiceMonitor scrapes', () => {
    const monitor = find<IServiceMonitor>(objects, 'ServiceMonitor');
    expect(monitor.spec).toMatchObject({ sampleLimit: 200000, targetLimit: 10, targetLabels: ['team'] });
    const unlimited = find<IServiceMonitor>(render(4, { values: ['sharding-values.yaml'] }), 'ServiceMonitor');
    expect(unlimited.spec.sampleLimit).toBeUndefined();
    expect(unlimited.spec.targetLimit).toBeUndefined();
    expect(unlimited.spec.targetLabels).toBeUndefined();
  });

  it('keeps revisionHistoryLimit old revisions of the StatefulSet and of the Deployment', () => {
    expect(find<IStatefulSet>(objects, 'StatefulSet').spec?.revisionHistoryLimit).toBe(3);
    expect(find<IDeployment>(render(4, { values: ['default-values.yaml'], set: ['revisionHistoryLimit=0'] }), 'Deployment').spec?.revisionHistoryLimit).toBe(0);
  });

  it('releases extraManifests, objects and strings alike, through tpl', () => {
    const configMaps = objects.filter((o) => o.kind === 'ConfigMap') as IConfigMap[];
    const contacts = configMaps.find((c) => c.metadata?.name === 'monapi-monapi-exporter-contacts');
    expect(contacts?.data).toEqual({ 'on-call': 'observability@example.com' });
    expect(contacts?.metadata?.labels?.['app.kubernetes.io/name']).toBe('monapi-exporter');
    const shards = configMaps.find((c) => c.metadata?.name === 'monapi-monapi-exporter-shards');
    expect(shards?.data).toEqual({ shards: '2' });
    expect(shards?.metadata?.labels).toMatchObject({ 'app.kubernetes.io/instance': 'monapi', team: 'observability' });
  });

  it('holds off liveness with a startup probe on /-/healthy, on the probe listener (or the main port over HTTPS when TLS is on and probePort 0), and drops it when disabled', () => {
    const exporter = podSpec(objects).containers[0]!;
    // The ci file sets periodSeconds and failureThreshold; timeoutSeconds is the default's.
    expect(exporter.startupProbe).toEqual({ httpGet: { path: '/-/healthy', port: 'probes' }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 30 });
    const byDefault = podSpec(render(4, { values: ['default-values.yaml'] })).containers[0]!;
    expect(byDefault.startupProbe).toEqual({ httpGet: { path: '/-/healthy', port: 'probes' }, periodSeconds: 5, timeoutSeconds: 5, failureThreshold: 60 });
    expect(podSpec(render(4, { values: ['secure-values.yaml'] })).containers[0]!.startupProbe?.httpGet).toEqual({ path: '/-/healthy', port: 'probes' });
    const mainPort = podSpec(render(4, { values: ['secure-values.yaml'], set: ['probePort=0'] })).containers[0]!.startupProbe?.httpGet;
    expect(mainPort).toEqual({ path: '/-/healthy', port: 'http-metrics', scheme: 'HTTPS' });
    expect(podSpec(render(4, { values: ['default-values.yaml'], set: ['startupProbe.enabled=false'] })).containers[0]!.startupProbe).toBeUndefined();
  });
});

/** NOTES.txt as helm template renders it with the given API versions: the chart's NOTES template, put into a ConfigMap of a copy of the chart. */
function notes(major: HelmMajor, chart: string, values: string, apiVersions: readonly string[]): string {
  const objects = render(major, { values: [values], chart, apiVersions });
  return (objects.find((o) => o.metadata.name === 'notes-probe') as IConfigMap).data!.notes!;
}

describe.each(HELMS)('helm %i, without the Prometheus Operator\'s CRDs', (major) => {
  const copy = mkdtempSync(join(tmpdir(), 'monapi-chart-notes-'));
  const chart = join(copy, 'monapi-exporter');
  cpSync(CHART, chart, { recursive: true });
  writeFileSync(
    join(chart, 'templates/notes-probe.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes-probe\ndata:\n  notes: {{ include "monapi-exporter.notes" . | quote }}\n',
  );
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('renders no ServiceMonitor or PrometheusRule, and everything else as with them', () => {
    const withOperator = render(major, { values: ['full-values.yaml'] });
    expect(withOperator.map((o) => o.kind)).toEqual(expect.arrayContaining(MONITORING_KINDS));
    const without = render(major, { values: ['full-values.yaml'], apiVersions: [] });
    expect(without.filter((o) => MONITORING_KINDS.includes(o.kind))).toEqual([]);
    expect(without).toEqual(withOperator.filter((o) => !MONITORING_KINDS.includes(o.kind)));
    // The group version alone (as some tools pass it) is enough.
    expect(render(major, { values: ['full-values.yaml'], apiVersions: ['monitoring.coreos.com/v1'] }).map((o) => o.kind)).toEqual(expect.arrayContaining(MONITORING_KINDS));
    // Each kind on its own.
    const onlyMonitor = render(major, { values: ['full-values.yaml'], apiVersions: ['monitoring.coreos.com/v1/ServiceMonitor'] }).map((o) => o.kind);
    expect(onlyMonitor).toContain('ServiceMonitor');
    expect(onlyMonitor).not.toContain('PrometheusRule');
  });

  it('warns after install, naming the kind, what to install and the helm template flag', () => {
    const missing = notes(major, chart, `${CHART}/ci/full-values.yaml`, []);
    expect(missing).toContain('WARNING: serviceMonitor.enabled is true, but the cluster does not serve monitoring.coreos.com/v1\nServiceMonitor');
    expect(missing).toContain('--api-versions monitoring.coreos.com/v1/ServiceMonitor');
    expect(missing).toContain('WARNING: prometheusRule.enabled is true, but the cluster does not serve monitoring.coreos.com/v1\nPrometheusRule');
    expect(missing).not.toContain('A ServiceMonitor asks the Prometheus Operator');
    const served = notes(major, chart, `${CHART}/ci/full-values.yaml`, OPERATOR_APIS);
    expect(served).toContain('A ServiceMonitor asks the Prometheus Operator to scrape it (labels: release: prometheus).');
    expect(served).not.toContain('WARNING');
    // Nothing enabled, nothing to warn about.
    expect(notes(major, chart, `${CHART}/ci/default-values.yaml`, [])).not.toContain('WARNING');
  });
});

describe('helm install without a cluster', () => {
  // helm 3's install --dry-run=client still asks a cluster for its version; helm 4's does not.
  it('says so in the NOTES of a real helm 4 install --dry-run=client (which sees no CRDs)', () => {
    const result = helm(4, ['install', 'monapi', CHART, '-n', 'monitoring', '-f', `${CHART}/ci/sharding-values.yaml`, '--dry-run=client']);
    expect(result.status, result.stderr).toBe(0);
    const text = result.stdout.slice(result.stdout.indexOf('NOTES:'));
    expect(text).toContain('WARNING: serviceMonitor.enabled is true');
    expect(result.stdout.slice(0, result.stdout.indexOf('NOTES:'))).not.toContain('kind: ServiceMonitor');
  });
});
