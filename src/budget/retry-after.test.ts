import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseRetryAfter } from './retry-after.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0); // Sun, 22 Nov 2026 12:00:00 GMT
const CAP = 300_000;

describe('parseRetryAfter', () => {
  it.each<[string, string | undefined, number | undefined]>([
    ['absent', undefined, undefined],
    ['empty', '', undefined],
    ['blank', '   ', undefined],
    ['zero', '0', 0],
    ['integer seconds', '30', 30_000],
    ['surrounding whitespace', ' 7 ', 7_000],
    ['exactly the cap', '300', CAP],
    ['just above the cap', '301', CAP],
    ['an epoch timestamp sent as seconds', '1734567890', CAP],
    ['digits that overflow a double', '9'.repeat(400), CAP],
    ['fractional seconds, rounded up to the ms', '1.5', 1_500],
    ['tiny fraction', '0.0001', 1],
    ['negative', '-5', undefined],
    ['explicit plus sign', '+5', undefined],
    ['exponent notation', '1e3', undefined],
    ['Infinity', 'Infinity', undefined],
    ['NaN', 'NaN', undefined],
    ['hex', '0x10', undefined],
    ['words', 'soon', undefined],
    ['number with unit', '10s', undefined],
    ['trailing dot', '5.', undefined],
    ['IMF-fixdate 90 s ahead', 'Sun, 22 Nov 2026 12:01:30 GMT', 90_000],
    ['IMF-fixdate, lower case', 'sun, 22 nov 2026 12:01:30 gmt', 90_000],
    ['IMF-fixdate in the past', 'Sun, 22 Nov 2026 11:00:00 GMT', 0],
    ['IMF-fixdate 55 years ahead', 'Mon, 22 Nov 2081 12:00:00 GMT', CAP],
    ['RFC 850 date 2 minutes ahead', 'Sunday, 22-Nov-26 12:02:00 GMT', 120_000],
    ['asctime date 10 s ahead', 'Sun Nov 22 12:00:10 2026', 10_000],
    ['asctime with a padded day', 'Fri Nov  6 08:49:37 1994', 0],
    ['date without GMT', 'Sun, 22 Nov 2026 12:01:30', undefined],
    ['ISO 8601 is not an HTTP-date', '2026-11-22T12:01:30Z', undefined],
    ['impossible day', 'Mon, 31 Feb 2027 12:00:00 GMT', undefined],
    ['impossible hour', 'Sun, 22 Nov 2026 25:00:00 GMT', undefined],
    ['unknown month', 'Sun, 22 Foo 2026 12:00:00 GMT', undefined],
  ])('%s: %j -> %j ms', (_label, header, expected) => {
    expect(parseRetryAfter(header, NOW, CAP)).toBe(expected);
  });

  it('caps at zero when the cap itself is negative, never returning a negative wait', () => {
    expect(parseRetryAfter('10', NOW, -1)).toBe(0);
  });

  it('reads a date against the clock it is given, not the wall clock', () => {
    const later = NOW + 60_000;
    expect(parseRetryAfter('Sun, 22 Nov 2026 12:01:30 GMT', later, CAP)).toBe(30_000);
  });
});

describe('parseHttpDate', () => {
  it.each<[string, number]>([
    ['Sun, 06 Nov 1994 08:49:37 GMT', Date.UTC(1994, 10, 6, 8, 49, 37)],
    ['Sunday, 06-Nov-94 08:49:37 GMT', Date.UTC(1994, 10, 6, 8, 49, 37)],
    ['Sun Nov  6 08:49:37 1994', Date.UTC(1994, 10, 6, 8, 49, 37)],
    // Two-digit years more than 50 years ahead of "now" belong to the past century.
    ['Thursday, 01-Jan-76 00:00:00 GMT', Date.UTC(2076, 0, 1)],
    ['Friday, 01-Jan-77 00:00:00 GMT', Date.UTC(1977, 0, 1)],
  ])('%s', (text, expected) => {
    expect(parseHttpDate(text, NOW)).toBe(expected);
  });
});
