import { processRedactor } from '../lib/redact.js';

/** One problem in a configuration: where (a YAML path such as `accounts[0].cadence`) and what. */
export interface ConfigIssue {
  /** `accounts[1].base_url`, `releases.projects[0].major`; `(root)` for the document itself. */
  readonly path: string;
  readonly message: string;
  /** 1-based position of the offending node in the YAML text, when known. */
  readonly line?: number;
  readonly column?: number;
}

/**
 * Every problem found in a configuration, all at once. The message lists them, one per
 * line, so a failed start or `--config.check` shows the whole list. Never holds a secret:
 * whatever an issue quotes (a key pasted into `headroom:` is quoted back as the wrong type),
 * every secret the configuration points at is scrubbed from it, in any form (the loader
 * teaches the process's redactor those secrets before it checks anything).
 */
export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];
  readonly source: string;

  constructor(source: string, given: readonly ConfigIssue[]) {
    const issues = given.map((issue) => ({ ...issue, path: processRedactor.scrub(issue.path), message: processRedactor.scrub(issue.message) }));
    const lines = issues.map((issue) => `  - ${formatIssue(issue)}`);
    const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
    super(`invalid configuration ${processRedactor.scrub(source)}: ${count}\n${lines.join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
    this.source = source;
  }
}

export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line === undefined ? '' : ` (line ${issue.line}${issue.column === undefined ? '' : `, column ${issue.column}`})`;
  return `${issue.path}: ${issue.message}${where}`;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `['accounts', 0, 'metric_overrides', 'system.cpu.user']` → `accounts[0].metric_overrides["system.cpu.user"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (typeof segment === 'string' && IDENTIFIER.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text === '' ? '(root)' : text;
}

/** The closest known key within a small edit distance, for "did you mean" hints. */
export function closestKey(unknown: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(unknown.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const allowed = Math.max(1, Math.floor(unknown.length / 3));
  return bestDistance <= allowed ? best : undefined;
}

/** Damerau-Levenshtein (optimal string alignment): a swap of two letters costs 1. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => d[i]?.[j] ?? Infinity;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, at(i - 2, j - 2) + 1);
      const row = d[i];
      if (row) row[j] = value;
    }
  }
  return at(a.length, b.length);
}
