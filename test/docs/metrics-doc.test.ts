import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderMetricsDoc, renderSourcesDoc } from '../../scripts/metrics-doc.js';
import { SOURCES } from '../../src/sources/index.js';

const doc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');

describe('docs/metrics.md', () => {
  it('is up to date (regenerate with npx tsx scripts/metrics-doc.ts)', async () => {
    expect(doc).toBe(await renderMetricsDoc());
  });

  it('docs/sources.md is up to date and names every source of the list', () => {
    const sources = readFileSync(new URL('../../docs/sources.md', import.meta.url), 'utf8');
    expect(sources).toBe(renderSourcesDoc());
    for (const source of SOURCES) expect(sources).toContain(`| [${source.name}](`);
  });

  it('lists every family the golden exposition holds', () => {
    const golden = readFileSync(new URL('../golden/exposition.prom', import.meta.url), 'utf8');
    const families = [...golden.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
    expect(families.length).toBeGreaterThan(100);
    const documented = new Set([...doc.matchAll(/^\| (monapi_\S+) \|/gm)].map((m) => m[1]!));
    // Agent series are documented per catalogue name; process metrics come from prom-client.
    const missing = families.filter((f) => !documented.has(f) && !f.startsWith('monapi_exporter_nodejs_') && !f.startsWith('monapi_exporter_process_'));
    expect(missing).toEqual([]);
  });
});
