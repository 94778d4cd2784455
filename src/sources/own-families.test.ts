import { describe, expect, it } from 'vitest';
import { SeriesNaming } from './series/naming.js';
import { OWN_FAMILY_NAMES, SELF_METRIC_PREFIXES } from './own-families.js';

describe('names reserved against agent metrics', () => {
  it('lists every fixed family once', () => {
    expect(OWN_FAMILY_NAMES).toContain('monapi_hosts');
    expect(OWN_FAMILY_NAMES).toContain('monapi_website_check_ttfb_seconds');
    expect(OWN_FAMILY_NAMES).toContain('monapi_release_info');
    expect(new Set(OWN_FAMILY_NAMES).size).toBe(OWN_FAMILY_NAMES.length);
  });

  it.each([
    ['hosts', 'monapi_hosts'],
    ['up', 'monapi_up'],
    ['budget.tokens', 'monapi_budget_tokens'],
    ['exporter.scrapes', 'monapi_exporter_scrapes'],
  ])('drops an unknown agent metric %s that would be %s', (dotted, family) => {
    const naming = new SeriesNaming({ reservedFamilyNames: OWN_FAMILY_NAMES, reservedPrefixes: SELF_METRIC_PREFIXES });
    const { metrics, collisions } = naming.resolve([dotted, 'system.cpu.user']);
    expect(metrics.map((m) => m.dotted)).toEqual(['system.cpu.user']);
    expect(collisions).toEqual([{ familyKey: family, kept: undefined, dropped: [dotted] }]);
  });
});
