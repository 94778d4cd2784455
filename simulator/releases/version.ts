/**
 * How the simulated Release Lookup service reads versions, written from the seed and the
 * upstream facts (the service is the hosted form of an open-source "latest version" tool):
 *
 * - Normalisation: leading non-digits are stripped (`v1.2.3`, `nginx-1.27.3`); a leading
 *   word that itself carries digits and ends in `-`, `_` or `/` goes whole (`php5-5.6.40`
 *   is `5.6.40`, not `5-5.6.40`). A tag that separates its numbers with `_` only
 *   (`curl-8_11_0`, `INKSCAPE_1_4`) gets dots instead. No digit left: no version.
 * - Pre-releases (a pre or dev segment: `dev`, `snapshot`, `alpha`, `a1`, `beta`, `b2`,
 *   `pre`, `preview`, `rc`, any case) never count as the latest; drafts never count either
 *   (the store checks the flag).
 * - `major` is a prefix of the normalised version that ends at a part boundary: `4`
 *   matches `4.20` but not `40.1`; `1.2` matches `1.2.7` but not `1.20`; `0` matches `0.9`.
 * - Order: the dotted numbers part by part (missing parts are 0, so `6.12` and `6.12.0`
 *   are the same version); on a tie a post-release suffix (`1.8.11-1`) is newer than none.
 *
 * The exporter has its own reading of versions; this one decides what the simulated
 * service answers, so a mistake in either shows up as a disagreement in a test.
 */

const WORD_WITH_DIGITS_PREFIX = /^[A-Za-z][A-Za-z0-9]*[-_/](?=\d)/;
const PRERELEASE_SEGMENT = /^(dev|snapshot|alpha|a\d+|beta|b\d+|pre|preview|rc)\d*$/i;
const LEGAL_MAJOR = /^\d{1,9}(\.\d{1,9}){0,3}$/;

/** The version a tag names, or undefined. */
export function normaliseVersion(tag: string): string | undefined {
  const text = tag.trim().split(/\s/, 1)[0] ?? '';
  const prefix = WORD_WITH_DIGITS_PREFIX.exec(text);
  let rest = prefix ? text.slice(prefix[0].length) : text.replace(/^\D+/, '');
  if (rest === '') return undefined;
  if (!rest.includes('.') && /^\d+(_\d+)+/.test(rest)) rest = rest.replaceAll('_', '.');
  return rest;
}

/** The dotted numbers a version (or tag) starts with and what follows them. */
function split(versionOrTag: string): { numbers: number[]; suffix: string } {
  const version = normaliseVersion(versionOrTag) ?? '';
  const match = /^(\d+(?:\.\d+)*)(.*)$/s.exec(version);
  if (!match) return { numbers: [], suffix: version };
  return { numbers: (match[1] ?? '').split('.').map(Number), suffix: (match[2] ?? '').split('+', 1)[0] ?? '' };
}

/** True when a segment of the suffix marks a pre-release (`6.13-rc1`, `8.4.0RC4`, `1.4.BETA.1`). */
export function isPrerelease(version: string): boolean {
  const { suffix } = split(version);
  const segments = suffix.split(/[^A-Za-z0-9]+|(?<=\d)(?=[A-Za-z])/).filter((s) => s !== '');
  return segments.some((segment) => PRERELEASE_SEGMENT.test(segment));
}

/** Negative when `a` is older than `b`, positive when newer, 0 for the same version (tags are normalised first). */
export function compareVersions(a: string, b: string): number {
  const pa = split(a);
  const pb = split(b);
  for (let i = 0; i < Math.max(pa.numbers.length, pb.numbers.length); i++) {
    const diff = (pa.numbers[i] ?? 0) - (pb.numbers[i] ?? 0);
    if (diff !== 0) return diff;
  }
  if (pa.suffix === pb.suffix) return 0;
  if (pa.suffix === '') return -1;
  if (pb.suffix === '') return 1;
  return pa.suffix.localeCompare(pb.suffix, 'en', { numeric: true });
}

/**
 * A `major` query value the service accepts: dotted decimal numbers (`0`, `4`, `1.26`).
 * @returns an error message naming the problem, or undefined when legal
 */
export function majorProblem(major: string): string | undefined {
  return LEGAL_MAJOR.test(major) ? undefined : `major must be a version prefix of dotted numbers such as 4, 0 or 1.26`;
}

/** Whether normalised `version` lies in the line `major` (a legal major, see majorProblem). */
export function inMajorLine(version: string, major: string): boolean {
  if (!version.startsWith(major)) return false;
  const next = version.charAt(major.length);
  return next === '' || !/\d/.test(next);
}
