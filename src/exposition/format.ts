import type { FamilySamples, FamilySpec, HistogramSample, Labels, ScalarSample, SummarySample } from './model.js';

/**
 * The pieces both exposition formats share: name rules, escaping, number formatting and
 * sample lines. Sample lines are byte-identical in Prometheus text 0.0.4 and OpenMetrics
 * 1.0.0 (counters keep `_total`, info samples keep `_info`), so the store renders them
 * once and only the family headers differ per format.
 */

const METRIC_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const UNIT = /^[a-zA-Z0-9_]+$/;
const NEEDS_LABEL_ESCAPE = /[\\"\n]/;

export function isValidMetricName(name: string): boolean {
  return METRIC_NAME.test(name);
}

/** Label names starting with `__` are reserved for Prometheus itself. */
export function isValidLabelName(name: string): boolean {
  return LABEL_NAME.test(name) && !name.startsWith('__');
}

export function escapeLabelValue(value: string): string {
  if (!NEEDS_LABEL_ESCAPE.test(value)) return value;
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** HELP text in Prometheus text 0.0.4: only backslash and line feed are escaped. */
export function escapeHelpText(help: string): string {
  return help.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/** HELP text in OpenMetrics: an escaped string, so the double quote is escaped too. */
export function escapeHelpOpenMetrics(help: string): string {
  return help.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/**
 * `NaN`, `+Inf`, `-Inf`; otherwise JavaScript's shortest round-trip form, which writes
 * integers below 1e21 without an exponent and parses back to the same float in Go.
 */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/**
 * `a="x",b="y"` in the order the source gave, without braces. Built with `join`, which
 * yields a flat string: the store keeps these as series keys, and a string grown with `+=`
 * would be a rope several times its length in memory.
 */
export function renderLabelPairs(labels: Labels): string {
  const parts: string[] = [];
  for (const name in labels) parts.push(`${name}="${escapeLabelValue(labels[name] ?? '')}"`);
  return parts.join(',');
}

/**
 * Identity of a series within a family: its label pairs in name order, so equal label
 * sets given in a different order get the same key. `pairs` (the rendered pairs in the
 * given order) is reused when the names are already sorted, the common case.
 */
export function seriesKey(labels: Labels, pairs?: string): string {
  const names = Object.keys(labels);
  let sorted = true;
  for (let i = 1; i < names.length; i++) {
    if ((names[i - 1] as string) > (names[i] as string)) {
      sorted = false;
      break;
    }
  }
  if (sorted) return pairs ?? renderLabelPairs(labels);
  names.sort();
  const ordered: Record<string, string> = {};
  for (const name of names) ordered[name] = labels[name] ?? '';
  return renderLabelPairs(ordered);
}

function braces(pairs: string): string {
  return pairs === '' ? '' : `{${pairs}}`;
}

function withLe(pairs: string, le: string): string {
  return pairs === '' ? `{le="${le}"}` : `{${pairs},le="${le}"}`;
}

export type LineFormat = 'text' | 'openmetrics';

export function renderScalarLine(
  spec: FamilySpec,
  sample: ScalarSample,
  pairs = renderLabelPairs(sample.labels),
  format: LineFormat = 'text',
): string {
  const value = spec.type === 'info' ? '1' : formatValue(sample.value);
  return `${spec.name}${braces(pairs)} ${value}${timestampSuffix(sample.timestampMs, format)}\n`;
}

/** Text 0.0.4 writes milliseconds as an integer; OpenMetrics writes seconds. */
function timestampSuffix(timestampMs: number | undefined, format: LineFormat): string {
  if (timestampMs === undefined || !Number.isFinite(timestampMs)) return '';
  return format === 'text' ? ` ${Math.round(timestampMs)}` : ` ${formatValue(timestampMs / 1000)}`;
}

export function renderHistogramLines(name: string, sample: HistogramSample, pairs = renderLabelPairs(sample.labels)): string {
  let out = '';
  for (const [bound, count] of sample.buckets) {
    out += `${name}_bucket${withLe(pairs, formatValue(bound))} ${formatValue(count)}\n`;
  }
  out += `${name}_bucket${withLe(pairs, '+Inf')} ${formatValue(sample.count)}\n`;
  out += `${name}_sum${braces(pairs)} ${formatValue(sample.sum)}\n`;
  out += `${name}_count${braces(pairs)} ${formatValue(sample.count)}\n`;
  return out;
}

function withQuantile(pairs: string, quantile: string): string {
  return pairs === '' ? `{quantile="${quantile}"}` : `{${pairs},quantile="${quantile}"}`;
}

export function renderSummaryLines(name: string, sample: SummarySample, pairs = renderLabelPairs(sample.labels)): string {
  let out = '';
  for (const [quantile, value] of sample.quantiles) {
    out += `${name}${withQuantile(pairs, formatValue(quantile))} ${formatValue(value)}\n`;
  }
  out += `${name}_sum${braces(pairs)} ${formatValue(sample.sum)}\n`;
  out += `${name}_count${braces(pairs)} ${formatValue(sample.count)}\n`;
  return out;
}

/** Sample lines of a whole family, without HELP/TYPE. Assumes `validateFamily` passed. */
export function renderSampleLines(family: FamilySamples, format: LineFormat = 'text'): string {
  let out = '';
  if (family.spec.type === 'histogram') {
    for (const sample of family.samples as readonly HistogramSample[]) out += renderHistogramLines(family.spec.name, sample);
  } else if (family.spec.type === 'summary') {
    for (const sample of family.samples as readonly SummarySample[]) out += renderSummaryLines(family.spec.name, sample);
  } else {
    for (const sample of family.samples as readonly ScalarSample[]) out += renderScalarLine(family.spec, sample, undefined, format);
  }
  return out;
}

/**
 * The family name OpenMetrics uses in HELP/TYPE/UNIT: counters without `_total`, info
 * metrics without `_info`.
 */
export function openMetricsFamilyName(spec: FamilySpec): string {
  if (spec.type === 'counter' && spec.name.endsWith('_total')) return spec.name.slice(0, -'_total'.length);
  if (spec.type === 'info' && spec.name.endsWith('_info')) return spec.name.slice(0, -'_info'.length);
  return spec.name;
}

/** Why a family spec cannot be exposed, or undefined when it can. */
export function validateSpec(spec: FamilySpec): string | undefined {
  if (typeof spec.name !== 'string' || !isValidMetricName(spec.name)) {
    return `invalid metric name ${JSON.stringify(spec.name)}: must match [a-zA-Z_][a-zA-Z0-9_]*`;
  }
  if (typeof spec.help !== 'string') return `metric ${spec.name}: help must be a string`;
  switch (spec.type) {
    case 'counter':
      if (!spec.name.endsWith('_total') || spec.name === '_total') {
        return `counter ${spec.name}: name must end with _total`;
      }
      break;
    case 'info':
      if (!spec.name.endsWith('_info') || spec.name === '_info') return `info metric ${spec.name}: name must end with _info`;
      break;
    case 'gauge':
    case 'histogram':
    case 'summary':
      break;
    default:
      return `metric ${spec.name}: unknown type ${JSON.stringify(spec.type)}`;
  }
  if (spec.unit !== undefined) {
    if (!UNIT.test(spec.unit)) return `metric ${spec.name}: invalid unit ${JSON.stringify(spec.unit)}`;
    if (!openMetricsFamilyName(spec).endsWith(`_${spec.unit}`)) {
      return `metric ${spec.name}: family name must end with _${spec.unit} to carry unit ${spec.unit}`;
    }
  }
  return undefined;
}

function validateLabels(spec: FamilySpec, labels: Labels): string | undefined {
  for (const name in labels) {
    if (!isValidLabelName(name)) {
      return `metric ${spec.name}: invalid label name ${JSON.stringify(name)}: must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __`;
    }
    if (typeof labels[name] !== 'string') return `metric ${spec.name}: label ${name} has a non-string value`;
    if (spec.type === 'histogram' && name === 'le') return `histogram ${spec.name}: label name le is reserved for buckets`;
    if (spec.type === 'summary' && name === 'quantile') return `summary ${spec.name}: label name quantile is reserved for quantiles`;
  }
  return undefined;
}

function validateHistogram(name: string, sample: HistogramSample): string | undefined {
  let previousBound = -Infinity;
  let previousCount = 0;
  for (const [bound, count] of sample.buckets) {
    if (Number.isNaN(bound) || bound === Infinity) {
      return `histogram ${name}: bucket bound ${bound} is not allowed (the renderer adds +Inf)`;
    }
    if (bound <= previousBound) return `histogram ${name}: bucket bounds must be strictly ascending`;
    if (!(count >= previousCount)) return `histogram ${name}: bucket counts must be cumulative (non-decreasing)`;
    previousBound = bound;
    previousCount = count;
  }
  if (!(sample.count >= previousCount)) return `histogram ${name}: count is below the last bucket's count`;
  return undefined;
}

function validateSummary(name: string, sample: SummarySample): string | undefined {
  let previous = -Infinity;
  for (const [quantile, value] of sample.quantiles) {
    if (!(quantile >= 0 && quantile <= 1)) return `summary ${name}: quantile ${quantile} is outside 0-1`;
    if (quantile <= previous) return `summary ${name}: quantiles must be strictly ascending`;
    if (typeof value !== 'number') return `summary ${name}: quantile value is not a number`;
    previous = quantile;
  }
  if (!(sample.count >= 0)) return `summary ${name}: count must be a number >= 0`;
  if (typeof sample.sum !== 'number') return `summary ${name}: sum is not a number`;
  return undefined;
}

/** Why a family cannot be exposed, or undefined when every name and sample is valid. */
export function validateFamily(family: FamilySamples): string | undefined {
  const specProblem = validateSpec(family.spec);
  if (specProblem) return specProblem;
  if (family.spec.type === 'histogram') {
    for (const sample of family.samples as readonly HistogramSample[]) {
      const problem = validateLabels(family.spec, sample.labels) ?? validateHistogram(family.spec.name, sample);
      if (problem) return problem;
    }
  } else if (family.spec.type === 'summary') {
    for (const sample of family.samples as readonly SummarySample[]) {
      const problem = validateLabels(family.spec, sample.labels) ?? validateSummary(family.spec.name, sample);
      if (problem) return problem;
    }
  } else {
    for (const sample of family.samples as readonly ScalarSample[]) {
      const problem = validateLabels(family.spec, sample.labels);
      if (problem) return problem;
      if (typeof sample.value !== 'number') return `metric ${family.spec.name}: sample value is not a number`;
    }
  }
  return undefined;
}

export class ExpositionError extends Error {
  override readonly name = 'ExpositionError';
}
