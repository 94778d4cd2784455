import { describe, expect, it } from 'vitest';
import { counterSpec, FamilyCollector, gaugeSpec, infoSpec, labelKey, summarySpec } from './families.js';
import { sampleLines } from '../../../test/support/family-lines.js';

describe('spec builders', () => {
  it.each([
    { name: 'valid gauge with unit', build: () => gaugeSpec('monapi_x_seconds', 'h', 'seconds'), error: undefined },
    { name: 'valid counter with unit', build: () => counterSpec('monapi_x_bytes_total', 'h', 'bytes'), error: undefined },
    { name: 'valid info', build: () => infoSpec('monapi_x_info', 'h'), error: undefined },
    { name: 'counter without _total', build: () => counterSpec('monapi_x', 'h'), error: /must end in _total/ },
    { name: 'gauge with _total', build: () => gaugeSpec('monapi_x_total', 'h'), error: /must not end in _total/ },
    { name: 'info without _info', build: () => infoSpec('monapi_x', 'h'), error: /_info/ },
    { name: 'unit not in name', build: () => gaugeSpec('monapi_x', 'h', 'bytes'), error: /does not end in _bytes/ },
    { name: 'invalid characters', build: () => gaugeSpec('monapi.x', 'h'), error: /not \[a-zA-Z_\]/ },
    { name: 'empty help', build: () => gaugeSpec('monapi_x', ' '), error: /HELP is empty/ },
    { name: 'valid summary with unit', build: () => summarySpec('monapi_x_seconds', 'h', 'seconds'), error: undefined },
    { name: 'summary named like its own _count', build: () => summarySpec('monapi_x_count', 'h'), error: /must not end in _count/ },
    { name: 'summary with _total', build: () => summarySpec('monapi_x_total', 'h'), error: /must not end in _total/ },
  ])('$name', ({ build, error }) => {
    if (error) expect(build).toThrow(error);
    else expect(build().name).toMatch(/^monapi_/);
  });
});

describe('labelKey', () => {
  it('ignores insertion order but not values', () => {
    expect(labelKey({ a: '1', b: '2' })).toBe(labelKey({ b: '2', a: '1' }));
    expect(labelKey({ a: '1', b: '2' })).not.toBe(labelKey({ a: '1', b: '3' }));
  });
});

describe('FamilyCollector', () => {
  it('groups by family, keeps the first of duplicate series and counts the rest', () => {
    const c = new FamilyCollector();
    const g = gaugeSpec('monapi_g', 'g');
    const i = infoSpec('monapi_i_info', 'i');
    expect(c.add(g, { a: '1' }, 5)).toBe(true);
    expect(c.add(i, { a: '1' }, 1)).toBe(true);
    expect(c.add(g, { a: '1' }, 6)).toBe(false);
    expect(c.add(g, { a: '2' }, 7)).toBe(true);
    expect(c.duplicates).toBe(1);
    expect(c.toFamilies().map((f) => f.spec.name)).toEqual(['monapi_g', 'monapi_i_info']);
    expect(sampleLines(c.toFamilies())).toEqual(['monapi_g{a="1"} 5', 'monapi_g{a="2"} 7', 'monapi_i_info{a="1"} 1']);
  });

  it('finds a duplicate written in another order, in a small family and in one past the comparison limit', () => {
    for (const size of [2, 8, 9, 30]) {
      const c = new FamilyCollector();
      const g = gaugeSpec('monapi_g', 'g');
      for (let i = 0; i < size; i++) expect(c.add(g, { host: `h${i}`, account: 'a' }, i)).toBe(true);
      for (let i = 0; i < size; i++) expect(c.add(g, { account: 'a', host: `h${i}` }, -1)).toBe(false);
      expect(c.add(g, { account: 'a' }, 1)).toBe(true);
      expect(c.add(g, { account: 'a', host: 'h0', extra: '' }, 1)).toBe(true);
      expect(c.add(g, { account: 'a', extra: undefined as unknown as string }, 1)).toBe(true);
      expect(c.duplicates).toBe(size);
      expect(c.toFamilies()[0]?.samples.map((s) => ('value' in s ? s.value : NaN)).filter((v) => v < 0)).toEqual([]);
    }
  });

  it('drops declared families without samples', () => {
    const c = new FamilyCollector();
    c.declare(gaugeSpec('monapi_empty', 'e'));
    expect(c.toFamilies()).toEqual([]);
  });

  it('collects summaries beside scalars, refusing a duplicate series and a name taken by another type', () => {
    const c = new FamilyCollector();
    const s = summarySpec('monapi_s_seconds', 's', 'seconds');
    expect(c.addSummary(s, { a: '1' }, [[0.5, 1], [0.95, NaN]], 10, 4)).toBe(true);
    expect(c.addSummary(s, { a: '1' }, [], 0, 0)).toBe(false);
    expect(c.duplicates).toBe(1);
    expect(c.toFamilies()).toEqual([{ spec: s, samples: [{ labels: { a: '1' }, quantiles: [[0.5, 1], [0.95, NaN]], sum: 10, count: 4 }] }]);
    expect(() => c.add(gaugeSpec('monapi_s_seconds', 's', 'seconds'), {}, 1)).toThrow(/declared twice/);
  });

  it('refuses one name with two different specs', () => {
    const c = new FamilyCollector();
    c.add(gaugeSpec('monapi_g', 'one'), {}, 1);
    expect(() => c.add(gaugeSpec('monapi_g', 'two'), {}, 1)).toThrow(/declared twice/);
  });
});
