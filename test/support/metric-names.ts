import { readFileSync } from 'node:fs';

/**
 * The metric families the exporter documents (docs/metrics.md, generated from the code),
 * so that dashboards and rules can be checked to use only names that exist. Process and
 * Node.js metrics (monapi_exporter_process_*, monapi_exporter_nodejs_*) come from
 * prom-client's default collectors and are not in the document.
 */

const doc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
const DOCUMENTED = new Set([...doc.matchAll(/^\| (monapi_[a-z0-9_]+) \|/gm)].map((m) => m[1]!));
const DEFAULT_COLLECTORS = /^monapi_exporter_(process|nodejs)_/;

/** Every monapi_* name in a PromQL text that is not a documented family (histogram and summary series map to their family). */
export function undocumentedMetrics(promql: string): string[] {
  const names = new Set([...promql.matchAll(/\bmonapi_[a-z0-9_]+/g)].map((m) => m[0]));
  return [...names].filter((name) => {
    if (DOCUMENTED.has(name) || DEFAULT_COLLECTORS.test(name)) return false;
    const family = name.replace(/_(bucket|sum|count)$/, '');
    return !DOCUMENTED.has(family);
  });
}
