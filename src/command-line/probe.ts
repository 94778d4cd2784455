import pino from 'pino';
import { parseDuration } from '../config/duration.js';
import { probeAccounts, type AccountProbe, type SourceProbe } from '../exporter/probe.js';
import { createLogger } from '../lib/logger.js';
import { processRedactor } from '../lib/redact.js';
import { SOURCES } from '../sources/index.js';
import { LIST_PATH_KEY, NEXT_PAGE_KEY, type ListReport } from '../upstream/fields/resolve.js';
import { keyWords } from '../upstream/fields/words.js';
import { FlagError, parseFlags, type Flags } from './flags.js';
import { stderr, stdout } from './output.js';
import { configOrExplain } from './serve.js';

/**
 * `monapi-exporter probe --config.file ...`: asks each endpoint of every enabled source once
 * (one target each, through the account's request budget) and prints, per source, the fields
 * it found (path, unit, a sample value), the ones it could not find, the lists and their
 * length and pages (and why one is short), and a `fields:` block to paste for what it could
 * not place. Exit codes: 0 every source answered, no field is missing and no list is short,
 * 1 invalid configuration, 2 bad flags, 3 a source failed, a field is missing or a list is short.
 */

const PROBE_FLAGS = {
  'probe.timeout': 'How long the probe may take per account (default 2m).',
  'probe.account': 'Probe only this account (repeatable; default: every account).',
  'probe.format': 'text (default) or json.',
} as const;

export const PROBE_HELP = [
  'Usage: monapi-exporter probe --config.file=<file> [flags]',
  '',
  'Asks each endpoint of every enabled source once and says what it found in the answers:',
  'the fields found (path, unit, sample), the fields missing, the lists and their length,',
  'and a fields: block to paste into the configuration for what it could not place.',
  '',
  'Probe flags:',
  ...Object.entries(PROBE_FLAGS).flatMap(([name, help]) => [`  --${name}=<value>`, `      ${help}`]),
  '',
  'Also: --config.file, --log.level (default warn here), --log.format, --shard, --total-shards, --shard.pod-name.',
  'Exit codes: 0 all answered and nothing missing, 1 invalid configuration, 2 bad flags, 3 a source failed, a field is missing or a list is short.',
].join('\n');

interface ProbeFlags {
  readonly timeoutMs: number;
  readonly accounts: string[] | undefined;
  readonly format: 'text' | 'json';
  readonly rest: string[];
}

/** Takes the probe's own flags out of the command line; the rest are the exporter's. */
export function parseProbeFlags(argv: readonly string[]): ProbeFlags {
  let timeoutMs = 120_000;
  const accounts: string[] = [];
  let format: 'text' | 'json' = 'text';
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const match = /^--(probe\.[a-z]+)(?:=(.*))?$/.exec(arg);
    if (!match) {
      rest.push(arg);
      continue;
    }
    const [, name = '', inline] = match;
    if (!(name in PROBE_FLAGS)) throw new FlagError(`unknown flag --${name} (probe flags: ${Object.keys(PROBE_FLAGS).map((f) => `--${f}`).join(', ')})`);
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') throw new FlagError(`--${name} needs a value`);
    if (name === 'probe.timeout') {
      const parsed = parseDuration(value);
      if ('error' in parsed) throw new FlagError(`--probe.timeout: ${parsed.error}`);
      if (parsed.ms < 1_000) throw new FlagError('--probe.timeout must be at least 1s');
      timeoutMs = parsed.ms;
    } else if (name === 'probe.account') {
      accounts.push(value);
    } else if (value === 'text' || value === 'json') {
      format = value;
    } else {
      throw new FlagError(`--probe.format must be text or json (got ${JSON.stringify(value)})`);
    }
  }
  return { timeoutMs, accounts: accounts.length > 0 ? accounts : undefined, format, rest };
}

export async function probe(argv: readonly string[]): Promise<number> {
  let own: ProbeFlags;
  let flags: Flags;
  try {
    own = parseProbeFlags(argv);
    const parsed = parseFlags(own.rest.some((a) => a.startsWith('--log.level')) ? own.rest : [...own.rest, '--log.level=warn'], process.env);
    if ('help' in parsed) {
      stdout(`${PROBE_HELP}\n`);
      return 0;
    }
    if ('version' in parsed) {
      stdout(`${parsed.version}\n`);
      return 0;
    }
    flags = parsed;
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    stderr(`monapi-exporter probe: ${err.message}\nRun monapi-exporter probe --help for the flags.\n`);
    return 2;
  }
  const config = configOrExplain(flags.configFile, flags.shard);
  if (config === undefined) return 1;
  const unknown = (own.accounts ?? []).filter((name) => !config.accounts.some((a) => a.name === name));
  if (unknown.length > 0) {
    stderr(`monapi-exporter probe: --probe.account names no account of ${flags.configFile}: ${unknown.join(', ')} (accounts: ${config.accounts.map((a) => a.name).join(', ')})\n`);
    return 2;
  }
  // Logs go to stderr, so stdout is the report alone.
  const log = createLogger({ level: flags.logLevel, format: flags.logFormat, destination: pino.destination({ dest: 2, sync: true }) });
  const probes = await probeAccounts(config, { log, shard: flags.shard, timeoutMs: own.timeoutMs, accounts: own.accounts });
  // Scrubbed string by string before JSON escapes them (stdout scrubs the whole text once more).
  stdout(own.format === 'json' ? `${JSON.stringify(processRedactor.scrubValue(probes), null, 2)}\n` : renderProbes(probes));
  const clean = probes.every((p) => !p.timedOut && p.sources.every((s) => s.health?.up !== false && s.fields.every((f) => !f.missing) && !shortLists(s)));
  return clean ? 0 : 3;
}

/** Scrubbed, then cut: a key an upstream echoed must not be left in part at the cut. */
const clip = (raw: string, length: number) => {
  const text = processRedactor.scrub(raw);
  return text.length > length ? `${text.slice(0, length - 3)}...` : text;
};

/** The report as text: per account, per source, what was found and what was not. */
export function renderProbes(probes: readonly AccountProbe[]): string {
  const lines: string[] = [];
  const pastes: string[] = [];
  for (const account of probes) {
    lines.push(`account ${account.account}${account.timedOut ? ' (the probe timed out: sources marked "did not run" were not reached)' : ''}`);
    for (const source of account.sources) lines.push(...sourceLines(source));
    const block = pasteBlock(account);
    if (block.length > 0) pastes.push(`  - name: ${account.account}`, '    fields:', ...block);
    lines.push('');
  }
  if (pastes.length > 0) {
    lines.push(
      'Fields and lists the probe could not place, or placed by a choice worth fixing. Paste this',
      'into the accounts of the configuration, check each path against the answer (the guesses are',
      'paths no field took that share a word with the field), and run the probe again:',
      '',
      'accounts:',
      ...pastes,
      '',
    );
  } else {
    lines.push('Every declared field was found.', '');
  }
  return `${lines.join('\n')}\n`;
}

function sourceLines(source: SourceProbe): string[] {
  const health = source.health;
  const state =
    health === undefined || health.reason === 'pending'
      ? 'did not run (no target: nothing to poll, or what it polls was not found)'
      : health.up
        ? 'ok'
        : `failing (${health.reason}): ${clip(health.lastError?.message ?? '', 300)}`;
  const lines = [`  ${source.source}: ${state}`];
  for (const answer of source.answers) {
    const list = answer.report.list;
    lines.push(`    ${answer.target}${list === undefined ? '' : `: ${listLine(list)}`}`);
    if (list?.how !== undefined) lines.push(`      list ${list.how}`);
    if (list?.incomplete !== undefined) lines.push(`      INCOMPLETE: ${list.incomplete}; what was read is exported and monapi_list_incomplete says so`);
  }
  if (source.fields.length === 0 && source.answers.length === 0 && health?.reason !== 'pending') {
    lines.push(source.declaresFields ? '    (asked nothing this pass: none of its targets needed a request)' : '    (declares no fields: read by fixed names)');
  }
  const width = Math.max(0, ...source.fields.map((f) => f.field.length));
  for (const field of source.fields) {
    if (field.missing) {
      lines.push(`    missing  ${field.field.padEnd(width)}  ${field.about}`);
    } else if (field.found !== undefined) {
      const where = `${field.found.path}${field.found.configured ? ' (configured)' : ''}`;
      lines.push(`    found    ${field.field.padEnd(width)}  ${where}  = ${clip(field.found.sample, 40)}${field.found.unit === undefined ? '' : `  [${field.found.unit}]`}`);
    } else {
      lines.push(`    found    ${field.field.padEnd(width)}  (in another form)`);
    }
  }
  return lines;
}

/** `a list of 14 at _embedded.websites, over 5 pages (_links.next), 14 announced`. */
function listLine(list: ListReport): string {
  const pages = list.pages === undefined ? '' : `, over ${list.pages} pages${list.via === undefined ? '' : ` (${list.via})`}`;
  return `a list of ${list.length} at ${list.path}${pages}${list.announced === undefined ? '' : `, ${list.announced} announced`}`;
}

/** Whether a source read a list short in this pass. */
export function shortLists(source: SourceProbe): boolean {
  return source.answers.some((a) => a.report.list?.incomplete !== undefined);
}

/**
 * Where a source's list and its next page are, as `fields:` lines, when placing them would
 * help: a list read short, a list chosen among several, or fields missing from its items.
 */
function listPlacement(source: SourceProbe, missing: boolean): string[] {
  const list = source.answers.map((a) => a.report.list).find((l) => l !== undefined);
  if (list === undefined || !SOURCES.some((s) => s.name === source.source && s.readsList === true)) return [];
  if (!missing && list.how === undefined && list.incomplete === undefined) return [];
  const lines: string[] = [];
  if (source.configuredPaths[LIST_PATH_KEY] === undefined) lines.push(`        ${LIST_PATH_KEY}: ${list.path === '(the body)' ? '.' : list.path}   # where the list is${list.how === undefined ? '' : ` (${list.how})`}`);
  if (list.via !== undefined && list.via !== 'Link header' && !list.via.endsWith('(configured)') && !list.via.includes(' ')) lines.push(`        ${NEXT_PAGE_KEY}: ${list.via}   # the next page's link, cursor or number`);
  else if (list.incomplete !== undefined && list.via === undefined) lines.push(`        # ${NEXT_PAGE_KEY}: <path>   # the next page's link, cursor or number: the answer says there is more (${list.incomplete})`);
  return lines;
}

/** `fields:` lines for the missing fields of an account, each with a guessed path when one fits. */
function pasteBlock(account: AccountProbe): string[] {
  const lines: string[] = [];
  for (const source of account.sources) {
    const missing = source.fields.filter((f) => f.missing);
    const placement = listPlacement(source, missing.length > 0);
    if (missing.length === 0 && placement.length === 0) continue;
    const decls = SOURCES.find((s) => s.name === source.source)?.fields ?? {};
    const taken = new Set(source.fields.flatMap((f) => (f.found === undefined ? [] : [f.found.path])));
    const paths = [...new Set(source.answers.flatMap((a) => a.report.paths))].filter((p) => !taken.has(p));
    lines.push(`      ${source.source}:`, ...placement);
    for (const field of missing) {
      const decl = (decls as Readonly<Record<string, { readonly kind?: string; readonly words?: readonly (readonly string[])[] }>>)[field.field];
      const leaf = bestPath(decl?.words ?? [], paths);
      // A rate is read from the object holding its count and period (`{count: 7200, window: "1h"}`).
      const guess = decl?.kind === 'rate' && leaf?.includes('.') ? leaf.slice(0, leaf.lastIndexOf('.')) : leaf;
      lines.push(guess === undefined ? `        # ${field.field}: <path>   # ${field.about}; no path of the answer looks like it` : `        ${field.field}: ${guess}   # a guess: ${field.about}`);
    }
  }
  return lines;
}

/** The path sharing the most words with one of the field's word sets; undefined when none shares any. */
function bestPath(wordSets: readonly (readonly string[])[], paths: readonly string[]): string | undefined {
  let best: { path: string; score: number } | undefined;
  for (const path of paths) {
    const words = new Set(path.split('.').flatMap((key) => keyWords(key)));
    const score = Math.max(0, ...wordSets.map((set) => set.filter((w) => words.has(w)).length / set.length));
    if (score > 0 && (best === undefined || score > best.score)) best = { path, score };
  }
  return best?.path;
}
