import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1d', 86_400_000],
    ['250ms', 250],
    ['1m30s500ms', 90_500],
    ['0s', 0],
    [' 2m ', 120_000],
  ])('%j is %d ms', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ms });
  });

  it.each([
    ['5 minutes', '"5 minutes" is not a duration: write a whole number and a unit (ms, s, m, h, d), e.g. 30s, 5m or 1h30m'],
    ['-1s', '"-1s" is not a duration: write a whole number and a unit (ms, s, m, h, d), e.g. 30s, 5m or 1h30m'],
    ['1.5m', '"1.5m" is not a duration: write a whole number and a unit (ms, s, m, h, d), e.g. 30s, 5m or 1h30m'],
    ['60', '"60" is not a duration: write a whole number and a unit (ms, s, m, h, d), e.g. 30s, 5m or 1h30m'],
    ['', '"" is not a duration: write a whole number and a unit (ms, s, m, h, d), e.g. 30s, 5m or 1h30m'],
    ['30m1h', '"30m1h" is not a duration: units must go from largest to smallest, each once (e.g. 1h30m)'],
    ['1m1m', '"1m1m" is not a duration: units must go from largest to smallest, each once (e.g. 1h30m)'],
  ])('%j is refused', (text, error) => {
    expect(parseDuration(text)).toEqual({ error });
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [90_000, '1m30s'],
    [7_200_000, '2h'],
    [86_400_000 + 60_000, '1d1m'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([1, 999, 30_000, 5_400_000, 93_784_005])('round-trips %d ms through parseDuration', (ms) => {
    expect(parseDuration(formatDuration(ms))).toEqual({ ms });
  });
});
