import { describe, expect, it } from 'vitest';
import { formatValue, renderPreview } from '../../scripts/dashboard-preview/render.js';
import type { DashboardJson } from '../support/grafana.js';

/**
 * The dashboard pictures' renderer (scripts/dashboard-preview/render.ts) writes values as
 * Grafana does: zero in the panel's unit ("0 s", not "0 µs", which the smallest scale gave).
 */

describe('formatValue', () => {
  it.each([
    [0, 's', '0 s'],
    [0, 'bytes', '0 B'],
    [0, 'Bps', '0 B/s'],
    [0, 'reqps', '0 req/s'],
    [0, 'ops', '0 ops/s'],
    [0, 'short', '0'],
    [0, 'percentunit', '0%'],
    [0.0000005, 's', '0.50 µs'],
    [0.0005, 's', '500 µs'],
    [0.25, 's', '250 ms'],
    [2.5, 's', '2.50 s'],
    [-0.25, 's', '-250 ms'],
    [5400, 's', '1.50 hour'],
    [1536, 'bytes', '1.50 KiB'],
    [0.5, 'bytes', '0.50 B'],
    [0.5, 'percentunit', '50.0%'],
    [0.005, 'percentunit', '0.50%'],
    [2500, 'reqps', '2.50K req/s'],
    [NaN, 's', 'NaN'],
  ])('%s in %s reads %s', (value, unit, text) => {
    expect(formatValue(value, unit)).toBe(text);
  });
});

describe('renderPreview', () => {
  const dashboard: DashboardJson = {
    uid: 'preview-test',
    title: 'Preview test',
    panels: [{ id: 1, type: 'timeseries', title: 'Request time', gridPos: { x: 0, y: 0, w: 12, h: 8 }, fieldConfig: { defaults: { unit: 's' } }, targets: [{ refId: 'A', expr: 'x', legendFormat: 'p95' }] }],
  };
  // 00:00 to 01:00; the data from 00:30 on, with the 00:45 minute missing.
  const values: [number, number][] = [[1_800, 0], [1_860, 0.4], [1_920, 0.2], [2_700 + 60, 0.2], [2_700 + 120, 0.1]];
  const html = renderPreview({
    dashboard,
    results: new Map([[1, [{ refId: 'A', series: [{ metric: {}, values }] }]]]),
    variables: [],
    range: { text: 'Last 1 hour', fromSeconds: 0, toSeconds: 3_600 },
  });

  it('labels the zero of a value axis in the unit, and the time axis from the start of the range to its end', () => {
    const ticks = [...html.matchAll(/class="axis"(?: text-anchor="end")?>([^<]+)</g)].map((m) => m[1]);
    expect(ticks).toEqual(['0 s', '200 ms', '400 ms', '00:00', '01:00']);
  });

  it('draws a gap where points are missing', () => {
    const lines = [...html.matchAll(/<path d="([^"]+)" stroke=/g)].map((m) => m[1]!.split('L').length);
    expect(lines.sort()).toEqual([2, 3]);
  });

  it('shows the range text it is given', () => {
    expect(html).toContain('<span class="range">Last 1 hour</span>');
  });
});
