/**
 * Release version strings: turning tags into versions, spotting pre-releases, and ordering.
 * Shared by the release simulator (to pick the latest release) and the exporter (to label it).
 *
 * Normalisation, `normaliseVersion(tag)`, in this order:
 *  1. Surrounding whitespace is trimmed; the text stops at the first inner whitespace.
 *  2. A leading word of two or more letters (digits may follow) ending in `-`, `_` or `/`
 *     directly before a digit is dropped: `nginx-1.27.3`, `php5-5.6.40`, `curl-8_11_0`,
 *     `REL_16_2`. This keeps the digits of words like `php5` out of the version.
 *  3. Otherwise every leading non-digit is dropped: `v1.2.3`, `V2`, `release-1.2`.
 *  4. When the rest contains no `.` and starts with numbers joined by `_` (`1_2_3`), the tag
 *     used `_` as its separator, so every `_` becomes `.`: `release-1_2_3` gives `1.2.3`.
 *  5. If no digit is left, the tag is not a version: `undefined` (`v`, ``, `latest`).
 * The result always starts with a digit, and normalising it again changes nothing.
 *
 * Structure of a normalised version, `parseVersion(v)`:
 *   release numbers `1.2.3`, then an optional suffix, then optional build metadata after `+`.
 *   The suffix is split into identifiers (runs of digits or of letters; `.`, `-`, `_`, `~`
 *   and any other character separate them): `-rc.1` and `-rc1` are both `rc`, `1`.
 *   The suffix makes a pre-release when one identifier is a pre-release word:
 *     `dev`, `snapshot`                  (rank 0: development builds)
 *     `alpha`, or `a` followed by a number (rank 1: `1.0a1`)
 *     `beta`, or `b` followed by a number  (rank 2: `2.0b2`, `-beta.2`)
 *     `pre`, `preview`                   (rank 3)
 *     `rc`                               (rank 4: `-rc1`, `-RC.2`, `8.4.0RC4`)
 *   Words are matched case-insensitively. A lone `a`/`b` without a number is not a
 *   pre-release, so OpenSSL-style letter releases (`1.0.2a`) sort after `1.0.2`.
 *   Any other suffix is a post-release: `1.8.11-1` (a package revision), `1.0.post1`.
 *
 * Ordering, `compareVersions(a, b)` (both are normalised first, so tags may be passed):
 *   1. Release numbers, part by part, missing parts counting as 0: `1.10` > `1.9`,
 *      `1.2` == `1.2.0`, `2024.01.15` == `2024.1.15`.
 *   2. Pre-release < plain release < post-release: `2.0.0-rc1` < `2.0.0` < `2.0.0-1`.
 *   3. Two pre-releases: lower rank first (`dev` < `alpha` < `beta` < `pre` < `rc`), then the
 *      identifiers; two post-releases: the identifiers. Identifiers compare one by one:
 *      numbers numerically, numbers before words, words case-insensitively by code unit;
 *      a list that is a prefix of another comes first (`rc` < `rc.1`).
 *   4. Build metadata is ignored: `1.0.0+build.5` == `1.0.0`.
 *   5. A string that does not normalise (`latest`) is older than every version, so picking
 *      the maximum never picks it; such strings order among themselves by code unit.
 *   The result is a total preorder: antisymmetric (compare(a,b) = -compare(b,a)) and
 *   transitive, with 0 meaning "same version", not necessarily "same text".
 */

export type PrereleaseKind = 'dev' | 'alpha' | 'beta' | 'pre' | 'rc';

type Identifier = number | string;

export interface ParsedVersion {
  /** The normalised text this was parsed from. */
  readonly normalised: string;
  /** Leading dotted numbers: `[1, 27, 3]`. Never empty. */
  readonly release: readonly number[];
  /** The kind of pre-release, or undefined for a release or post-release. */
  readonly prerelease: PrereleaseKind | undefined;
  /** Suffix identifiers between the release numbers and `+`: `-rc.1` gives `['rc', 1]`. */
  readonly suffix: readonly Identifier[];
  /** Text after the first `+`, if any. */
  readonly build: string | undefined;
}

const PREFIX_WORD = /^[A-Za-z]{2,}[A-Za-z0-9]*[-_/](?=\d)/;
const LEADING_NON_DIGITS = /^\D+/;
const UNDERSCORE_SEPARATED = /^\d+(?:_\d+)+/;
const RELEASE_AND_REST = /^(\d+(?:\.\d+)*)(.*)$/s;
const IDENTIFIERS = /\d+|[A-Za-z]+/g;

const PRERELEASE_WORDS: ReadonlyMap<string, { kind: PrereleaseKind; needsNumber: boolean }> = new Map([
  ['dev', { kind: 'dev', needsNumber: false }],
  ['snapshot', { kind: 'dev', needsNumber: false }],
  ['alpha', { kind: 'alpha', needsNumber: false }],
  ['a', { kind: 'alpha', needsNumber: true }],
  ['beta', { kind: 'beta', needsNumber: false }],
  ['b', { kind: 'beta', needsNumber: true }],
  ['pre', { kind: 'pre', needsNumber: false }],
  ['preview', { kind: 'pre', needsNumber: false }],
  ['rc', { kind: 'rc', needsNumber: false }],
]);

const PRERELEASE_RANK: Readonly<Record<PrereleaseKind, number>> = { dev: 0, alpha: 1, beta: 2, pre: 3, rc: 4 };

/**
 * The version a tag names, or undefined when it names none.
 * @example normaliseVersion('release-1_2_3') // '1.2.3'
 */
export function normaliseVersion(tag: string): string | undefined {
  let text = tag.trim().split(/\s/, 1)[0] ?? '';
  const word = PREFIX_WORD.exec(text);
  text = word ? text.slice(word[0].length) : text.replace(LEADING_NON_DIGITS, '');
  if (text === '') return undefined;
  if (!text.includes('.') && UNDERSCORE_SEPARATED.test(text)) text = text.replaceAll('_', '.');
  return text;
}

/**
 * The parts of a version (a tag is normalised first), or undefined when it is not one.
 * @example parseVersion('v2.0.0-rc.1')?.prerelease // 'rc'
 */
export function parseVersion(v: string): ParsedVersion | undefined {
  const normalised = normaliseVersion(v);
  if (normalised === undefined) return undefined;
  const match = RELEASE_AND_REST.exec(normalised);
  if (!match) return undefined;
  const releaseText = match[1] ?? '';
  const rest = match[2] ?? '';
  const plus = rest.indexOf('+');
  const suffixText = plus === -1 ? rest : rest.slice(0, plus);
  const build = plus === -1 ? undefined : rest.slice(plus + 1);
  const suffix = (suffixText.match(IDENTIFIERS) ?? []).map(toIdentifier);
  return {
    normalised,
    release: releaseText.split('.').map(Number),
    prerelease: prereleaseKind(suffix),
    suffix,
    build,
  };
}

/** Whether the version (or tag) is a pre-release by its text; false when it is no version. */
export function isPrerelease(v: string): boolean {
  return parseVersion(v)?.prerelease !== undefined;
}

/**
 * -1 when `a` is older than `b`, 1 when newer, 0 when they name the same version.
 * @example ['1.9', '1.10', '1.10-rc1'].sort(compareVersions) // ['1.9', '1.10-rc1', '1.10']
 */
export function compareVersions(a: string, b: string): -1 | 0 | 1 {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) {
    if (pa) return 1;
    if (pb) return -1;
    return sign(a < b ? -1 : a > b ? 1 : 0);
  }
  return compareParsed(pa, pb);
}

/** Orders two parsed versions by the rules in this module's header. */
export function compareParsed(a: ParsedVersion, b: ParsedVersion): -1 | 0 | 1 {
  const length = Math.max(a.release.length, b.release.length);
  for (let i = 0; i < length; i++) {
    const diff = compareNumbers(a.release[i] ?? 0, b.release[i] ?? 0);
    if (diff !== 0) return diff;
  }
  const phase = compareNumbers(phaseOf(a), phaseOf(b));
  if (phase !== 0) return phase;
  if (a.prerelease && b.prerelease) {
    const rank = compareNumbers(PRERELEASE_RANK[a.prerelease], PRERELEASE_RANK[b.prerelease]);
    if (rank !== 0) return rank;
  }
  return compareIdentifierLists(a.suffix, b.suffix);
}

/** A major line as the service takes it: numbers joined by dots (`4`, `0`, `1.26`). */
export const MAJOR_LINE_PATTERN = /^\d+(\.\d+)*$/;

/**
 * Whether the version lies in major line `major`: a prefix match on the normalised version
 * that ends at a part boundary, so 4 matches `4`, `4.20`, `4.0.1`, `4-rc1`, but not `40.1`
 * or `14.2`; `1.26` matches `1.26.3` but not `1.260`.
 * @throws RangeError when `major` is not a non-negative integer or a dotted line like `1.26`
 */
export function matchesMajor(version: string, major: number | string): boolean {
  const prefix = typeof major === 'number' && Number.isSafeInteger(major) && major >= 0 ? String(major) : typeof major === 'string' ? major : '';
  if (!MAJOR_LINE_PATTERN.test(prefix)) {
    throw new RangeError(`major must be a non-negative integer or a dotted line such as 1.26, got ${String(major)}`);
  }
  const normalised = normaliseVersion(version);
  if (normalised === undefined) return false;
  if (!normalised.startsWith(prefix)) return false;
  const next = normalised.charAt(prefix.length);
  return next === '' || !/\d/.test(next);
}

function toIdentifier(text: string): Identifier {
  return /^\d+$/.test(text) ? Number(text) : text.toLowerCase();
}

function prereleaseKind(suffix: readonly Identifier[]): PrereleaseKind | undefined {
  for (let i = 0; i < suffix.length; i++) {
    const id = suffix[i];
    if (typeof id !== 'string') continue;
    const word = PRERELEASE_WORDS.get(id);
    if (!word) continue;
    if (word.needsNumber && typeof suffix[i + 1] !== 'number') continue;
    return word.kind;
  }
  return undefined;
}

/** 0 pre-release, 1 plain release, 2 post-release. */
function phaseOf(v: ParsedVersion): number {
  if (v.prerelease) return 0;
  return v.suffix.length === 0 ? 1 : 2;
}

function compareIdentifierLists(a: readonly Identifier[], b: readonly Identifier[]): -1 | 0 | 1 {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const diff = compareIdentifiers(a[i] ?? 0, b[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return compareNumbers(a.length, b.length);
}

function compareIdentifiers(a: Identifier, b: Identifier): -1 | 0 | 1 {
  if (typeof a === 'number' && typeof b === 'number') return compareNumbers(a, b);
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return sign(a < b ? -1 : a > b ? 1 : 0);
}

function compareNumbers(a: number, b: number): -1 | 0 | 1 {
  return sign(a - b);
}

function sign(n: number): -1 | 0 | 1 {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}
