import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../../upstream/http/errors.js';
import { decodeSeries, type SeriesResponse } from './decode.js';
import { EMPTY_SERIES_STATE, mapSeries, type SeriesHostState } from './map.js';
import { SeriesNaming } from './naming.js';
import { SeriesPoints } from './points.js';
import { scanSeriesBody } from './scan.js';

/**
 * The scanner hands the mapper shared time lists (one list of texts for every metric of a body
 * with as many points, `SeriesPoints.timesShared`) so it parses a body's times once. Whatever
 * sequence of bodies comes, hosts and windows mixed, mapping the scanned bodies must give
 * exactly what mapping copies of them gives, copies with lists of their own.
 */

/** The body as the scanner reads it from its bytes, then decoded. */
function scanned(raw: unknown): SeriesResponse {
  const body = scanSeriesBody(Buffer.from(JSON.stringify(raw)));
  if (body === undefined) throw new Error('the scanner refused a documented body');
  return decodeSeries(body, context).value;
}

function copyOf(response: SeriesResponse): SeriesResponse {
  const series = Object.fromEntries(Object.entries(response.series).map(([name, points]) => [name, new SeriesPoints([...points.times], [...points.values])]));
  return { ...response, series };
}

const context: RequestContext = { api: 'monitoring', endpoint: '/hosts/{uuid}/metrics/series' };
const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const NAMES = ['system.cpu.user', 'system.net.bytes_rcvd', 'nginx.requests', 'disk.used_pct'];
const naming = new SeriesNaming();

const seriesBody = fc.record({
  host: fc.constantFrom('h1', 'h2', 'h3'),
  advanceMin: fc.integer({ min: 0, max: 5 }),
  series: fc.array(
    fc.record({
      name: fc.constantFrom(...NAMES),
      offset: fc.integer({ min: 0, max: 3 }),
      length: fc.integer({ min: 0, max: 8 }),
      reversed: fc.boolean(),
      values: fc.array(fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constant(null)), { minLength: 8, maxLength: 8 }),
    }),
    { maxLength: 4 },
  ),
});

describe('shared timelines', () => {
  it('map as copies of the same bodies do: families and state equal, whatever the order of bodies and windows', () => {
    let timelines = 0;
    fc.assert(
      fc.property(fc.array(seriesBody, { minLength: 1, maxLength: 10 }), (bodies) => {
        let nowMs = T0;
        const shared = new Map<string, SeriesHostState>();
        const copied = new Map<string, SeriesHostState>();
        for (const body of bodies) {
          nowMs += body.advanceMin * MIN;
          const start = nowMs - 10 * MIN;
          const raw = {
            host_uuid: body.host,
            interval: 60,
            series: Object.fromEntries(
              body.series.map((s) => {
                const points = s.values.slice(0, s.length).map((value, i) => ({ timestamp: new Date(start + (s.offset + i) * MIN).toISOString().replace('.000Z', 'Z'), value }));
                return [s.name, s.reversed ? points.reverse() : points];
              }),
            ),
          };
          const decoded = scanned(raw);
          for (const points of Object.values(decoded.series)) if (points.timesShared) timelines += 1;
          const copy = copyOf(decoded);
          expect(copy.series).toEqual(decodeSeries(JSON.parse(JSON.stringify(raw)), context).value.series);
          const options = { account: 'a', hostUuid: body.host, nowMs, ingestDelayMs: 2 * MIN, naming };
          const a = mapSeries([decoded], shared.get(body.host) ?? EMPTY_SERIES_STATE, options);
          const b = mapSeries([copy], copied.get(body.host) ?? EMPTY_SERIES_STATE, options);
          expect(a.families).toEqual(b.families);
          expect(a.state).toEqual(b.state);
          shared.set(body.host, a.state);
          copied.set(body.host, b.state);
        }
      }),
      { numRuns: 400 },
    );
    // The runs went through the shared path, not only around it.
    expect(timelines).toBeGreaterThan(400);
  });

  it('are one list for the metrics of a scanned body with as many points, and not handed out for parsed bodies', () => {
    const time = (m: number) => new Date(T0 + m * MIN).toISOString().replace('.000Z', 'Z');
    const raw = {
      interval: 60,
      series: {
        a: [{ timestamp: time(0), value: 1 }, { timestamp: time(1), value: 2 }],
        b: [{ timestamp: time(0), value: null }, { timestamp: time(1), value: 3.5 }],
        c: [{ timestamp: time(0), value: 4 }],
      },
    };
    const documented = scanned(raw).series;
    expect(documented.a?.timesShared).toBe(true);
    expect(documented.a?.times).toBe(documented.b?.times);
    expect(documented.c?.times).toEqual([time(0)]);
    expect(documented.b?.toPoints()).toEqual(raw.series.b);
    const parsed = decodeSeries(JSON.parse(JSON.stringify(raw)), context).value.series;
    expect(parsed.a?.timesShared).toBe(false);
    expect(parsed.a?.times).not.toBe(parsed.b?.times);
    const other = decodeSeries({ interval: 60, series: { a: [{ t: time(0), v: 1 }, { t: time(1), v: 2 }] } }, context).value.series;
    expect(other.a?.timesShared).toBe(false);
    expect(other.a?.toPoints()).toEqual([{ timestamp: time(0), value: 1 }, { timestamp: time(1), value: 2 }]);
  });
});
