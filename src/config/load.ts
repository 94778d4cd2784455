/**
 * YAML text → validated, defaulted `Config`, with every problem reported at once as a
 * `ConfigError` naming the YAML path (and line) of each. Three passes: YAML syntax, the
 * zod shape (`schema.ts`), then rules across fields and the reading of secrets.
 */
import { dirname, resolve as resolvePath } from 'node:path';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { resolveSoftwareRules } from '../sources/outdated/software.js';
import { globToRegExp } from '../sources/shared/glob.js';
import { METRIC_CATALOGUE, catalogueEntry } from '../upstream/monitoring/metric-catalogue.js';
import { analyseCron, CRON_TIMEZONE } from './cron.js';
import { formatDuration } from './duration.js';
import { closestKey, ConfigError, formatPath, type ConfigIssue } from './errors.js';
import { CONFIG_FILE_MAX_BYTES, describeFsError, InputFileError, KEY_FILE_MAX_BYTES, PEM_FILE_MAX_BYTES, readBoundedFile } from './input.js';
import { createNameFilter, overrideProblems, selectMetrics, tagLabel, type IncludeExclude, type MetricOverride } from './patterns.js';
import {
  describeValue,
  isUnknownKeyParams,
  issueMessage,
  OWNER_REPO,
  rawConfigSchema,
  unknownKeyMessage,
  type RawAccount,
  type RawConfig,
  type RawReleases,
} from './schema.js';
import { rememberSecretsOf } from './referenced-secrets.js';
import { Secret } from './secret.js';
import {
  DEFAULT_RELEASES_SCHEDULE,
  FREE_ENDPOINT_CACHE_MS,
  MARKETPLACE_MIN_GAP_MS,
  METRIC_PREFIX,
  type AccountConfig,
  type Config,
  type HttpConfig,
  type OutdatedConfig,
  type ReleasesConfig,
  type SecretSource,
} from './types.js';

export type ReadFile = (path: string) => string;

export interface ParseConfigOptions {
  /** Where `api_key_env` and `marketplace_key_env` are looked up. Default: `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Reads key files. Default: `fs.readFileSync(path, 'utf8')`. */
  readonly readFile?: ReadFile;
  /** Relative key file paths are resolved against this. Default: the working directory. */
  readonly baseDir?: string;
  /** Names the config in error messages, e.g. its file path. */
  readonly source?: string;
}

const readConfigFile: ReadFile = (path) => readBoundedFile(path, CONFIG_FILE_MAX_BYTES, 'configuration file');
const readKeyFile: ReadFile = (path) => readBoundedFile(path, KEY_FILE_MAX_BYTES, 'key file');
const readPemFile: ReadFile = (path) => readBoundedFile(path, PEM_FILE_MAX_BYTES, 'CA file');

/** Most aliases a config may expand to: anchors share settings, an alias bomb is refused. */
export const MAX_ALIAS_COUNT = 1000;

type Path = readonly (string | number)[];

/**
 * Reads and validates a config file. Relative `api_key_file` paths are taken relative to
 * the config file's folder. Throws `ConfigError`.
 *
 * `loadConfig('/etc/monapi/monapi-exporter.yaml', process.env)`
 */
export function loadConfig(path: string, env: NodeJS.ProcessEnv, readFile?: ReadFile): Config {
  let text: string;
  try {
    text = (readFile ?? readConfigFile)(path);
  } catch (error) {
    const message = error instanceof InputFileError ? error.reason : `cannot read ${path}: ${describeFsError(error)}`;
    throw new ConfigError(path, [{ path: '(file)', message }]);
  }
  return parseConfig(text, { env, readFile: readFile ?? readKeyFile, baseDir: dirname(resolvePath(path)), source: path });
}

/** Validates config text; see `loadConfig`. Throws `ConfigError`. */
export function parseConfig(yamlText: string, options: ParseConfigOptions = {}): Config {
  const source = options.source ?? '(inline)';
  rememberSecretsOf(yamlText, { env: options.env ?? process.env, readFile: options.readFile ?? readKeyFile, baseDir: options.baseDir ?? process.cwd() });
  const lineCounter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter, merge: true, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      source,
      doc.errors.map((error) => {
        const position = lineCounter.linePos(error.pos[0]);
        const firstLine = error.message.split('\n')[0] ?? error.message;
        return { path: '(yaml)', message: `syntax error: ${firstLine.replace(/ at line \d+, column \d+:?$/, '')}`, line: position.line, column: position.col };
      }),
    );
  }

  const locator = new Locator(doc, lineCounter);
  keepMajorLinesAsWritten(doc);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // yaml's own words ("Excessive alias count indicates a resource exhaustion attack") name no limit.
    if (error instanceof ReferenceError && /alias/i.test(error.message)) {
      throw new ConfigError(source, [
        { path: '(yaml)', message: `aliases expand to more than ${MAX_ALIAS_COUNT} nodes (a guard against alias bombs); share settings with fewer aliases` },
      ]);
    }
    // Other failures of the conversion, e.g. "Merge sources must be maps or map aliases" for `<<: [""]`.
    throw new ConfigError(source, [{ path: '(yaml)', message: error instanceof Error ? error.message : String(error) }]);
  }
  if (data === null || data === undefined) {
    throw new ConfigError(source, [{ path: '(root)', message: 'the configuration is empty; it needs at least an accounts list' }]);
  }
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new ConfigError(source, [
      { path: '(root)', message: `must be a mapping with the keys exporter, accounts and releases (got ${describeValue(data)})`, ...locator.at([]) },
    ]);
  }

  const parsed = rawConfigSchema.safeParse(data, { error: issueMessage });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue): ConfigIssue => {
      const path = issue.path.filter((segment): segment is string | number => typeof segment !== 'symbol');
      if (issue.code === 'custom' && isUnknownKeyParams(issue.params)) {
        const key = String(path[path.length - 1]);
        return { path: formatPath(path.slice(0, -1)), message: unknownKeyMessage(key, issue.params, closestKey), ...locator.at(path, true) };
      }
      return { path: formatPath(path), message: issue.message, ...locator.at(path) };
    });
    throw new ConfigError(source, sortByLine(issues));
  }

  const checker = new Checker(locator, options.env ?? process.env, options.readFile ?? readKeyFile, options.readFile ?? readPemFile, options.baseDir ?? process.cwd());
  const config = checker.build(parsed.data);
  if (checker.issues.length > 0 || config === undefined) throw new ConfigError(source, sortByLine(checker.issues));
  return config;
}

/** For a pattern that matches nothing: the same pattern with its literal head corrected, e.g. `ngnix.*` → `nginx.*`. */
function suggestPattern(pattern: string, names: readonly string[]): string | undefined {
  const wildcard = pattern.search(/[*?]/);
  const head = wildcard < 0 ? pattern : pattern.slice(0, wildcard);
  if (head.length < 3) return undefined;
  const heads = [...new Set(names.map((name) => name.slice(0, head.length)))];
  const corrected = closestKey(head, heads);
  return corrected === undefined || corrected === head ? undefined : `${corrected}${pattern.slice(head.length)}`;
}

/**
 * `major: 1.20` is the line 1.20, but YAML reads it as the number 1.2 (the line 1.2): every
 * plain numeric `major` of a release project is taken as the text written.
 */
function keepMajorLinesAsWritten(doc: Document): void {
  const releases = doc.get('releases');
  const projects = isMap(releases) ? releases.get('projects') : undefined;
  if (!isSeq(projects)) return;
  for (const project of projects.items) {
    if (!isMap(project)) continue;
    const major = project.get('major', true);
    if (isScalar(major) && typeof major.value === 'number' && major.type === 'PLAIN' && major.source?.includes('.')) major.value = major.source;
  }
}

function sortByLine(issues: readonly ConfigIssue[]): ConfigIssue[] {
  return [...issues].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
}

/** Finds the line and column of a YAML path, falling back to the nearest node that exists. */
class Locator {
  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  at(path: Path, atKey = false): { line?: number; column?: number } {
    let node: unknown = this.doc.contents;
    let found: Node | undefined = isNode(node) ? node : undefined;
    for (const segment of path) {
      if (isAlias(node)) node = node.resolve(this.doc);
      if (isMap(node)) {
        const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(segment));
        if (pair === undefined) break;
        const keyNode = isNode(pair.key) ? pair.key : undefined;
        node = pair.value;
        found = atKey && segment === path[path.length - 1] ? keyNode : isNode(pair.value) ? pair.value : (keyNode ?? found);
      } else if (isSeq(node) && typeof segment === 'number') {
        node = node.items[segment];
        if (!isNode(node)) break;
        found = node;
      } else {
        break;
      }
    }
    const offset = found?.range?.[0];
    if (offset === undefined) return {};
    const { line, col } = this.lines.linePos(offset);
    return { line, column: col };
  }
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && 'range' in value;
}


const METRIC_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;
const KNOWN_METRIC_NAMES = METRIC_CATALOGUE.map((entry) => entry.name);

/** The rules across fields, and secrets; collects issues instead of stopping at the first. */
class Checker {
  readonly issues: ConfigIssue[] = [];

  constructor(
    private readonly locator: Locator,
    private readonly env: NodeJS.ProcessEnv,
    private readonly readFile: ReadFile,
    private readonly readPem: ReadFile,
    private readonly baseDir: string,
  ) {}

  /** The http section: timeouts checked against each other, the CA file read and checked. */
  private http(raw: RawAccount['http'], at: Path): HttpConfig {
    if (raw.deadline < raw.timeout) {
      this.report([...at, 'deadline'], `must be at least timeout (${formatDuration(raw.timeout)}): the deadline bounds the whole request, headers and body (got ${formatDuration(raw.deadline)})`);
    }
    let ca: string | undefined;
    let caFile: string | undefined;
    if (raw.ca_file !== undefined) {
      caFile = resolvePath(this.baseDir, raw.ca_file);
      try {
        ca = this.readPem(caFile);
        if (!ca.includes('-----BEGIN CERTIFICATE-----')) {
          this.report([...at, 'ca_file'], `${caFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
        }
      } catch (error) {
        const why = error instanceof InputFileError ? error.reason : describeFsError(error);
        this.report([...at, 'ca_file'], `cannot read the CA file ${caFile}: ${why}`);
      }
    }
    return {
      timeoutMs: raw.timeout,
      deadlineMs: raw.deadline,
      maxResponseBytes: raw.max_response_bytes,
      caFile,
      ca,
      insecureSkipVerify: raw.insecure_skip_verify,
    };
  }

  private report(path: Path, message: string, atKey = false): void {
    this.issues.push({ path: formatPath(path), message, ...this.locator.at(path, atKey) });
  }

  build(raw: RawConfig): Config | undefined {
    const accounts = raw.accounts.map((account, index) => this.account(account, index));
    this.crossAccountRules(raw.accounts, accounts);
    const releases = raw.releases === undefined ? undefined : this.releases(raw.releases);
    if (this.issues.length > 0) return undefined;
    return {
      exporter: {
        metricPrefix: METRIC_PREFIX,
        sampleTimestamps: raw.exporter.sample_timestamps,
        nullHandling: raw.exporter.null_handling,
        checkBuckets: {
          ttfb: raw.exporter.check_buckets.ttfb,
          dnsLookup: raw.exporter.check_buckets.dns_lookup,
          tlsHandshake: raw.exporter.check_buckets.tls_handshake,
        },
      },
      accounts: accounts.filter((account): account is AccountConfig => account !== undefined),
      releases,
    };
  }

  private account(raw: RawAccount, index: number): AccountConfig | undefined {
    const at = (...rest: (string | number)[]): Path => ['accounts', index, ...rest];
    const owner = `account ${JSON.stringify(raw.name)}`;
    const key = this.secret(at(), raw.api_key_env, raw.api_key_file, owner, ['api_key_env', 'api_key_file']);

    const budgetedBurst = Math.floor(raw.rate_limit.burst * (1 - raw.headroom));
    if (budgetedBurst < 1) {
      this.report(at('rate_limit', 'burst'), `a burst of ${raw.rate_limit.burst} minus headroom ${raw.headroom} leaves less than one request`);
    }

    const overrides: Record<string, MetricOverride> = {};
    for (const [name, override] of Object.entries(raw.metric_overrides)) {
      const path = at('metric_overrides', name);
      if (!METRIC_NAME.test(name)) {
        this.report(path, `metric name ${JSON.stringify(name)} must be dotted lowercase, such as system.cpu.user`, true);
        continue;
      }
      const { kind, unit, family, labels, device_label: deviceLabel } = override;
      if (kind === undefined && unit === undefined && family === undefined && labels === undefined && deviceLabel === undefined) {
        this.report(path, 'sets none of kind, unit, family, labels, device_label');
        continue;
      }
      if (catalogueEntry(name) === undefined && (kind === undefined || unit === undefined)) {
        this.report(path, `${JSON.stringify(name)} is not in the agent's metric catalogue, so both kind and unit are required`);
        continue;
      }
      const problems = overrideProblems({ family, labels, deviceLabel });
      for (const problem of problems) this.report([...path, problem.key], problem.message);
      if (problems.length > 0) continue;
      overrides[name] = {
        ...(kind && { kind }),
        ...(unit && { unit }),
        ...(family !== undefined && { family }),
        ...(labels !== undefined && { labels }),
        ...(deviceLabel !== undefined && { deviceLabel }),
      };
    }

    const knownNames = [...KNOWN_METRIC_NAMES, ...Object.keys(overrides)];
    let includeProblems = 0;
    raw.metrics.include.forEach((pattern, patternIndex) => {
      // Per-device names (`name|device`) are not in the catalogue: their dotted part must be.
      const bar = pattern.indexOf('|');
      const regexp = globToRegExp(bar < 0 ? pattern : pattern.slice(0, bar));
      if (!knownNames.some((name) => regexp.test(name))) {
        includeProblems++;
        const suggestion = suggestPattern(pattern, knownNames);
        const hint = suggestion === undefined ? '' : ` (did you mean ${JSON.stringify(suggestion)}?)`;
        this.report(at('metrics', 'include', patternIndex), `pattern ${JSON.stringify(pattern)} matches no metric in the catalogue or in metric_overrides${hint}`);
      }
    });
    const metrics = { include: raw.metrics.include, exclude: raw.metrics.exclude };
    if (includeProblems === 0 && raw.sources.series && selectMetrics({ metrics, metricOverrides: overrides }).length === 0 && !maySelectPerDeviceNames(metrics, knownNames)) {
      this.report(at('metrics'), 'include and exclude leave no metric selected; set sources.series: false to poll no series');
    }

    const labelsByName = new Map<string, string>();
    const tagLabels = raw.tag_labels.map((tagKey, labelIndex) => {
      const label = tagLabel(tagKey);
      const previous = labelsByName.get(label.labelName);
      if (previous !== undefined) {
        this.report(
          at('tag_labels', labelIndex),
          previous === tagKey
            ? `tag key ${JSON.stringify(tagKey)} is listed twice`
            : `tag keys ${JSON.stringify(previous)} and ${JSON.stringify(tagKey)} both become the label ${label.labelName}`,
        );
      }
      labelsByName.set(label.labelName, tagKey);
      return label;
    });

    const needs = (source: 'series' | 'components' | 'checks' | 'website_summary' | 'host_details', on: 'hosts' | 'websites', why: string) => {
      if (raw.sources[source] && !raw.sources[on]) this.report(at('sources', source), `needs sources.${on}: ${why}; turn ${source} off too, or turn ${on} on`);
    };
    needs('series', 'hosts', 'the host list says which hosts to fetch series for');
    needs('components', 'hosts', 'the host list says which hosts to fetch components for');
    needs('checks', 'websites', 'the website list says which websites to fetch checks for');
    needs('website_summary', 'websites', 'the website list says which websites to fetch summaries for');
    needs('host_details', 'hosts', 'the host list says which hosts lack details');

    const http = this.http(raw.http, at('http'));
    if (key === undefined) return undefined;
    const cadence = raw.cadence;
    return {
      name: raw.name,
      baseUrl: raw.base_url.replace(/\/+$/, ''),
      apiKey: key.secret,
      apiKeySource: key.source,
      authScheme: raw.auth_scheme,
      rateLimit: { requestsPerMinute: raw.rate_limit.requests_per_minute, burst: raw.rate_limit.burst },
      headroom: raw.headroom,
      concurrency: raw.concurrency,
      http,
      limits: {
        series: raw.limits.series,
        metricNameLength: raw.limits.metric_name_length,
        labelNameLength: raw.limits.label_name_length,
        labelValueLength: raw.limits.label_value_length,
      },
      hosts: {
        includeTags: raw.hosts.include_tags,
        excludeTags: raw.hosts.exclude_tags,
        includeNames: raw.hosts.include_names,
        excludeNames: raw.hosts.exclude_names,
      },
      metrics,
      tagLabels,
      cadenceMs: {
        hosts: cadence.hosts,
        websites: cadence.websites,
        account: cadence.account,
        alerts: cadence.alerts,
        alertRules: cadence.alert_rules,
        series: cadence.series,
        seriesOffline: cadence.series_offline,
        metricCatalogue: cadence.metric_catalogue,
        components: cadence.components,
        checks: cadence.checks,
        websiteSummary: cadence.website_summary,
        hostDetails: cadence.host_details,
      },
      ingestDelayMs: raw.ingest_delay,
      lateDataHorizonMs: raw.late_data_horizon,
      counterGraceMs: raw.counter_grace,
      metricOverrides: overrides,
      websites: { includeNames: raw.websites.include_names, excludeNames: raw.websites.exclude_names },
      sources: {
        hosts: raw.sources.hosts,
        hostDetails: raw.sources.host_details ?? raw.sources.hosts,
        series: raw.sources.series,
        components: raw.sources.components,
        websites: raw.sources.websites,
        websiteSummary: raw.sources.website_summary ?? raw.sources.websites,
        checks: raw.sources.checks,
        alerts: raw.sources.alerts,
        alertRules: raw.sources.alert_rules,
        account: raw.sources.account,
      },
    };
  }

  private crossAccountRules(raw: readonly RawAccount[], built: readonly (AccountConfig | undefined)[]): void {
    const firstByName = new Map<string, number>();
    raw.forEach((account, index) => {
      const first = firstByName.get(account.name);
      if (first !== undefined) this.report(['accounts', index, 'name'], `duplicate account name ${JSON.stringify(account.name)} (also accounts[${first}])`);
      else firstByName.set(account.name, index);
    });
    built.forEach((account, index) => {
      if (account === undefined) return;
      const first = built.findIndex((other) => other !== undefined && other.apiKey.equals(account.apiKey));
      if (first >= 0 && first < index) {
        this.report(
          ['accounts', index],
          `uses the same API key as accounts[${first}] (${JSON.stringify(built[first]?.name)}); the rate limit is per key, so two accounts with one key would overspend it: list the account once`,
        );
      }
    });
  }

  private releases(raw: RawReleases): ReleasesConfig | undefined {
    const at = (...rest: (string | number)[]): Path => ['releases', ...rest];

    const seen = new Map<string, number>();
    const projects = raw.projects.map((project, index) => {
      const identity = `${project.id}\u0000${project.major ?? ''}`;
      const first = seen.get(identity);
      if (first !== undefined) {
        const major = project.major === undefined ? 'without major' : `with major ${project.major}`;
        this.report(at('projects', index), `duplicate project ${JSON.stringify(project.id)} ${major} (also releases.projects[${first}])`);
      } else {
        seen.set(identity, index);
      }
      if (raw.mode === 'free' && !OWNER_REPO.test(project.id)) {
        this.report(
          at('projects', index, 'id'),
          `the free endpoint looks projects up as <owner>/<repository>; ${JSON.stringify(project.id)} needs mode: marketplace`,
        );
      }
      return { id: project.id, major: project.major };
    });

    const outdated = this.outdated(raw);
    if (projects.length === 0 && outdated === undefined) {
      this.report(at(), 'has nothing to look up: list projects, or leave outdated.enabled on so that installed components are checked');
    }

    const schedule = raw.schedule;
    const analysis = analyseCron(schedule);
    const gap = analysis.ok ? analysis.shortestGapMs : undefined;
    if (raw.mode === 'free' && !raw.allow_polling_faster_than_cache && gap !== undefined && gap < FREE_ENDPOINT_CACHE_MS) {
      this.report(
        at('schedule'),
        `${JSON.stringify(schedule)} runs as little as ${formatDuration(gap)} apart, but the free endpoint caches each answer for 2h, so faster polling only re-reads its cache; ` +
          `use a schedule with at least 2h between runs (the default is ${JSON.stringify(DEFAULT_RELEASES_SCHEDULE)}), or set allow_polling_faster_than_cache: true if you mean it`,
      );
    }
    if (raw.mode === 'marketplace' && gap !== undefined && gap < MARKETPLACE_MIN_GAP_MS) {
      this.report(
        at('schedule'),
        `${JSON.stringify(schedule)} runs as little as ${formatDuration(gap)} apart; the marketplace bills every request, so runs must be at least ${formatDuration(MARKETPLACE_MIN_GAP_MS)} apart`,
      );
    }

    const common = {
      http: this.http(raw.http, at('http')),
      schedule,
      scheduleTimezone: CRON_TIMEZONE,
      shortestScheduleGapMs: gap,
      allowPollingFasterThanCache: raw.allow_polling_faster_than_cache,
      projects,
      outdated,
    } as const;

    if (raw.mode === 'free') {
      if (raw.free_base_url === undefined) {
        this.report(at(), 'free mode needs free_base_url, the address of the free endpoint');
        return undefined;
      }
      return { mode: 'free', freeBaseUrl: raw.free_base_url.replace(/\/+$/, ''), ...common };
    }

    const key = this.secret(at(), raw.marketplace_key_env, raw.marketplace_key_file, 'the release marketplace', ['marketplace_key_env', 'marketplace_key_file']);
    if (raw.marketplace_base_url === undefined) {
      this.report(at(), 'marketplace mode needs marketplace_base_url, the address of the marketplace endpoints');
      return undefined;
    }
    if (key === undefined) return undefined;
    const baseUrl = raw.marketplace_base_url.replace(/\/+$/, '');
    return {
      mode: 'marketplace',
      marketplaceBaseUrl: baseUrl,
      marketplaceKey: key.secret,
      marketplaceKeySource: key.source,
      marketplaceHost: raw.marketplace_host ?? new URL(baseUrl).host,
      headerNames: { key: raw.header_names.key, host: raw.header_names.host },
      ...common,
    };
  }

  /** The outdated check's table: the defaults with the configured entries laid over them. */
  private outdated(raw: RawReleases): OutdatedConfig | undefined {
    const section = raw.outdated;
    if (!section.enabled) return undefined;
    const rules = resolveSoftwareRules(
      Object.fromEntries(Object.entries(section.projects).map(([software, entry]) => [software, entry.project === false ? false : { project: entry.project, line: entry.line }])),
      section.line,
    );
    if (raw.mode === 'free') {
      for (const [software, entry] of Object.entries(section.projects)) {
        if (entry.project !== false && !OWNER_REPO.test(entry.project)) {
          this.report(['releases', 'outdated', 'projects', software], `the free endpoint looks projects up as <owner>/<repository>; ${JSON.stringify(entry.project)} needs mode: marketplace`);
        }
      }
    }
    return { line: section.line, software: Object.fromEntries(rules) };
  }

  /** Reads a key from exactly one of an environment variable and a file. Never puts the value in a message. */
  private secret(
    at: Path,
    envName: string | undefined,
    filePath: string | undefined,
    owner: string,
    [envKey, fileKey]: readonly [string, string],
  ): { secret: Secret; source: SecretSource } | undefined {
    if (envName !== undefined && filePath !== undefined) {
      this.report(at, `set only one of ${envKey} and ${fileKey}, not both`);
      return undefined;
    }
    if (envName !== undefined) {
      const value = this.env[envName];
      if (value === undefined) {
        this.report([...at, envKey], `environment variable ${envName} is not set (it should hold the key of ${owner})`);
        return undefined;
      }
      return this.checkedKey([...at, envKey], value, `environment variable ${envName}`, owner, { kind: 'env', name: envName });
    }
    if (filePath !== undefined) {
      const resolved = resolvePath(this.baseDir, filePath);
      let value: string;
      try {
        value = this.readFile(resolved);
      } catch (error) {
        const why = error instanceof InputFileError ? error.reason : describeFsError(error);
        this.report([...at, fileKey], `cannot read the key of ${owner} from ${resolved}: ${why}`);
        return undefined;
      }
      return this.checkedKey([...at, fileKey], value, `file ${resolved}`, owner, { kind: 'file', path: resolved });
    }
    this.report(at, `${owner} has no key: set ${envKey} (the name of an environment variable) or ${fileKey} (the path of a file), exactly one`);
    return undefined;
  }

  private checkedKey(at: Path, raw: string, where: string, owner: string, source: SecretSource): { secret: Secret; source: SecretSource } | undefined {
    const value = raw.trim();
    if (value === '') {
      this.report(at, `${where} is empty (it should hold the key of ${owner})`);
      return undefined;
    }
    if (/\s/.test(value)) {
      this.report(at, `${where} holds whitespace inside the key of ${owner}; it must hold only the key`);
      return undefined;
    }
    return { secret: new Secret(value), source };
  }
}

/**
 * Whether a per-device include pattern (`name|device`) may select names the agent reports:
 * devices are known only at run time, so an example device stands in for the pattern's
 * device part, and the exclude patterns are applied to it.
 */
function maySelectPerDeviceNames(metrics: IncludeExclude, knownNames: readonly string[]): boolean {
  const selected = createNameFilter(metrics);
  return metrics.include.some((pattern) => {
    const bar = pattern.indexOf('|');
    if (bar < 0) return false;
    const dotted = globToRegExp(pattern.slice(0, bar));
    const device = pattern.slice(bar + 1).replace(/[*?]/g, 'x');
    return knownNames.some((name) => dotted.test(name) && selected(`${name}|${device}`));
  });
}
