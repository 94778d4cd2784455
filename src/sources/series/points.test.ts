import { describe, expect, it } from 'vitest';
import { GAP, pointsByName, SeriesPoints } from './points.js';

describe('SeriesPoints', () => {
  it.each([
    ['no points', []],
    ['values and gaps', [{ timestamp: 'a', value: 1.5 }, { timestamp: 'b', value: null }, { timestamp: 'c', value: 0 }]],
    ['negative zero and extremes', [{ timestamp: 'a', value: -0 }, { timestamp: 'b', value: Number.MAX_VALUE }, { timestamp: 'c', value: -Infinity }]],
  ])('gives back the points it was made of: %s', (_case, points) => {
    const columns = SeriesPoints.of(points);
    expect(columns.length).toBe(points.length);
    expect(columns.toPoints()).toEqual(points);
    columns.toPoints().forEach((point, i) => expect(Object.is(point.value, points[i]?.value)).toBe(true));
  });

  it('reads a gap as null and keeps it apart from every number', () => {
    const columns = new SeriesPoints(['a', 'b'], [GAP, 0]);
    expect(columns.valueAt(0)).toBeNull();
    expect(columns.valueAt(1)).toBe(0);
    expect(columns.timesShared).toBe(false);
  });

  it('writes a map of columns back as the document writes points', () => {
    expect(pointsByName({ x: new SeriesPoints(['t'], [GAP]), y: new SeriesPoints([], []) })).toEqual({ x: [{ timestamp: 't', value: null }], y: [] });
  });
});
