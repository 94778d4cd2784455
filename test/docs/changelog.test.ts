import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const metricsDoc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
const golden = readFileSync(new URL('../golden/exposition.prom', import.meta.url), 'utf8');

const changelog = readme.slice(readme.indexOf('## Changelog'), readme.indexOf('## Development'));
const renames = [...changelog.matchAll(/^\| `(monapi_[a-z0-9_]+)` \| `(monapi_[a-z0-9_]+)/gm)].map((m) => ({ old: m[1]!, now: m[2]! }));
const goldenFamilies = new Set([...golden.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));

describe("the README's changelog", () => {
  it('has the table of renamed agent families', () => {
    expect(renames.length).toBeGreaterThan(100);
  });

  it('names no old family that is still exported', () => {
    expect(renames.filter(({ old }) => goldenFamilies.has(old)).map(({ old }) => old)).toEqual([]);
  });

  it('names as new only families docs/metrics.md documents', () => {
    // `_sum`, `_count` of a summary are documented under the summary's name.
    const family = (name: string) => name.replace(/_(sum|count)$/, '');
    const undocumented = renames.filter(({ now }) => !new RegExp(`\\b${family(now)}\\b`).test(metricsDoc)).map(({ now }) => now);
    expect(undocumented).toEqual([]);
  });
});
