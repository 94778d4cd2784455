import { ExpositionError, escapeHelpText, renderSampleLines, validateFamily } from './format.js';
import type { FamilySamples, FamilySpec } from './model.js';

export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** `# HELP` and `# TYPE` lines of a family in Prometheus text 0.0.4 (info is a gauge there). */
export function textFamilyHeader(spec: FamilySpec): string {
  const type = spec.type === 'info' ? 'gauge' : spec.type;
  const help = spec.help === '' ? '' : `# HELP ${spec.name} ${escapeHelpText(spec.help)}\n`;
  return `${help}# TYPE ${spec.name} ${type}\n`;
}

/**
 * A whole Prometheus text 0.0.4 document. Throws `ExpositionError` on an invalid family or
 * a family name given twice, rather than emit text a scraper rejects.
 */
export function renderText(families: readonly FamilySamples[]): string {
  const seen = new Set<string>();
  let out = '';
  for (const family of families) {
    const problem = validateFamily(family);
    if (problem) throw new ExpositionError(problem);
    if (seen.has(family.spec.name)) throw new ExpositionError(`metric family ${family.spec.name} appears twice`);
    seen.add(family.spec.name);
    out += textFamilyHeader(family.spec) + renderSampleLines(family);
  }
  return out;
}
