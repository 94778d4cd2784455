/**
 * Validation of the include/exclude patterns in the config, and the matchers built from
 * them. Matching uses the project's one glob dialect (`src/lib/glob.ts`: `*`
 * any run of characters including dots, `?` one character, the rest literal), so what the
 * config accepts is exactly what the sources match. Syntax from other glob dialects
 * (`[...]`, `{a,b}`, `**`) would be silently taken literally there, so it is refused here.
 */
import { globMatcher } from '../lib/glob.js';

export type PatternKind = 'name' | 'tag' | 'metric';

const METRIC_PATTERN_CHARS = /^[a-z0-9_.*?|/-]+$/;

/** An error message for a bad pattern, or undefined when it is fine. */
export function patternProblem(pattern: string, kind: PatternKind): string | undefined {
  const quoted = JSON.stringify(pattern);
  if (pattern.trim() === '') return 'must not be empty';
  if (/\s/.test(pattern)) return `pattern ${quoted} contains whitespace`;
  if (/[[\]]/.test(pattern)) return `pattern ${quoted} uses [...], which is not supported: the only wildcards are * (any run of characters) and ? (one character)`;
  if (/[{}]/.test(pattern)) return `pattern ${quoted} uses {...}, which is not supported: list each alternative as its own pattern`;
  if (pattern.includes('**')) return `pattern ${quoted} contains **; a single * already matches across dots`;
  if (kind === 'tag' && pattern.includes(',')) return `tag pattern ${quoted} contains a comma; list each tag as its own item`;
  if (kind === 'metric' && !METRIC_PATTERN_CHARS.test(pattern)) {
    return `metric pattern ${quoted} may only contain lowercase letters, digits, ".", "_", "-", "|" and "/" (per-device names such as system.io.iops_r|sda) and the wildcards * and ?`;
  }
  return undefined;
}

export interface IncludeExclude {
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

/** Selected when some include pattern matches (an empty include list selects all) and no exclude pattern does. */
export function createNameFilter(filter: IncludeExclude): (name: string) => boolean {
  const included = filter.include.length === 0 ? () => true : globMatcher(filter.include);
  const excluded = globMatcher(filter.exclude);
  return (name) => included(name) && !excluded(name);
}
