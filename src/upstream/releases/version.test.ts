import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareVersions, isPrerelease, matchesMajor, normaliseVersion, parseVersion } from './version.js';

describe('normaliseVersion', () => {
  it.each([
    ['v1.2.3', '1.2.3'],
    ['V2', '2'],
    ['nginx-1.27.3', '1.27.3'],
    ['release-1.27.3', '1.27.3'],
    ['release-1_2_3', '1.2.3'],
    ['php-8.4.1', '8.4.1'],
    ['php5-5.6.40', '5.6.40'],
    ['mariadb-10.11.10', '10.11.10'],
    ['varnish-7.6.1', '7.6.1'],
    ['curl-8_11_0', '8.11.0'],
    ['REL_16_2', '16.2'],
    ['INKSCAPE_1_4_BETA_1', '1.4.BETA.1'],
    ['v1_2_3', '1.2.3'],
    ['1_2.3', '1_2.3'],
    ['1.2.3-rc.1', '1.2.3-rc.1'],
    ['2024.01.15', '2024.01.15'],
    ['1.0.0+build.5', '1.0.0+build.5'],
    ['6.12', '6.12'],
    ['4.20', '4.20'],
    ['40.1', '40.1'],
    ['go1.21.0', '1.21.0'],
    ['  v1.2.3  ', '1.2.3'],
    ['1.2.3 (stable)', '1.2.3'],
    ['nginx-plus-r30', '30'],
  ])('%j normalises to %j', (tag, expected) => {
    expect(normaliseVersion(tag)).toBe(expected);
  });

  it.each(['v', '', '   ', 'latest', 'release-', 'nightly-build'])('%j names no version', (tag) => {
    expect(normaliseVersion(tag)).toBeUndefined();
  });
});

describe('parseVersion', () => {
  it.each([
    ['1.27.3', [1, 27, 3], undefined, [], undefined],
    ['2024.01.15', [2024, 1, 15], undefined, [], undefined],
    ['1.2.3-rc.1', [1, 2, 3], 'rc', ['rc', 1], undefined],
    ['2.0.0-rc1', [2, 0, 0], 'rc', ['rc', 1], undefined],
    ['8.4.0RC4', [8, 4, 0], 'rc', ['rc', 4], undefined],
    ['1.0.0-beta.2', [1, 0, 0], 'beta', ['beta', 2], undefined],
    ['1.0a1', [1, 0], 'alpha', ['a', 1], undefined],
    ['2.0b2', [2, 0], 'beta', ['b', 2], undefined],
    ['3.0-alpha', [3, 0], 'alpha', ['alpha'], undefined],
    ['1.4-pre', [1, 4], 'pre', ['pre'], undefined],
    ['1.4-preview.3', [1, 4], 'pre', ['preview', 3], undefined],
    ['1.0.dev0', [1, 0], 'dev', ['dev', 0], undefined],
    ['1.0-SNAPSHOT', [1, 0], 'dev', ['snapshot'], undefined],
    ['v6.13-rc1', [6, 13], 'rc', ['rc', 1], undefined],
    ['1.8.11-1', [1, 8, 11], undefined, [1], undefined],
    ['1.0.2a', [1, 0, 2], undefined, ['a'], undefined],
    ['1.0.post1', [1, 0], undefined, ['post', 1], undefined],
    ['1.0.0+build.5', [1, 0, 0], undefined, [], 'build.5'],
    ['1.0.0-rc.1+exp.sha.5114f85', [1, 0, 0], 'rc', ['rc', 1], 'exp.sha.5114f85'],
  ])('%j: release %j, pre-release %j, suffix %j, build %j', (text, release, prerelease, suffix, build) => {
    const parsed = parseVersion(text);
    expect(parsed).toBeDefined();
    expect(parsed?.release).toEqual(release);
    expect(parsed?.prerelease).toBe(prerelease);
    expect(parsed?.suffix).toEqual(suffix);
    expect(parsed?.build).toBe(build);
  });

  it.each(['', 'v', 'latest'])('%j is not a version', (text) => {
    expect(parseVersion(text)).toBeUndefined();
  });
});

describe('isPrerelease', () => {
  it.each([
    ['2.0.0-rc1', true],
    ['1.2.3-rc.1', true],
    ['1.0.0-beta.2', true],
    ['1.0a1', true],
    ['2.0b2', true],
    ['1.0.0-rc', true],
    ['1.0.0-alpha', true],
    ['1.0.0-dev', true],
    ['1.0.0-pre', true],
    ['1.0.dev0', true],
    ['1.0-SNAPSHOT', true],
    ['v6.13-rc1', true],
    ['INKSCAPE_1_4_BETA_1', true],
    ['1.27.3', false],
    ['release-1.27.3', false],
    ['1.8.11-1', false],
    ['1.0.2a', false],
    ['1.0.0+build.5', false],
    ['latest', false],
  ])('%j -> %j', (text, expected) => {
    expect(isPrerelease(text)).toBe(expected);
  });
});

describe('compareVersions', () => {
  it.each([
    ['1.10', '1.9', 1],
    ['4.20', '4.9', 1],
    ['10.11.10', '10.6.20', 1],
    ['1.2', '1.2.0', 0],
    ['2024.01.15', '2024.1.15', 0],
    ['v1.2.3', 'release-1_2_3', 0],
    ['2.0.0-rc1', '2.0.0', -1],
    ['2.0.0', '2.0.0-1', -1],
    ['6.13-rc1', '6.12', 1],
    ['1.0.dev0', '1.0a1', -1],
    ['1.0a1', '1.0b1', -1],
    ['1.0.0-beta.2', '1.0.0-rc.1', -1],
    ['1.0-pre', '1.0-rc1', -1],
    ['1.0.0-rc.1', '1.0.0-rc.2', -1],
    ['1.0.0-rc.2', '1.0.0-rc.10', -1],
    ['1.0.0-rc', '1.0.0-rc.1', -1],
    ['1.0.0-alpha', '1.0.0-alpha.beta', -1],
    ['1.8.11-1', '1.8.11-2', -1],
    ['1.0.0+build.5', '1.0.0', 0],
    ['1.0.0+build.5', '1.0.0+build.6', 0],
    ['latest', '0.0.1', -1],
    ['latest', 'latest', 0],
    ['', 'latest', -1],
    ['40.1', '4.20', 1],
  ] as const)('compare(%j, %j) is %j', (a, b, expected) => {
    expect(compareVersions(a, b)).toBe(expected);
    expect(compareVersions(b, a)).toBe(-expected || 0);
  });

  it('sorts a shuffled list into release order', () => {
    const sorted = ['6.12', 'v4.9', '4.20', 'latest', '6.13-rc1', '4.19', '6.13', '5.10'].sort(compareVersions);
    expect(sorted).toEqual(['latest', 'v4.9', '4.19', '4.20', '5.10', '6.12', '6.13-rc1', '6.13']);
  });
});

describe('matchesMajor', () => {
  it.each([
    ['4', 4, true],
    ['4.20', 4, true],
    ['4.0.1', 4, true],
    ['v4.20', 4, true],
    ['4-rc1', 4, true],
    ['40.1', 4, false],
    ['14.2', 4, false],
    ['40.0.2214.115', 40, true],
    ['4.1.249.1064', 40, false],
    ['6.12', 6, true],
    ['0.9.1', 0, true],
    ['latest', 4, false],
    ['', 4, false],
  ] as const)('%j in major line %j: %j', (version, major, expected) => {
    expect(matchesMajor(version, major)).toBe(expected);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('rejects major %j', (major) => {
    expect(() => matchesMajor('1.0', major)).toThrow(/major must be a non-negative integer/);
  });
});

describe('properties', () => {
  const part = fc.integer({ min: 0, max: 40 });
  const prerelease = fc.oneof(
    fc.constant(''),
    fc.constantFrom('-rc', '-rc.', 'rc', '-beta.', 'b', 'a', '-alpha', '.dev', '-SNAPSHOT', '-pre', '-').chain((word) =>
      fc.option(part, { nil: undefined }).map((n) => `${word}${n ?? ''}`),
    ),
  );
  const version = fc
    .tuple(
      fc.constantFrom('', 'v', 'V', 'release-', 'nginx-'),
      fc.array(part, { minLength: 1, maxLength: 4 }),
      prerelease,
      fc.constantFrom('', '+build.5', '+1'),
    )
    .map(([prefix, parts, pre, build]) => `${prefix}${parts.join('.')}${pre}${build}`);
  const anyText = fc.oneof(version, fc.string({ maxLength: 12 }));

  it('compare is antisymmetric', () => {
    fc.assert(
      fc.property(anyText, anyText, (a, b) => {
        expect(compareVersions(a, b)).toBe(-compareVersions(b, a) || 0);
      }),
    );
  });

  it('compare is transitive', () => {
    fc.assert(
      fc.property(anyText, anyText, anyText, (a, b, c) => {
        const ab = compareVersions(a, b);
        const bc = compareVersions(b, c);
        if (ab <= 0 && bc <= 0) expect(compareVersions(a, c)).toBe(ab < 0 || bc < 0 ? -1 : 0);
      }),
      { numRuns: 1000 },
    );
  });

  it('a pre-release is older than its release, and the release older than a higher one', () => {
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 4 }), prerelease, (parts, pre) => {
        const release = parts.join('.');
        fc.pre(isPrerelease(`${release}${pre}`));
        expect(compareVersions(`${release}${pre}`, release)).toBe(-1);
        expect(compareVersions(release, `${release}.1`)).toBe(-1);
      }),
    );
  });

  it('normalise is idempotent', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const once = normaliseVersion(text);
        if (once !== undefined) expect(normaliseVersion(once)).toBe(once);
      }),
    );
  });

  it('a normalised version starts with a digit', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const normalised = normaliseVersion(text);
        if (normalised !== undefined) expect(normalised).toMatch(/^\d/);
      }),
    );
  });
});
