import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED_DIRS, generatedFiles, ROOT } from '../../mixin/build.js';

/**
 * The dashboards and rules are generated from mixin/ and checked in, with copies in the
 * Helm chart. Regenerating must change nothing: `npm run mixin` after editing mixin/.
 */

describe('generated mixin files', () => {
  const files = generatedFiles();

  it('are what mixin/ generates (regenerate with npm run mixin)', () => {
    const stale = [...files].filter(([path, content]) => !existsSync(join(ROOT, path)) || readFileSync(join(ROOT, path), 'utf8') !== content).map(([path]) => path);
    expect(stale).toEqual([]);
  });

  it('leave nothing else in the folders they are written to', () => {
    const extra = GENERATED_DIRS.flatMap((dir) => readdirSync(join(ROOT, dir)).map((name) => `${dir}/${name}`)).filter((path) => !files.has(path));
    expect(extra).toEqual([]);
  });

  it('put the same rules and dashboards in the Helm chart as in the repository', () => {
    const chartCopies = [...files.keys()].filter((path) => path.startsWith('helm/'));
    expect(chartCopies.sort()).toEqual([
      'helm/monapi-exporter/files/dashboards/monapi-exporter.json',
      'helm/monapi-exporter/files/dashboards/monapi-hosts.json',
      'helm/monapi-exporter/files/dashboards/monapi-overview.json',
      'helm/monapi-exporter/files/dashboards/monapi-websites.json',
      'helm/monapi-exporter/files/rules/monapi-exporter.rules.yaml',
    ]);
    for (const copy of chartCopies) {
      const original = copy.replace('helm/monapi-exporter/files/dashboards/', 'grafana-dashboards/').replace('helm/monapi-exporter/files/rules/', 'alerts/');
      expect(readFileSync(join(ROOT, copy), 'utf8'), copy).toBe(readFileSync(join(ROOT, original), 'utf8'));
    }
  });
});
