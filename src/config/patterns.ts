/**
 * Validation of the include/exclude patterns in the config, and the matchers built from
 * them. Matching uses the project's one glob dialect (`src/sources/shared/glob.ts`: `*`
 * any run of characters including dots, `?` one character, the rest literal), so what the
 * config accepts is exactly what the sources match. Syntax from other glob dialects
 * (`[...]`, `{a,b}`, `**`) would be silently taken literally there, so it is refused here.
 */
import { globMatcher } from '../sources/shared/glob.js';
import { isDiscouragedLabelName, prefixedLabelName } from '../sources/shared/names.js';
import { METRIC_CATALOGUE, catalogueEntry, type CatalogueEntry, type MetricKind, type SourceUnit } from '../upstream/monitoring/metric-catalogue.js';

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

export interface HostFilterConfig {
  readonly includeTags: readonly string[];
  readonly excludeTags: readonly string[];
  readonly includeNames: readonly string[];
  readonly excludeNames: readonly string[];
}

/**
 * A host is polled when it has a tag matching some `include_tags` pattern (if any are
 * given), its hostname matches some `include_names` pattern (if any are given), and
 * neither an `exclude_tags` nor an `exclude_names` pattern matches.
 */
export function createHostFilter(filter: HostFilterConfig): (host: { readonly hostname: string; readonly tags: readonly string[] }) => boolean {
  const includeTag = globMatcher(filter.includeTags);
  const excludeTag = globMatcher(filter.excludeTags);
  const name = createNameFilter({ include: filter.includeNames, exclude: filter.excludeNames });
  return (host) =>
    (filter.includeTags.length === 0 || host.tags.some(includeTag)) && !host.tags.some(excludeTag) && name(host.hostname);
}

export interface TagLabel {
  /** The host tag key, as written before the colon in `env:prod`. */
  readonly tagKey: string;
  /** The Prometheus label it becomes: `tag_` plus the sanitised key, e.g. `tag_team_name`. */
  readonly labelName: string;
}

export const TAG_LABEL_PREFIX = 'tag_';

/** Problem with one `tag_labels` entry, or undefined. */
export function tagLabelProblem(key: string): string | undefined {
  const quoted = JSON.stringify(key);
  if (key.trim() === '') return 'must not be empty';
  if (key.includes(':')) return `tag key ${quoted} contains ":"; give only the key part of "key:value" tags`;
  if (/[\s,]/.test(key)) return `tag key ${quoted} contains whitespace or a comma`;
  if (!/[A-Za-z0-9]/.test(key)) return `tag key ${quoted} has no letter or digit, so it gives no usable label name`;
  return undefined;
}

export function tagLabel(tagKey: string): TagLabel {
  return { tagKey, labelName: prefixedLabelName(TAG_LABEL_PREFIX, tagKey) };
}

export interface MetricOverride {
  readonly kind?: MetricKind;
  readonly unit?: SourceUnit;
  /** Family stem: the metric is `monapi_<family>` plus the unit word plus `_total` for deltas. */
  readonly family?: string;
  /** Labels that set the metric apart within its family (needs `family`). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Label for the part after `|` of per-device names (`<name>|sda`). */
  readonly deviceLabel?: string;
}

const FAMILY_STEM = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Set by the series mapping or the exposition format: an override's labels may not use them. */
const SERIES_OWN_LABELS = new Set(['account', 'host_uuid', 'quantile', 'le']);

function labelNameProblem(name: string): string | undefined {
  const quoted = JSON.stringify(name);
  if (!LABEL_NAME.test(name) || name.startsWith('__')) return `label name ${quoted} must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __`;
  if (SERIES_OWN_LABELS.has(name)) return `label name ${quoted} is set by the exporter itself`;
  if (isDiscouragedLabelName(name)) return `label name ${quoted} clashes with target or relabelling labels (job, instance, region, env, cluster, type); choose another`;
  return undefined;
}

/** Problems with the naming keys of one `metric_overrides` entry, each under its YAML key. */
export function overrideProblems(override: Pick<MetricOverride, 'family' | 'labels' | 'deviceLabel'>): { key: string; message: string }[] {
  const problems: { key: string; message: string }[] = [];
  const { family, labels, deviceLabel } = override;
  if (family !== undefined) {
    const quoted = JSON.stringify(family);
    if (family.startsWith('monapi_')) problems.push({ key: 'family', message: `family ${quoted} must be given without the monapi_ prefix, which is added` });
    else if (!FAMILY_STEM.test(family)) problems.push({ key: 'family', message: `family ${quoted} must match [a-zA-Z_][a-zA-Z0-9_]*` });
    else if (family.endsWith('_total')) problems.push({ key: 'family', message: `family ${quoted} must not end in _total: it is added to deltas` });
  }
  if (labels !== undefined) {
    if (family === undefined) problems.push({ key: 'labels', message: 'labels need a family: they tell the metric apart from the other members of its family' });
    for (const [name, value] of Object.entries(labels)) {
      const problem = labelNameProblem(name) ?? (value === '' ? `label ${name} has an empty value, which Prometheus treats as no label` : undefined);
      if (problem !== undefined) problems.push({ key: 'labels', message: problem });
    }
  }
  if (deviceLabel !== undefined) {
    const problem = labelNameProblem(deviceLabel) ?? (labels !== undefined && deviceLabel in labels ? `device_label ${deviceLabel} is also in labels` : undefined);
    if (problem !== undefined) problems.push({ key: 'device_label', message: problem });
  }
  return problems;
}

export interface SelectedMetric {
  readonly name: string;
  readonly kind: MetricKind;
  readonly unit: SourceUnit;
  /** The catalogue entry, when the name is in the catalogue (absent for override-only names). */
  readonly catalogue: CatalogueEntry | undefined;
}

/**
 * The metric names an account asks for, with kind and unit after overrides: every name
 * of the catalogue and of `metric_overrides` that passes `metrics.include`/`exclude`.
 * Sources intersect this with what a host reports before fetching, so filtered-out
 * names cost no requests.
 */
export function selectMetrics(account: {
  readonly metrics: IncludeExclude;
  readonly metricOverrides: Readonly<Record<string, MetricOverride>>;
}): SelectedMetric[] {
  const selected = createNameFilter(account.metrics);
  const names = new Set([...METRIC_CATALOGUE.map((entry) => entry.name), ...Object.keys(account.metricOverrides)]);
  const result: SelectedMetric[] = [];
  for (const name of names) {
    if (!selected(name)) continue;
    const entry = catalogueEntry(name);
    const override = account.metricOverrides[name];
    const kind = override?.kind ?? entry?.kind;
    const unit = override?.unit ?? entry?.unit;
    // Validation guarantees override-only names carry both kind and unit.
    if (kind === undefined || unit === undefined) continue;
    result.push({ name, kind, unit, catalogue: entry });
  }
  return result.sort((a, b) => a.name.localeCompare(b.name));
}
