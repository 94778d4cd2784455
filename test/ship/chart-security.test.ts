import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import type { IDeployment, IStatefulSet } from 'kubernetes-models/apps/v1';
import type { IPersistentVolumeClaim, ISecret } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/command-line/flags.js';
import { parseWebConfig } from '../../src/server/web-config.js';
import { makeTestPki, type TestPki } from '../support/tls.js';
import { find, render, type K8sObject } from './chart-harness.js';

/** The chart's state volume and web configuration (issue 13 items 1 and 2), rendered by helm 4. */

let pki: TestPki;
beforeAll(() => {
  pki = makeTestPki();
});
afterAll(() => pki.remove());

const container = (objects: readonly K8sObject[]) => {
  const workload = objects.find((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet') as IDeployment | IStatefulSet;
  return { spec: workload.spec!.template.spec!, container: workload.spec!.template.spec!.containers[0]!, workload };
};

describe('state and web configuration in the chart', () => {
  it('off by default: no state volume, no web configuration, probes and scrapes over HTTP', () => {
    const objects = render(4, { values: ['default-values.yaml'] });
    const { spec, container: c } = container(objects);
    expect(c.args?.some((a) => a.startsWith('--state.file') || a.startsWith('--web.config.file'))).toBe(false);
    expect(spec.volumes?.map((v) => v.name)).toEqual(['config', 'keys']);
    expect(c.readinessProbe?.httpGet?.scheme).toBeUndefined();
    expect(objects.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
  });

  it('secure-values: a state claim mounted writable, the web configuration from a Secret beside the TLS Secret, probes on the probe listener, HTTPS scrapes', () => {
    const objects = render(4, { values: ['secure-values.yaml'] });
    const { spec, container: c } = container(objects);
    const flags = parseFlags(c.args ?? [], {}, { stdoutIsTTY: false });
    expect(flags).toMatchObject({ stateFile: '/var/lib/monapi-exporter/state.json', webConfigFile: '/etc/monapi-exporter/web/web-config.yml' });
    const claim = find<IPersistentVolumeClaim>(objects, 'PersistentVolumeClaim');
    expect(claim.spec).toMatchObject({ storageClassName: 'fast', resources: { requests: { storage: '32Mi' } }, accessModes: ['ReadWriteOnce'] });
    expect(spec.volumes?.find((v) => v.name === 'state')?.persistentVolumeClaim?.claimName).toBe(claim.metadata?.name);
    expect(c.volumeMounts?.find((m) => m.name === 'state')).toEqual({ name: 'state', mountPath: '/var/lib/monapi-exporter' });
    const web = spec.volumes?.find((v) => v.name === 'web')?.projected?.sources?.map((s) => s.secret?.name);
    expect(web).toEqual(['monapi-monapi-exporter-web', 'monapi-exporter-tls']);
    // Kubelet probes the probe listener (plain HTTP, never behind the web configuration); the main port only without it.
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/-/healthy', port: 'probes' });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/-/ready', port: 'probes' });
    expect(flags).toMatchObject({ webProbeListenAddress: ':9867' });
    const main = container(render(4, { values: ['secure-values.yaml'], set: ['probePort=0'] })).container;
    expect(main.livenessProbe?.httpGet).toMatchObject({ path: '/-/healthy', port: 'http-metrics', scheme: 'HTTPS' });
    expect(main.readinessProbe?.httpGet).toMatchObject({ path: '/-/ready', port: 'http-metrics', scheme: 'HTTPS' });
    expect(main.args?.some((a) => a.startsWith('--web.probe-listen-address'))).toBe(false);
    expect(main.ports?.map((p) => p.name)).toEqual(['http-metrics']);
    const monitor = find<IServiceMonitor>(objects, 'ServiceMonitor');
    expect(monitor.spec.endpoints?.[0]).toMatchObject({ scheme: 'https', tlsConfig: { serverName: 'monapi-exporter' }, basicAuth: { username: { name: 'monapi-scrape' } } });

    // The rendered file is one the exporter accepts, with the TLS Secret's files beside it.
    const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'monapi-monapi-exporter-web') as ISecret;
    const dir = mkdtempSync(join(tmpdir(), 'monapi-chart-web-'));
    try {
      copyFileSync(pki.serverCertFile, join(dir, 'tls.crt'));
      copyFileSync(pki.serverKeyFile, join(dir, 'tls.key'));
      copyFileSync(pki.caCertFile, join(dir, 'ca.crt'));
      const text = secret.stringData?.['web-config.yml'] ?? '';
      writeFileSync(join(dir, 'web-config.yml'), text);
      const config = parseWebConfig(text, dir);
      expect(config.tls?.clientAuth).toBe('RequireAndVerifyClientCert');
      expect([...config.users.keys()]).toEqual(['prometheus']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sharded: one state claim per pod through volumeClaimTemplates, none made separately', () => {
    const objects = render(4, { values: ['state-sharded-values.yaml'] });
    const { workload, container: c } = container(objects);
    expect(workload.kind).toBe('StatefulSet');
    expect((workload as IStatefulSet).spec?.volumeClaimTemplates?.map((t) => [t.metadata?.name, t.spec?.resources?.requests?.storage])).toEqual([['state', '64Mi']]);
    expect(c.volumeMounts?.some((m) => m.name === 'state')).toBe(true);
    expect(objects.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
  });

  it('emptyDir and an existing claim', () => {
    const empty = container(render(4, { values: ['default-values.yaml'], set: ['state.enabled=true', 'state.type=emptyDir'] })).spec;
    expect(empty.volumes?.find((v) => v.name === 'state')?.emptyDir).toEqual({ sizeLimit: '64Mi' });
    const objects = render(4, { values: ['default-values.yaml'], set: ['state.enabled=true', 'state.existingClaim=mine'] });
    expect(container(objects).spec.volumes?.find((v) => v.name === 'state')?.persistentVolumeClaim?.claimName).toBe('mine');
    expect(objects.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
  });
});
