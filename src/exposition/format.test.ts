import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  escapeHelpOpenMetrics,
  escapeHelpText,
  escapeLabelValue,
  formatValue,
  isValidLabelName,
  isValidMetricName,
  openMetricsFamilyName,
  seriesKey,
  validateFamily,
} from './format.js';
import type { FamilySamples, FamilySpec } from './model.js';

describe('formatValue', () => {
  it.each([
    [0, '0'],
    [-0, '0'],
    [1, '1'],
    [-42, '-42'],
    [1234567890123, '1234567890123'],
    [Number.MAX_SAFE_INTEGER, '9007199254740991'],
    [1e20, '100000000000000000000'],
    [1e21, '1e+21'],
    [0.1, '0.1'],
    [1 / 3, '0.3333333333333333'],
    [1.5e-7, '1.5e-7'],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
  ])('formats %s as %s', (value, expected) => {
    expect(formatValue(value)).toBe(expected);
  });

  it('round-trips every finite double', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(Number(formatValue(value))).toBe(value === 0 ? 0 : value);
      }),
    );
  });
});

describe('escaping', () => {
  it.each([
    ['plain', 'plain'],
    ['a"b', 'a\\"b'],
    ['a\\b', 'a\\\\b'],
    ['line1\nline2', 'line1\\nline2'],
    ['\\"\n', '\\\\\\"\\n'],
    ['ünïcødé ☃', 'ünïcødé ☃'],
    ['tab\there', 'tab\there'],
  ])('label value %j -> %j', (input, expected) => {
    expect(escapeLabelValue(input)).toBe(expected);
  });

  it.each([
    ['plain help', 'plain help', 'plain help'],
    ['a "quoted" word', 'a "quoted" word', 'a \\"quoted\\" word'],
    ['back\\slash', 'back\\\\slash', 'back\\\\slash'],
    ['two\nlines', 'two\\nlines', 'two\\nlines'],
  ])('help %j -> text %j, OpenMetrics %j', (input, text, openMetrics) => {
    expect(escapeHelpText(input)).toBe(text);
    expect(escapeHelpOpenMetrics(input)).toBe(openMetrics);
  });
});

describe('names', () => {
  it.each([
    ['up', true],
    ['_hidden', true],
    ['monapi_host_cpu_seconds_total', true],
    ['A1_b2', true],
    ['1abc', false],
    ['with-dash', false],
    ['with:colon', false],
    ['', false],
    ['space name', false],
    ['ünï', false],
  ])('metric name %j valid=%s', (name, valid) => {
    expect(isValidMetricName(name)).toBe(valid);
  });

  it.each([
    ['host', true],
    ['_x', true],
    ['__name__', false],
    ['__meta', false],
    ['9x', false],
    ['a.b', false],
    ['', false],
  ])('label name %j valid=%s', (name, valid) => {
    expect(isValidLabelName(name)).toBe(valid);
  });

  it.each<[FamilySpec, string]>([
    [{ name: 'requests_total', type: 'counter', help: '' }, 'requests'],
    [{ name: 'build_info', type: 'info', help: '' }, 'build'],
    [{ name: 'temperature_celsius', type: 'gauge', help: '' }, 'temperature_celsius'],
    [{ name: 'latency_seconds', type: 'histogram', help: '' }, 'latency_seconds'],
  ])('OpenMetrics family name of %o is %s', (spec, expected) => {
    expect(openMetricsFamilyName(spec)).toBe(expected);
  });
});

describe('seriesKey', () => {
  it('is the same for the same labels in a different order', () => {
    expect(seriesKey({ b: '2', a: '1' })).toBe(seriesKey({ a: '1', b: '2' }));
    expect(seriesKey({ a: '1', b: '2' })).toBe('a="1",b="2"');
  });

  it('differs when a value differs only by escaping-relevant characters', () => {
    expect(seriesKey({ a: 'x"' })).not.toBe(seriesKey({ a: 'x\\"' }));
  });
});

const gauge = (name: string, labels: Record<string, string> = {}, unit?: string): FamilySamples => ({
  spec: { name, type: 'gauge', help: 'h', ...(unit === undefined ? {} : { unit }) },
  samples: [{ labels, value: 1 }],
});

describe('validateFamily', () => {
  it.each<[string, FamilySamples, string | undefined]>([
    ['a valid gauge', gauge('ok_gauge', { host: 'a' }), undefined],
    ['a bad metric name', gauge('bad-name'), 'invalid metric name "bad-name"'],
    ['a reserved label name', gauge('ok', { __x: '1' }), 'invalid label name "__x"'],
    ['a bad label name', gauge('ok', { 'a-b': '1' }), 'invalid label name "a-b"'],
    ['a counter without _total', { spec: { name: 'hits', type: 'counter', help: '' }, samples: [] }, 'must end with _total'],
    ['an info without _info', { spec: { name: 'build', type: 'info', help: '' }, samples: [] }, 'must end with _info'],
    ['a unit that is not a suffix', gauge('size', {}, 'bytes'), 'must end with _bytes'],
    ['a unit that is a suffix', gauge('size_bytes', {}, 'bytes'), undefined],
    [
      'a counter whose unit precedes _total',
      { spec: { name: 'cpu_seconds_total', type: 'counter', help: '', unit: 'seconds' }, samples: [] },
      undefined,
    ],
    [
      'an unknown type',
      { spec: { name: 'x', type: 'gaugehistogram' as 'gauge', help: '' }, samples: [] },
      'unknown type "gaugehistogram"',
    ],
    [
      'a summary with quantile in its labels',
      { spec: { name: 's', type: 'summary', help: '' }, samples: [{ labels: { quantile: '1' }, quantiles: [], sum: 0, count: 0 }] },
      'label name quantile is reserved',
    ],
    [
      'a summary with a quantile above 1',
      { spec: { name: 's', type: 'summary', help: '' }, samples: [{ labels: {}, quantiles: [[1.5, 1]], sum: 0, count: 0 }] },
      'outside 0-1',
    ],
    [
      'a summary with descending quantiles',
      { spec: { name: 's', type: 'summary', help: '' }, samples: [{ labels: {}, quantiles: [[0.9, 1], [0.5, 1]], sum: 0, count: 0 }] },
      'quantiles must be strictly ascending',
    ],
    [
      'a histogram with le in its labels',
      { spec: { name: 'h', type: 'histogram', help: '' }, samples: [{ labels: { le: '1' }, buckets: [], sum: 0, count: 0 }] },
      'label name le is reserved',
    ],
    [
      'a histogram with descending bounds',
      { spec: { name: 'h', type: 'histogram', help: '' }, samples: [{ labels: {}, buckets: [[2, 1], [1, 1]], sum: 0, count: 1 }] },
      'strictly ascending',
    ],
    [
      'a histogram with non-cumulative counts',
      { spec: { name: 'h', type: 'histogram', help: '' }, samples: [{ labels: {}, buckets: [[1, 3], [2, 1]], sum: 0, count: 3 }] },
      'cumulative',
    ],
    [
      'a histogram with an explicit +Inf bucket',
      { spec: { name: 'h', type: 'histogram', help: '' }, samples: [{ labels: {}, buckets: [[Infinity, 1]], sum: 0, count: 1 }] },
      'renderer adds +Inf',
    ],
    [
      'a histogram whose count is below its last bucket',
      { spec: { name: 'h', type: 'histogram', help: '' }, samples: [{ labels: {}, buckets: [[1, 5]], sum: 0, count: 4 }] },
      'count is below',
    ],
  ])('%s', (_what, family, problem) => {
    const result = validateFamily(family);
    if (problem === undefined) expect(result).toBeUndefined();
    else expect(result).toContain(problem);
  });
});
