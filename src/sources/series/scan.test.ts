import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../upstream/decode.js';
import type { RequestContext } from '../../upstream/http/errors.js';
import { decodeSeries } from './decode.js';
import { pointsByName } from './points.js';
import { scanSeriesBody } from './scan.js';

/**
 * The byte scanner of documented series bodies stands in for JSON.parse: for every body it
 * reads it must give exactly what JSON.parse gives (-0, every double, every name), and it
 * must hand every other body back (undefined) rather than read it differently. Its points come
 * as columns; written back as the document's points, they must be JSON.parse's.
 */

const scan = (text: string) => {
  const body = scanSeriesBody(Buffer.from(text, 'utf8'));
  if (body === undefined) return undefined;
  const { series, ...rest } = body;
  return series === undefined ? rest : { ...rest, series: pointsByName(series) };
};
const T0 = '2026-11-26T10:00:00Z';
const T1 = '2026-11-26T10:01:00Z';
const documented = (value: string) => `{"interval":60,"series":{"a":[{"timestamp":"${T0}","value":${value}}]}}`;

describe('scanning a documented series body', () => {
  it.each([
    ['the documented body', `{"host_uuid":"h1","since":"${T0}","interval":60,"series":{"system.cpu.user":[{"timestamp":"${T0}","value":33.62},{"timestamp":"${T1}","value":null}]}}`],
    ['keys in another order, points with value first', `{"series":{"a":[{"value":1,"timestamp":"${T0}"}]},"interval":60,"since":"${T0}"}`],
    ['white space everywhere', ` \n{ "interval" : 60 ,\r\n\t"series" : { "a" : [ { "timestamp" : "${T0}" , "value" : -0.5 } , { "timestamp":"${T1}","value":null } ] } }\n `],
    ['no series at all', '{"interval":60,"series":{}}'],
    ['an empty list', '{"interval":60,"series":{"a":[]}}'],
    ['names with unicode and punctuation', `{"interval":60,"series":{"dísk.ß.€/🙂":[{"timestamp":"${T0}","value":1}],"123":[]}}`],
    ['a name given twice (the last wins)', `{"interval":60,"series":{"a":[{"timestamp":"${T0}","value":1}],"a":[]}}`],
    ['a series given twice (the last wins)', `{"interval":60,"series":{"a":[]},"series":{"b":[]}}`],
    ['an interval with a fraction', '{"interval":60.5,"series":{}}'],
  ])('gives what JSON.parse gives: %s', (_case, text) => {
    const scanned = scan(text);
    expect(scanned).toBeDefined();
    expect(isDeepStrictEqual(scanned, JSON.parse(text))).toBe(true);
  });

  it.each(['0', '-0', '-0.0', '1', '-1', '0.1', '0.30000000000000004', '33.62', '1e3', '1E-7', '-2.5e+10', '123456789012345678', '9007199254740993', '0.000001', '1.7976931348623157e308', '5e-324', '1e400', '100', '10.000', '0.0000000000000000000000001'])(
    'reads the number %s exactly as JSON.parse does',
    (number) => {
      const value = scanSeriesBody(Buffer.from(documented(number)))?.series?.a?.valueAt(0);
      expect(Object.is(value, (JSON.parse(documented(number)) as { series: { a: [{ value: number }] } }).series.a[0].value)).toBe(true);
    },
  );

  it.each([
    ['another key in the envelope', `{"interval":60,"series":{},"paging":null}`],
    ['another key in a point', `{"interval":60,"series":{"a":[{"timestamp":"${T0}","value":1,"unit":"%"}]}}`],
    ['a point without a value', `{"interval":60,"series":{"a":[{"timestamp":"${T0}"}]}}`],
    ['a point with its time twice', `{"interval":60,"series":{"a":[{"timestamp":"${T0}","timestamp":"${T1}","value":1}]}}`],
    ['a value as a string', `{"interval":60,"series":{"a":[{"timestamp":"${T0}","value":"1.5"}]}}`],
    ['a point as a pair', `{"interval":60,"series":{"a":[["${T0}",1]]}}`],
    ['an escape in a name', `{"interval":60,"series":{"a\\"b":[]}}`],
    ['an escape in a time', `{"interval":60,"series":{"a":[{"timestamp":"2026-11-26T10:00:00\\u005a","value":1}]}}`],
    ['a time that is not ASCII', `{"interval":60,"series":{"a":[{"timestamp":"2026-11-26T10:00:00Ž","value":1}]}}`],
    ['an interval as a string', '{"interval":"60s","series":{}}'],
    ['a null interval', '{"interval":null,"series":{}}'],
    ['a host as null', '{"host_uuid":null,"interval":60,"series":{}}'],
    ['a name __proto__', '{"interval":60,"series":{"__proto__":[]}}'],
    ['a number with a leading zero', documented('01')],
    ['a number ending in a dot', documented('1.')],
    ['a number starting with a dot', documented('.5')],
    ['a number with a plus', documented('+1')],
    ['NaN', documented('NaN')],
    ['true', documented('true')],
    ['a trailing comma', `{"interval":60,"series":{"a":[{"timestamp":"${T0}","value":1},]}}`],
    ['text after the body', '{"interval":60,"series":{}} x'],
    ['a cut body', `{"interval":60,"series":{"a":[{"timestamp":"${T0}","val`],
    ['an empty body', ''],
    ['a list', '[]'],
    ['an empty object', '{}'],
  ])('hands back a body in any other form: %s', (_case, text) => {
    expect(scan(text)).toBeUndefined();
  });

  const name = fc.string({ unit: 'grapheme', maxLength: 12 });
  const time = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString().replace('.000Z', 'Z'));
  const value = fc.oneof(fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -1e6, max: 1e6 }));
  const body = fc.record(
    {
      host_uuid: fc.string({ maxLength: 40 }),
      since: time,
      interval: fc.integer({ min: 1, max: 3600 }),
      series: fc.dictionary(name, fc.array(fc.record({ timestamp: time, value }), { maxLength: 6 }), { maxKeys: 5 }),
    },
    { requiredKeys: [] },
  );

  it('gives what JSON.parse gives for any documented body, and hands back only bodies with escapes', () => {
    fc.assert(
      fc.property(body, fc.constantFrom(undefined, 0, 1, 2, '\t'), (value, space) => {
        const text = JSON.stringify(value, null, space);
        const scanned = scan(text);
        if (scanned === undefined) {
          // Only an escape (a quote, backslash or control character in a string), an empty
          // body or a __proto__ name sends a documented body to JSON.parse.
          expect(/\\|^\{\}$/.test(text) || Object.hasOwn(value.series ?? {}, '__proto__')).toBe(true);
          return;
        }
        expect(isDeepStrictEqual(scanned, JSON.parse(text))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('gives what JSON.parse gives for bodies whose lists share one timeline, body after body (points matched byte for byte)', () => {
    const timeline = fc.array(time, { minLength: 1, maxLength: 5 });
    const shared = fc.record({
      times: timeline,
      names: fc.uniqueArray(name, { maxLength: 4 }),
      values: fc.array(value, { minLength: 20, maxLength: 20 }),
      space: fc.constantFrom(undefined, 0, 2),
      // A point written almost as an encoder writes it: a space before its closing brace.
      loose: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(shared, { minLength: 1, maxLength: 4 }), (bodies) => {
        for (const { times, names, values, space, loose } of bodies) {
          const series = Object.fromEntries(names.map((n, i) => [n, times.map((timestamp, j) => ({ timestamp, value: values[(i * 5 + j) % values.length] ?? null }))]));
          let text = JSON.stringify({ host_uuid: 'h1', interval: 60, series }, null, space);
          if (loose) text = text.replace(/(\d|null)\}/, '$1 }');
          const scanned = scan(text);
          if (scanned === undefined) {
            expect(/\\/.test(text) || names.includes('__proto__')).toBe(true);
            continue;
          }
          expect(isDeepStrictEqual(scanned, JSON.parse(text))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reads any double back exactly, in any JSON spelling of it', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -30, max: 30 }), (number, shift) => {
        for (const spelling of [JSON.stringify(number), number.toExponential(), number.toPrecision(17), number.toExponential(Math.abs(shift) % 21)]) {
          if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(spelling)) continue;
          const scanned = scanSeriesBody(Buffer.from(documented(spelling)))?.series?.a?.valueAt(0);
          const parsed = (JSON.parse(documented(spelling)) as { series: { a: [{ value: number }] } }).series.a[0].value;
          expect(Object.is(scanned, parsed)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('gives the series decoder the same answer, report and all, as JSON.parse would', () => {
    const context: RequestContext = { api: 'monitoring', endpoint: '/hosts/{uuid}/metrics/series' };
    const text = `{"host_uuid":"h1","since":"${T0}","interval":60,"series":{"system.cpu.user":[{"timestamp":"${T0}","value":33.62},{"timestamp":"${T1}","value":null}],"system.load.1":[{"timestamp":"${T0}","value":0.5}]}}`;
    const fromBytes = decodeBody(decodeSeries, Buffer.from(text), context);
    const fromParse = decodeSeries(JSON.parse(text), context);
    expect(scan(text)).toBeDefined();
    const documentForm = (decoded: typeof fromParse) => ({ ...decoded, value: { ...decoded.value, series: pointsByName(decoded.value.series) } });
    expect(documentForm(fromBytes)).toEqual(documentForm(fromParse));
    expect(fromBytes.value.series['system.cpu.user']?.timesShared).toBe(true);
  });

  it('leaves the point fields to the paths an operator named, even after the same times were read without them', () => {
    const context: RequestContext = { api: 'monitoring', endpoint: '/hosts/{uuid}/metrics/series' };
    const text = `{"interval":60,"series":{"a":[{"timestamp":"${T0}","value":1},{"timestamp":"${T1}","value":2}]}}`;
    expect(pointsByName(decodeBody(decodeSeries, Buffer.from(text), context).value.series).a).toHaveLength(2);
    const options = { fieldPaths: { value: 'reading' } };
    const fromBytes = () => decodeBody(decodeSeries, Buffer.from(text), context, undefined, options);
    const fromParse = () => decodeSeries(JSON.parse(text), context, options);
    const [bytes, parsed] = [fromBytes(), fromParse()];
    expect(pointsByName(bytes.value.series)).toEqual(pointsByName(parsed.value.series));
    expect(pointsByName(bytes.value.series).a?.map((p) => p.value)).toEqual([null, null]);
    expect(bytes.fields).toEqual(parsed.fields);
  });

  it.each([
    ['without an interval', `{"series":{"a":[{"timestamp":"${T0}","value":1}]}}`],
    ['with an interval in fractions of a second', `{"interval":60.5,"series":{"a":[{"timestamp":"${T0}","value":1}]}}`],
  ])('refuses a scanned body %s in the words JSON.parse would give, never naming the columns', (_case, text) => {
    const context: RequestContext = { api: 'monitoring', endpoint: '/hosts/{uuid}/metrics/series' };
    expect(scan(text)).toBeDefined();
    const message = (decode: () => unknown): string => {
      try {
        decode();
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('the body was not refused');
    };
    const fromBytes = message(() => decodeBody(decodeSeries, Buffer.from(text), context));
    expect(fromBytes).toBe(message(() => decodeSeries(JSON.parse(text), context)));
    expect(fromBytes).not.toMatch(/times|values|timesShared/);
  });

  it('gives the series decoder points with a bad time to drop as JSON.parse would, naming each', () => {
    const context: RequestContext = { api: 'monitoring', endpoint: '/hosts/{uuid}/metrics/series' };
    const text = `{"interval":60,"series":{"a":[{"timestamp":"${T0}","value":1},{"timestamp":"soon","value":2}],"b":[{"timestamp":"${T0}","value":3}]}}`;
    expect(scan(text)).toBeDefined();
    const fromBytes = decodeBody(decodeSeries, Buffer.from(text), context);
    const fromParse = decodeSeries(JSON.parse(text), context);
    expect(pointsByName(fromBytes.value.series)).toEqual({ a: [{ timestamp: T0, value: 1 }], b: [{ timestamp: T0, value: 3 }] });
    expect(pointsByName(fromBytes.value.series)).toEqual(pointsByName(fromParse.value.series));
    expect(fromBytes.dropped).toEqual(fromParse.dropped);
    expect(fromBytes.dropped.map((d) => d.path)).toEqual(['series["a"][1]']);
  });
});
