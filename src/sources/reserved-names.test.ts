import { describe, expect, it } from 'vitest';
import { SOURCES } from './index.js';
import { SeriesNaming } from './series/naming.js';
import { SELF_METRIC_PREFIXES } from './reserved-names.js';

/** Every source's declared families, from the real list. */
function declaredFamilies(): string[] {
  return SOURCES.flatMap((source) => source.families);
}

describe('names reserved against agent metrics', () => {
  it('every source declares its fixed families, each name once', () => {
    const names = declaredFamilies();
    expect(names).toContain('monapi_hosts');
    expect(names).toContain('monapi_website_check_ttfb_seconds');
    expect(names).toContain('monapi_alert_events_total');
    expect(names).toContain('monapi_component_info');
    expect(names).toContain('monapi_series_points_missing_total');
    expect(names).toContain('monapi_release_info');
    expect(new Set(names).size).toBe(names.length);
  });

  it.each([
    ['hosts', 'monapi_hosts'],
    ['up', 'monapi_up'],
    ['budget.tokens', 'monapi_budget_tokens'],
    ['exporter.scrapes', 'monapi_exporter_scrapes'],
  ])('drops an unknown agent metric %s that would be %s', (dotted, family) => {
    const naming = new SeriesNaming({ reservedFamilyNames: declaredFamilies(), reservedPrefixes: SELF_METRIC_PREFIXES });
    const { metrics, collisions } = naming.resolve([dotted, 'system.cpu.user']);
    expect(metrics.map((m) => m.dotted)).toEqual(['system.cpu.user']);
    expect(collisions).toEqual([{ familyKey: family, kept: undefined, dropped: [dotted] }]);
  });
});
