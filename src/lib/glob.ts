/**
 * A tiny glob for include/exclude filters: `*` matches any run of characters (dots
 * included), `?` exactly one; everything else is literal. Matching is anchored and
 * case-sensitive. `globToRegExp('web-*')` matches `web-1` but not `db-web-1`.
 */
export function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (const char of pattern) {
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else source += char.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'su');
}

/** A matcher over several globs, compiled once. An empty list matches nothing. */
export function globMatcher(patterns: readonly string[]): (text: string) => boolean {
  const regexps = patterns.map(globToRegExp);
  return (text) => regexps.some((re) => re.test(text));
}
