import { describe, expect, it } from 'vitest';
import { compareVersions, inMajorLine, isPrerelease, majorProblem, normaliseVersion } from '../../simulator/releases/version.js';

/** The simulated Release Lookup service's own reading of versions (upstream facts). */

describe('normaliseVersion: leading non-digits are stripped', () => {
  it.each([
    ['v1.2.3', '1.2.3'],
    ['V2', '2'],
    ['release-1.27.3', '1.27.3'],
    ['nginx-1.27.3', '1.27.3'],
    ['php-8.4.0RC4', '8.4.0RC4'],
    ['php5-5.6.40', '5.6.40'],
    ['mariadb-10.11.10', '10.11.10'],
    ['curl-8_11_0', '8.11.0'],
    ['INKSCAPE_1_4', '1.4'],
    ['INKSCAPE_1_4_BETA_1', '1.4.BETA.1'],
    ['4.0.249.78', '4.0.249.78'],
    ['  v6.12  ', '6.12'],
    ['1.8.11-1', '1.8.11-1'],
  ])('%j → %j', (tag, version) => {
    expect(normaliseVersion(tag)).toBe(version);
  });

  it.each(['', 'v', 'latest', 'nightly-build'])('%j names no version', (tag) => {
    expect(normaliseVersion(tag)).toBeUndefined();
  });
});

describe('isPrerelease: a pre or dev segment', () => {
  it.each([
    ['6.13-rc1', true],
    ['8.4.0RC4', true],
    ['1.4.BETA.1', true],
    ['2.0.0-beta.2', true],
    ['1.0a1', true],
    ['2.0b2', true],
    ['3.0-dev', true],
    ['3.0.0-SNAPSHOT', true],
    ['1.0-preview2', true],
    ['1.27.3', false],
    ['1.8.11-1', false],
    ['1.0.2a', false],
    ['6.12', false],
  ])('%j → %s', (version, pre) => {
    expect(isPrerelease(version)).toBe(pre);
  });
});

describe('compareVersions: numbers part by part', () => {
  it.each([
    ['4.20', '4.9', 1],
    ['10.11.10', '10.6.20', 1],
    ['6.12', '6.12.0', 0],
    ['1.8.11-1', '1.8.11', 1],
    ['1.26.3', '1.27.0', -1],
    ['v1.8.3', '1.8.2', 1],
  ])('%j vs %j: %i', (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
  });
});

describe('major: a prefix of the normalised version ending at a part boundary', () => {
  it.each([
    ['4.20', '4', true],
    ['4.0.1', '4', true],
    ['40.1', '4', false],
    ['14.2', '4', false],
    ['1.2.7', '1.2', true],
    ['1.2', '1.2', true],
    ['1.20.1', '1.2', false],
    ['1.26.3', '1.26', true],
    ['0.9.1', '0', true],
    ['10.0', '0', false],
  ])('%j in line %j: %s', (version, major, inside) => {
    expect(majorProblem(major)).toBeUndefined();
    expect(inMajorLine(version, major)).toBe(inside);
  });

  it.each(['', '-1', '1.', '.1', '1e1', 'v1', ' 1', '1..2', 'abc', '1.2.3.4.5'])('%j is not a legal major', (major) => {
    expect(majorProblem(major)).toMatch(/major must be/);
  });
});
