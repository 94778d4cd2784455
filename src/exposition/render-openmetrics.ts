import { ExpositionError, escapeHelpOpenMetrics, openMetricsFamilyName, renderSampleLines, validateFamily } from './format.js';
import type { FamilySamples, FamilySpec } from './model.js';

export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
export const OPENMETRICS_EOF = '# EOF\n';

/**
 * `# HELP`, `# TYPE` and `# UNIT` lines in OpenMetrics 1.0.0, under the family name
 * (counters without `_total`, info without `_info`). Sample lines are the same as in the
 * text format, so only this header differs.
 */
export function openMetricsFamilyHeader(spec: FamilySpec): string {
  const family = openMetricsFamilyName(spec);
  const help = spec.help === '' ? '' : `# HELP ${family} ${escapeHelpOpenMetrics(spec.help)}\n`;
  const unit = spec.unit === undefined ? '' : `# UNIT ${family} ${spec.unit}\n`;
  return `${help}# TYPE ${family} ${spec.type}\n${unit}`;
}

export interface OpenMetricsRenderOptions {
  /** Append `# EOF`. Off when the result is a part that something else completes. */
  readonly eof?: boolean;
}

/**
 * A whole OpenMetrics 1.0.0 document (with `# EOF` unless `eof: false`). Throws
 * `ExpositionError` on an invalid family or a family name given twice.
 */
export function renderOpenMetrics(families: readonly FamilySamples[], options: OpenMetricsRenderOptions = {}): string {
  const seen = new Set<string>();
  let out = '';
  for (const family of families) {
    const problem = validateFamily(family);
    if (problem) throw new ExpositionError(problem);
    const name = openMetricsFamilyName(family.spec);
    if (seen.has(name)) throw new ExpositionError(`metric family ${name} appears twice`);
    seen.add(name);
    out += openMetricsFamilyHeader(family.spec) + renderSampleLines(family, 'openmetrics');
  }
  return options.eof === false ? out : out + OPENMETRICS_EOF;
}
