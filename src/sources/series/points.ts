/**
 * One metric's points as two columns: each point's timestamp text and its value. A series
 * body is almost all points, and a poll of a million series decodes tens of millions a
 * minute: as objects (one per point, and a boxed number for most values) they were the main
 * thread's largest allocation, and the points of a host's first batch, kept until its last
 * batch came, were much of what its garbage collections had to promote and mark. As columns
 * they are two arrays a metric, the values unboxed.
 */

/** A point as the document writes it. */
export interface SeriesPoint {
  readonly timestamp: string;
  readonly value: number | null;
}

/** A gap (a null point) among the values: JSON has no NaN, so a decoded value never is one. */
export const GAP = NaN;

export class SeriesPoints {
  /**
   * @param times each point's timestamp text, RFC 3339 as sent
   * @param values each point's value, `GAP` for a null point
   * @param timesShared `times` is one array for every list of a poll with these texts (the
   *   scanner's): what is worked out from it may be kept by its identity
   */
  constructor(
    readonly times: readonly string[],
    readonly values: readonly number[],
    readonly timesShared = false,
  ) {}

  get length(): number {
    return this.times.length;
  }

  /** The value of point `i`, null for a gap. */
  valueAt(i: number): number | null {
    const value = this.values[i] as number;
    return value === value ? value : null;
  }

  /** The points as the document writes them (tests, backfill, messages). */
  toPoints(): SeriesPoint[] {
    return this.times.map((timestamp, i) => ({ timestamp, value: this.valueAt(i) }));
  }

  static of(points: readonly SeriesPoint[]): SeriesPoints {
    return new SeriesPoints(
      points.map((p) => p.timestamp),
      points.map((p) => p.value ?? GAP),
    );
  }
}

/** A map of metric name to points, with each metric's points as the document writes them (tests, messages). */
export function pointsByName(series: Readonly<Record<string, SeriesPoints>>): Record<string, SeriesPoint[]> {
  const out: Record<string, SeriesPoint[]> = {};
  for (const [name, points] of Object.entries(series)) out[name] = points.toPoints();
  return out;
}
