import type { IJob } from 'kubernetes-models/batch/v1';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IPersistentVolumeClaim } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseBackfillFlags, type BackfillFlags } from '../../src/command-line/backfill.js';
import { HELMS, find, render, renderError, validateObject } from './chart-harness.js';

/**
 * The backfill Job (docs/backfill.md): once per install (a post-install hook), into the remote
 * write receiver the values name, resumable through its progress claim, with the exporter's
 * configuration, keys and hardening.
 */

describe.each(HELMS)('the backfill Job (helm %i)', (major) => {
  it('is off by default', () => {
    const objects = render(major, { values: ['default-values.yaml'] });
    expect(objects.filter((o) => o.kind === 'Job' || o.metadata.name.endsWith('-backfill'))).toEqual([]);
  });

  it('runs `backfill` once per install into the remote_write receiver, its progress on a claim kept across releases', () => {
    const objects = render(major, { values: ['backfill-values.yaml'] });
    for (const obj of objects) validateObject(obj);
    const job = find<IJob>(objects, 'Job');
    expect(job.metadata?.annotations).toMatchObject({ 'helm.sh/hook': 'post-install', 'helm.sh/hook-delete-policy': 'before-hook-creation' });
    expect(job.metadata?.labels?.['app.kubernetes.io/component']).toBe('backfill');
    expect(job.spec?.backoffLimit).toBe(20);
    expect(job.spec?.ttlSecondsAfterFinished).toBe(86400);
    const pod = job.spec!.template.spec!;
    expect(pod.restartPolicy).toBe('Never');
    const container = pod.containers[0]!;
    expect(container.args?.[0]).toBe('backfill');

    // What the command makes of its arguments.
    const flags = parseBackfillFlags(container.args!.slice(1), {}, false) as BackfillFlags;
    expect(flags.output).toEqual({ kind: 'remote_write', url: 'http://mimir-nginx.mimir.svc/api/v1/push' });
    expect(flags.sinceMs).toBe(30 * 86_400_000);
    expect(flags.labels).toEqual({ cluster: 'prod-eu' });
    const progressDir = flags.progressFile.slice(0, flags.progressFile.lastIndexOf('/'));
    const progressMount = container.volumeMounts?.find((m) => m.mountPath === progressDir);
    expect(progressMount?.readOnly).toBeFalsy();
    const claimName = pod.volumes?.find((v) => v.name === progressMount?.name)?.persistentVolumeClaim?.claimName;
    const claim = objects.find((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.name === claimName) as IPersistentVolumeClaim | undefined;
    expect(claim?.metadata?.annotations?.['helm.sh/resource-policy']).toBe('keep');

    // The exporter's configuration and keys, mounted where the exporter has them, and its hardening.
    const exporterPod = find<IDeployment>(objects, 'Deployment').spec!.template.spec!;
    const exporter = exporterPod.containers[0]!;
    for (const name of ['config', 'keys']) {
      expect(container.volumeMounts?.find((m) => m.name === name)).toEqual(exporter.volumeMounts?.find((m) => m.name === name));
      expect(pod.volumes?.find((v) => v.name === name)).toEqual(exporterPod.volumes?.find((v) => v.name === name));
    }
    expect(container.args).toContain(exporter.args?.find((a) => a.startsWith('--config.file=')));
    expect(container.image).toBe(exporter.image);
    expect(container.securityContext).toEqual(exporter.securityContext);
    expect(pod.securityContext).toEqual(exporterPod.securityContext);
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('takes backfill.remoteWriteUrl over the configuration\'s, and the budget when given', () => {
    const objects = render(major, { values: ['backfill-values.yaml'], set: ['backfill.remoteWriteUrl=https://vm.example.com/api/v1/write', 'backfill.requestsPerMinute=30'] });
    const args = find<IJob>(objects, 'Job').spec!.template.spec!.containers[0]!.args!;
    expect(args).toContain('--remote-write.url=https://vm.example.com/api/v1/write');
    expect(args).toContain('--requests-per-minute=30');
  });

  it('refuses to render without a receiver', () => {
    expect(renderError(major, { values: ['default-values.yaml'], set: ['backfill.enabled=true'] })).toContain(
      'backfill.enabled needs a remote write target: set backfill.remoteWriteUrl (or config.remote_write.url)',
    );
  });
});
