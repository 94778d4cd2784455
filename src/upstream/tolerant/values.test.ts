import { describe, expect, it } from 'vitest';
import { boolean, integer, nonEmptyString, number, string, stringList, text, timestamp, type ValueReader } from './values.js';

function read<T>(reader: ValueReader<T>, raw: unknown): T | string {
  const result = reader(raw);
  return result.ok ? result.value : `${result.reason}: ${result.detail}`;
}

describe('value readers', () => {
  it.each<[string, ValueReader<unknown>, unknown, unknown]>([
    ['number', number, 90, 90],
    ['number from a numeric string', number, ' 90.5 ', 90.5],
    ['number from an exponent', number, '1e3', 1000],
    ['number refuses words', number, 'high', 'invalid_value: "high" is not a number'],
    ['number refuses infinity', number, Infinity, 'invalid_value: Infinity is not finite'],
    ['number refuses a list', number, [1], 'wrong_type: expected a number, got a list'],
    ['integer from a string id', integer, '42', 42],
    ['integer refuses a fraction', integer, 1.5, 'invalid_value: 1.5 is not a whole number'],
    ['string', string, 'web-1', 'web-1'],
    ['string from a number id', string, 7, '7'],
    ['string refuses an object', string, {}, 'wrong_type: expected a string, got an object'],
    ['nonEmptyString refuses blanks', nonEmptyString, '  ', 'invalid_value: is empty'],
    ['text refuses a number', text, 32, 'wrong_type: expected a string, got number 32'],
    ['boolean', boolean, false, false],
    ['boolean from 1', boolean, 1, true],
    ['boolean from "Yes"', boolean, 'Yes', true],
    ['boolean from "off"', boolean, 'off', false],
    ['boolean refuses "maybe"', boolean, 'maybe', 'invalid_value: "maybe" is not true or false'],
    ['timestamp as the document writes it, kept', timestamp, '2026-11-22T12:00:00Z', '2026-11-22T12:00:00Z'],
    ['timestamp with an offset, kept', timestamp, '2026-11-22T14:00:00+02:00', '2026-11-22T14:00:00+02:00'],
    ['timestamp with a space', timestamp, '2020-12-15 14:41:39+00:00', '2020-12-15T14:41:39.000Z'],
    ['timestamp without seconds', timestamp, '2020-12-15T14:41Z', '2020-12-15T14:41:00.000Z'],
    ['timestamp +hhmm', timestamp, '2020-12-15 16:41:39+0200', '2020-12-15T14:41:39.000Z'],
    ['timestamp in Unix seconds', timestamp, 1_800_000_000, '2027-01-15T08:00:00.000Z'],
    ['timestamp in Unix milliseconds', timestamp, 1_800_000_000_000, '2027-01-15T08:00:00.000Z'],
    ['timestamp refuses a zone-less time', timestamp, '2020-12-15 14:41:39', 'invalid_value: "2020-12-15 14:41:39" is not an RFC 3339 timestamp'],
    ['timestamp refuses words', timestamp, 'yesterday', 'invalid_value: "yesterday" is not an RFC 3339 timestamp'],
    ['timestamp refuses a number past the last date', timestamp, 8_640_000_000_000_001, 'invalid_value: 8640000000000001 is not a Unix time'],
    ['stringList', stringList, ['a', 1, null, { x: 1 }], ['a', '1']],
    ['stringList from the agent comma list', stringList, 'foo, bar,env:prod,', ['foo', 'bar', 'env:prod']],
  ])('%s', (_name, reader, raw, want) => {
    expect(read(reader, raw)).toEqual(want);
  });

  it('clips long upstream text in what it says', () => {
    expect(read(number, 'x'.repeat(200))).toBe(`invalid_value: "${'x'.repeat(40)}…" is not a number`);
  });
});
