/**
 * Metric and label names. Prometheus allows `[a-zA-Z_][a-zA-Z0-9_]*` in label names and
 * the same plus `:` in metric names; we never emit colons (they are reserved for recording
 * rules), so both use the same sanitiser.
 */

const INVALID_NAME_CHARS = /[^a-zA-Z0-9_]/g;

/** Replaces every character outside `[a-zA-Z0-9_]` with `_`, nothing else. */
export function replaceInvalidNameChars(raw: string): string {
  return raw.replace(INVALID_NAME_CHARS, '_');
}

/**
 * Replaces every character outside `[a-zA-Z0-9_]` with `_` and prefixes `_` when the
 * result would start with a digit. Case is kept. An empty input gives `_`.
 *
 * `sanitizeName('system.cpu.user')` → `system_cpu_user`; `sanitizeName('1xx')` → `_1xx`.
 */
export function sanitizeName(raw: string): string {
  const replaced = raw.replace(INVALID_NAME_CHARS, '_');
  if (replaced === '') return '_';
  return /^[0-9]/.test(replaced) ? `_${replaced}` : replaced;
}

/** Label names Prometheus reserves (`__` prefix) or that clash with target and relabelling labels. */
const DISCOURAGED_LABELS = new Set(['job', 'instance', 'region', 'env', 'cluster', 'type']);

/**
 * A valid label name built from arbitrary text with a fixed prefix, e.g. a tag key:
 * `prefixedLabelName('tag_', 'team-name')` → `tag_team_name`. The prefix keeps user
 * keys away from reserved (`__`) and clashing names (`job`, `env`, ...).
 */
export function prefixedLabelName(prefix: string, raw: string): string {
  const name = `${prefix}${raw.replace(INVALID_NAME_CHARS, '_')}`;
  if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name) || name.startsWith('__')) {
    throw new Error(`prefixedLabelName: prefix ${JSON.stringify(prefix)} does not give a valid label name`);
  }
  return name;
}

/** True for a label name this project should not emit: reserved or discouraged. */
export function isDiscouragedLabelName(name: string): boolean {
  return name.startsWith('__') || DISCOURAGED_LABELS.has(name);
}
