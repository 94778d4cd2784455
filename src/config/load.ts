/**
 * YAML text → validated, defaulted `Config`, with every problem reported at once as a
 * `ConfigError` naming the YAML path (and line) of each. Three passes: YAML syntax, the
 * zod shape (`schema.ts`), then rules across fields and the reading of secrets.
 */
import { dirname, resolve as resolvePath } from 'node:path';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { analyseCron, CRON_TIMEZONE } from './cron.js';
import { formatDuration } from './duration.js';
import { closestKey, ConfigError, formatPath, type ConfigIssue } from './errors.js';
import { CONFIG_FILE_MAX_BYTES, describeFsError, InputFileError, KEY_FILE_MAX_BYTES, PEM_FILE_MAX_BYTES, readBoundedFile } from './input.js';
import {
  buildConfigSchema,
  describeValue,
  isUnknownKeyParams,
  issueMessage,
  unknownKeyMessage,
  type RawAccount,
  type RawConfig,
  type RawExporter,
  type RawReleases,
  type RawRemoteWrite,
} from './schema.js';
import { rememberSecretsOf } from './referenced-secrets.js';
import { Secret } from './secret.js';
import type { ConfigSection, SourceConfig, SourceConfigSpec } from './source-spec.js';
import {
  DEFAULT_RELEASES_SCHEDULE,
  FREE_ENDPOINT_CACHE_MS,
  MARKETPLACE_MIN_GAP_MS,
  METRIC_PREFIX,
  type AccountConfig,
  type Config,
  type HttpConfig,
  type ReleasesConfig,
  type RemoteWriteConfig,
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

export interface ConfigLoader {
  /**
   * Reads and validates a config file. Relative `api_key_file` paths are taken relative to
   * the config file's folder. Throws `ConfigError`.
   *
   * `loadConfig('/etc/monapi/monapi-exporter.yaml', process.env)`
   */
  loadConfig(path: string, env: NodeJS.ProcessEnv, readFile?: ReadFile): Config;
  /** Validates config text; see `loadConfig`. Throws `ConfigError`. */
  parseConfig(yamlText: string, options?: ParseConfigOptions): Config;
}

/** A loader for a configuration whose sources are these (the exporter passes its registry). */
export function createConfigLoader(specs: readonly SourceConfigSpec[]): ConfigLoader {
  const schema = buildConfigSchema(specs);
  const parseConfig = (yamlText: string, options: ParseConfigOptions = {}): Config => parseWith(specs, schema, yamlText, options);
  return {
    parseConfig,
    loadConfig(path, env, readFile) {
      let text: string;
      try {
        text = (readFile ?? readConfigFile)(path);
      } catch (error) {
        const message = error instanceof InputFileError ? error.reason : `cannot read ${path}: ${describeFsError(error)}`;
        throw new ConfigError(path, [{ path: '(file)', message }]);
      }
      return parseConfig(text, { env, readFile: readFile ?? readKeyFile, baseDir: dirname(resolvePath(path)), source: path });
    },
  };
}

function parseWith(specs: readonly SourceConfigSpec[], schema: ReturnType<typeof buildConfigSchema>, yamlText: string, options: ParseConfigOptions): Config {
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
  keepNumbersAsWritten(doc, specs);
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
    // yaml's own words for a merge of something else than a mapping name no place: these say where.
    const merges = badMerges(doc, lineCounter);
    if (merges.length > 0) throw new ConfigError(source, merges);
    throw new ConfigError(source, [{ path: '(yaml)', message: error instanceof Error ? error.message : String(error) }]);
  }
  if (data === null || data === undefined) {
    throw new ConfigError(source, [{ path: '(root)', message: 'the configuration is empty; it needs at least an accounts list' }]);
  }
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new ConfigError(source, [
      { path: '(root)', message: `must be a mapping with the keys exporter, accounts, releases and remote_write (got ${describeValue(data)})`, ...locator.at([]) },
    ]);
  }

  const parsed = schema.safeParse(data, { error: issueMessage });
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

  const checker = new Checker(specs, locator, options.env ?? process.env, options.readFile ?? readKeyFile, options.readFile ?? readPemFile, options.baseDir ?? process.cwd());
  // The composed schema's output type is the union of every source's keys: RawConfig types the fixed ones.
  const config = checker.build(parsed.data as unknown as RawConfig);
  if (checker.issues.length > 0 || config === undefined) throw new ConfigError(source, sortByLine(checker.issues));
  return config;
}

/**
 * `major: 1.20` is the line 1.20, but YAML reads it as the number 1.2 (the line 1.2): at the
 * paths a source asks for, a plain number with a dot is taken as the text written.
 */
function keepNumbersAsWritten(doc: Document, specs: readonly SourceConfigSpec[]): void {
  const sectionNodes = (section: ConfigSection): unknown[] => {
    if (section === 'releases') return [doc.get('releases')];
    const accounts = doc.get('accounts');
    return isSeq(accounts) ? accounts.items : [];
  };
  const visit = (node: unknown, path: readonly string[]): void => {
    const [head, ...rest] = path;
    if (head === undefined) return;
    const children = head === '*' ? (isSeq(node) ? node.items : []) : isMap(node) ? [node.get(head, true)] : [];
    for (const child of children) {
      if (rest.length > 0) visit(child, rest);
      else if (isScalar(child) && typeof child.value === 'number' && child.type === 'PLAIN' && child.source?.includes('.')) child.value = child.source;
    }
  };
  for (const spec of specs) {
    for (const path of spec.numbersAsWritten ?? []) for (const node of sectionNodes(spec.section)) visit(node, path);
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

/** Merge keys (`<<`) whose value is not a mapping, an alias of one, or a list of those, by path and line. */
function badMerges(doc: Document, lines: LineCounter): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const mergeable = (node: unknown): boolean => isMap(isAlias(node) ? node.resolve(doc) : node);
  const walk = (node: unknown, path: (string | number)[]): void => {
    if (isSeq(node)) node.items.forEach((item, i) => walk(item, [...path, i]));
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const key = pair.key;
      const merge = isScalar(key) && (!key.type || key.type === 'PLAIN') && (key.value === '<<' || (typeof key.value === 'symbol' && key.value.description === '<<'));
      const value: unknown = isAlias(pair.value) ? pair.value.resolve(doc) : pair.value;
      if (merge && !(isSeq(value) ? value.items.every(mergeable) : mergeable(value))) {
        const offset = isNode(key) ? key.range?.[0] : undefined;
        const position = offset === undefined ? undefined : lines.linePos(offset);
        issues.push({
          path: formatPath(path),
          message: 'a merge key (<<) takes a mapping, an alias of one, or a list of those',
          ...(position && { line: position.line, column: position.col }),
        });
      }
      walk(pair.value, merge ? path : [...path, isScalar(key) ? String(key.value) : String(key)]);
    }
  };
  walk(doc.contents, []);
  return issues;
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && 'range' in value;
}


/** The rules across fields, secrets, and the sources' own rules; collects issues instead of stopping at the first. */
class Checker {
  readonly issues: ConfigIssue[] = [];

  constructor(
    private readonly specs: readonly SourceConfigSpec[],
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
    const accounts = raw.accounts.map((account, index) => this.account(account, raw.exporter, index));
    this.crossAccountRules(raw.accounts, accounts);
    const releases = raw.releases === undefined ? undefined : this.releases(raw.releases, raw.exporter);
    const remoteWrite = raw.remote_write === undefined ? undefined : this.remoteWrite(raw.remote_write);
    if (this.issues.length > 0) return undefined;
    return {
      exporter: {
        metricPrefix: METRIC_PREFIX,
        sampleTimestamps: raw.exporter.sample_timestamps,
        nullHandling: raw.exporter.null_handling,
      },
      accounts: accounts.filter((account): account is AccountConfig => account !== undefined),
      releases,
      ...(remoteWrite !== undefined && { remoteWrite }),
    };
  }

  /** The remote_write section: one way of authenticating at most, its secrets and TLS files read. */
  private remoteWrite(raw: RawRemoteWrite): RemoteWriteConfig | undefined {
    const at = (...rest: (string | number)[]): Path => ['remote_write', ...rest];
    if (raw.basic_auth !== undefined && raw.authorization !== undefined) this.report(at(), 'set only one of basic_auth and authorization, not both');
    let authorization: Secret | undefined;
    if (raw.basic_auth !== undefined) {
      const { username, password_env, password_file } = raw.basic_auth;
      const password = this.secret(at('basic_auth'), password_env, password_file, 'the remote write receiver', ['password_env', 'password_file']);
      if (password !== undefined) authorization = new Secret(`Basic ${Buffer.from(`${username}:${password.secret.reveal()}`).toString('base64')}`);
    } else if (raw.authorization !== undefined) {
      const { type, credentials_env, credentials_file } = raw.authorization;
      const credentials = this.secret(at('authorization'), credentials_env, credentials_file, 'the remote write receiver', ['credentials_env', 'credentials_file']);
      if (credentials !== undefined) authorization = new Secret(`${type} ${credentials.secret.reveal()}`);
    }
    const tlsRaw = raw.tls_config;
    const pem = (key: 'ca_file' | 'cert_file' | 'key_file', marker: string): string | undefined => {
      const file = tlsRaw[key];
      if (file === undefined) return undefined;
      const path = resolvePath(this.baseDir, file);
      try {
        const text = key === 'key_file' ? this.readFile(path) : this.readPem(path);
        if (!text.includes(marker)) this.report(at('tls_config', key), `${path} holds no PEM ${marker.replace(/-/g, '').trim().toLowerCase()}`);
        return text;
      } catch (error) {
        const why = error instanceof InputFileError ? error.reason : describeFsError(error);
        this.report(at('tls_config', key), `cannot read ${path}: ${why}`);
        return undefined;
      }
    };
    const ca = pem('ca_file', '-----BEGIN CERTIFICATE-----');
    const cert = pem('cert_file', '-----BEGIN CERTIFICATE-----');
    const key = pem('key_file', 'PRIVATE KEY-----');
    if ((tlsRaw.cert_file === undefined) !== (tlsRaw.key_file === undefined)) this.report(at('tls_config'), 'set both cert_file and key_file (a client certificate and its key), or neither');
    const queue = raw.queue_config;
    if (queue.capacity < queue.max_samples_per_send) {
      this.report(at('queue_config', 'capacity'), `must be at least max_samples_per_send (${queue.max_samples_per_send}): a request is taken from what the queue holds (got ${queue.capacity})`);
    }
    if (queue.max_backoff < queue.min_backoff) this.report(at('queue_config', 'max_backoff'), `must be at least min_backoff (${formatDuration(queue.min_backoff)}) (got ${formatDuration(queue.max_backoff)})`);
    return {
      url: raw.url,
      pushIntervalMs: raw.push_interval,
      remoteTimeoutMs: raw.remote_timeout,
      headers: raw.headers,
      externalLabels: raw.external_labels,
      authorization,
      tls: {
        ...(ca !== undefined && { ca }),
        ...(cert !== undefined && { cert }),
        ...(key !== undefined && { key }),
        ...(tlsRaw.server_name !== undefined && { serverName: tlsRaw.server_name }),
        insecureSkipVerify: tlsRaw.insecure_skip_verify,
      },
      queue: {
        capacity: queue.capacity,
        maxSamplesPerSend: queue.max_samples_per_send,
        batchSendDeadlineMs: queue.batch_send_deadline,
        minBackoffMs: queue.min_backoff,
        maxBackoffMs: queue.max_backoff,
        retryOnHttp429: queue.retry_on_http_429,
      },
    };
  }

  private account(raw: RawAccount, exporter: RawExporter, index: number): AccountConfig | undefined {
    const at = (...rest: (string | number)[]): Path => ['accounts', index, ...rest];
    const owner = `account ${JSON.stringify(raw.name)}`;
    const key = this.secret(at(), raw.api_key_env, raw.api_key_file, owner, ['api_key_env', 'api_key_file']);

    const budgetedBurst = Math.floor(raw.rate_limit.burst * (1 - raw.headroom));
    if (budgetedBurst < 1) {
      this.report(at('rate_limit', 'burst'), `a burst of ${raw.rate_limit.burst} minus headroom ${raw.headroom} leaves less than one request`);
    }
    const sources = this.sources('account', raw, exporter, at(), raw.sources, raw.cadence, raw.fields);
    const http = this.http(raw.http, at('http'));
    if (key === undefined) return undefined;
    return {
      name: raw.name,
      baseUrl: raw.base_url.replace(/\/+$/, ''),
      apiKey: key.secret,
      apiKeySource: key.source,
      authScheme: raw.auth_scheme,
      rateLimit: { requestsPerMinute: raw.rate_limit.requests_per_minute, burst: raw.rate_limit.burst },
      headroom: raw.headroom,
      concurrency: raw.concurrency,
      maxPagesPerList: raw.max_pages_per_list,
      http,
      limits: {
        series: raw.limits.series,
        metricNameLength: raw.limits.metric_name_length,
        labelNameLength: raw.limits.label_name_length,
        labelValueLength: raw.limits.label_value_length,
      },
      counterGraceMs: raw.counter_grace,
      sources,
    };
  }

  /**
   * Every source of a section: whether it is on (its switch, the switch it follows, or its
   * settings), what it needs, its cadences, and its own settings with their rules.
   */
  private sources(
    section: ConfigSection,
    raw: Readonly<Record<string, unknown>>,
    exporter: RawExporter,
    at: Path,
    switches: Readonly<Record<string, boolean | undefined>> = {},
    cadence: Readonly<Record<string, number>> = {},
    fields: Readonly<Record<string, Readonly<Record<string, string | undefined>>>> = {},
  ): Record<string, SourceConfig> {
    const specs = this.specs.filter((spec) => spec.section === section);
    const byName = new Map(specs.map((spec) => [spec.name, spec]));
    const switched = (name: string, seen = new Set<string>()): boolean => {
      const spec = byName.get(name);
      if (spec === undefined || seen.has(name)) return false;
      seen.add(name);
      if (spec.toggle) {
        const set = switches[name];
        if (set !== undefined) return set;
        return typeof spec.toggle.default === 'boolean' ? spec.toggle.default : switched(spec.toggle.default.sameAs, seen);
      }
      return spec.enabledWith === undefined ? true : switched(spec.enabledWith, seen);
    };
    for (const spec of specs) {
      if (!switches[spec.name]) continue;
      for (const [other, why] of Object.entries(spec.needs ?? {})) {
        if (!switched(other)) this.report([...at, 'sources', spec.name], `needs sources.${other}: ${why}; turn ${spec.name} off too, or turn ${other} on`);
      }
    }
    const result: Record<string, SourceConfig> = {};
    for (const spec of specs) {
      const enabled = switched(spec.name);
      const report = (path: readonly (string | number)[], message: string, atKey?: boolean) => this.report([...at, ...path], message, atKey);
      const settings = spec.settings?.({ section: raw, exporter, enabled }, report);
      const cadenceMs = Object.fromEntries(Object.keys(spec.cadences ?? {}).map((key) => [key, cadence[key] ?? 0]));
      const fieldPaths = Object.fromEntries(Object.entries(fields[spec.name] ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined));
      result[spec.name] = { enabled: enabled && (settings === undefined || (spec.enabledBy?.(settings) ?? true)), cadenceMs, settings, fieldPaths };
    }
    return result;
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

  private releases(raw: RawReleases, exporter: RawExporter): ReleasesConfig | undefined {
    const at = (...rest: (string | number)[]): Path => ['releases', ...rest];
    const sources = this.sources('releases', raw, exporter, at());
    if (!Object.values(sources).some((source) => source.enabled)) {
      const ways = this.specs.filter((spec) => spec.section === 'releases' && spec.howToEnable !== undefined).map((spec) => spec.howToEnable);
      this.report(at(), `has nothing to look up: ${ways.join(', or ')}`);
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
      sources,
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
