import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const changelog = readFileSync(new URL('../../CHANGELOG.md', import.meta.url), 'utf8');
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const metricsDoc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
const golden = readFileSync(new URL('../golden/exposition.prom', import.meta.url), 'utf8');

const renames = [...changelog.matchAll(/^\| `(monapi_[a-z0-9_]+)` \| `(monapi_[a-z0-9_]+)/gm)].map((m) => ({ old: m[1]!, now: m[2]! }));
const goldenFamilies = new Set([...golden.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));

/** The change types of Keep a Changelog 1.1.0. */
const CHANGE_TYPES = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'];

describe('CHANGELOG.md', () => {
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

  it('follows the Keep a Changelog layout', () => {
    expect(changelog.startsWith('# Changelog\n')).toBe(true);
    expect(changelog).toContain('https://keepachangelog.com/en/1.1.0/');
    const releases = [...changelog.matchAll(/^## (.*)$/gm)].map((m) => m[1]!);
    expect(releases[0]).toBe('[Unreleased]');
    expect(releases.filter((r) => !/^\[Unreleased\]$|^\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}$/.test(r))).toEqual([]);
    const types = [...changelog.matchAll(/^### (.*)$/gm)].map((m) => m[1]!);
    expect(types.length).toBeGreaterThan(0);
    expect(types.filter((t) => !CHANGE_TYPES.includes(t))).toEqual([]);
    expect(changelog).not.toMatch(/^#{4,} /m);
  });

  it('holds no change type twice within one release', () => {
    for (const release of changelog.split(/^## /m).slice(1)) {
      const types = [...release.matchAll(/^### (.*)$/gm)].map((m) => m[1]!);
      expect(types, release.split('\n')[0]).toEqual([...new Set(types)]);
    }
  });
});

describe('README.md', () => {
  it('is a front door of at most 300 lines', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(300);
  });

  it('holds no changelog of its own, and links to CHANGELOG.md', () => {
    expect(readme).not.toMatch(/^#+ Changelog/m);
    expect(readme).toContain('](CHANGELOG.md)');
  });
});
