/**
 * Command-line flags in the Prometheus exporter style (`--config.file`, `--web.listen-address`,
 * ...), each with an environment variable; the flag wins over the variable. Secrets are
 * never accepted here: a command line shows in `ps` and in shell history.
 */
import { parseArgs } from 'node:util';
import { parseListenAddress, type ListenAddress } from '../server/listen.js';
import { MAX_DEFAULT_SERVING_THREADS, MAX_SERVING_THREADS, servingThreadsOf } from '../server/serving-threads.js';
import { resolveShard, ShardError, type ShardAssignment } from '../sharding/index.js';
import { EXPORTER_VERSION } from '../version.js';
import { parseDuration } from '../config/duration.js';
import { closestKey } from '../config/errors.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Chosen for this exporter; see docs/configuration.md. */
export const DEFAULT_LISTEN_ADDRESS = ':9866';
export const DEFAULT_CONFIG_FILE = 'monapi-exporter.yaml';
/** Each scrape in flight holds the body it started with; see docs/exposition.md. */
export const DEFAULT_MAX_REQUESTS = 10;
/** Kubernetes takes up to a minute or so to update a mounted ConfigMap or Secret; 10 s adds little to that. */
export const DEFAULT_CONFIG_WATCH_INTERVAL = '10s';
const MIN_CONFIG_WATCH_INTERVAL_MS = 100;

export interface Flags {
  readonly configFile: string;
  /** Validate the config, print a summary, exit 0 or 1. */
  readonly configCheck: boolean;
  /** How often the config file and the key and CA files it names are looked at for changes; 0: never. */
  readonly configWatchIntervalMs: number;
  /** As given, e.g. `:9866` or `127.0.0.1:9866`. */
  readonly webListenAddress: string;
  /** `host` undefined means every interface; IPv6 hosts come without brackets. */
  readonly listen: { readonly host: string | undefined; readonly port: number };
  readonly webTelemetryPath: string;
  /** Scrapes of the telemetry path served at once (per serving thread); 0 means no limit. */
  readonly webMaxRequests: number;
  /** Threads serving the listen address; 0: the main thread serves. */
  readonly webServingThreads: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  /** Which accounts this process polls; `{ordinal: 0, total: 1}` (all of them) without sharding. */
  readonly shard: ShardAssignment;
  /** Where cursors and counter totals are kept across restarts; undefined: nothing is kept. */
  readonly stateFile: string | undefined;
  /** TLS and basic auth for the HTTP endpoints (exporter-toolkit format); undefined: plain HTTP, open. */
  readonly webConfigFile: string | undefined;
  /** A second listener for /-/healthy and /-/ready only, plain HTTP, on its own thread; undefined: none. */
  readonly webProbeListenAddress: string | undefined;
  /** Allows POST /-/reload (as Prometheus' --web.enable-lifecycle). */
  readonly webEnableLifecycle: boolean;
}

export interface ParseFlagsOptions {
  /** Shown by `--version`. Default: the version in package.json. */
  readonly version?: string;
  /** Decides the default log format. Default: `process.stdout.isTTY`. */
  readonly stdoutIsTTY?: boolean;
}

/** A bad command line or environment variable; the message names the flag or variable and what is allowed. */
export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly env?: string;
  readonly help: string;
  readonly default?: string;
}

const FLAGS: Readonly<Record<string, FlagSpec>> = {
  'config.file': { type: 'string', env: 'MONAPI_CONFIG_FILE', default: DEFAULT_CONFIG_FILE, help: 'YAML configuration file.' },
  'config.check': { type: 'boolean', help: 'Validate the configuration (secrets included), print a summary without secrets and exit: 0 valid, 1 invalid.' },
  'config.watch-interval': {
    type: 'string',
    env: 'MONAPI_CONFIG_WATCH_INTERVAL',
    default: DEFAULT_CONFIG_WATCH_INTERVAL,
    help: 'Reload when the config file or a key or CA file it names has changed, looking this often (a duration such as 10s); 0 turns it off (SIGHUP still reloads).',
  },
  'web.listen-address': { type: 'string', env: 'MONAPI_WEB_LISTEN_ADDRESS', default: DEFAULT_LISTEN_ADDRESS, help: 'Address to serve metrics on: [host]:port.' },
  'web.telemetry-path': { type: 'string', env: 'MONAPI_WEB_TELEMETRY_PATH', default: '/metrics', help: 'Path of the metrics endpoint.' },
  'web.config.file': {
    type: 'string',
    env: 'MONAPI_WEB_CONFIG_FILE',
    help: 'Prometheus exporter-toolkit web configuration (TLS, client certificates, basic auth); re-read when it changes. /-/healthy and /-/ready stay open.',
  },
  'web.probe-listen-address': {
    type: 'string',
    env: 'MONAPI_WEB_PROBE_LISTEN_ADDRESS',
    help: 'Also serve /-/healthy and /-/ready, and nothing else, on this [host]:port: plain HTTP, never behind --web.config.file, answered from a thread of its own whatever the main port is going through (for kubelet probes).',
  },
  'web.enable-lifecycle': { type: 'boolean', env: 'MONAPI_WEB_ENABLE_LIFECYCLE', help: 'Allow POST /-/reload to re-read the configuration (SIGHUP always does).' },
  'state.file': {
    type: 'string',
    env: 'MONAPI_STATE_FILE',
    help: 'Keep check and alert cursors, late-data holes and counter totals in this file, so a restart neither loses nor counts twice.',
  },
  'web.max-requests': {
    type: 'string',
    env: 'MONAPI_WEB_MAX_REQUESTS',
    default: String(DEFAULT_MAX_REQUESTS),
    help: 'Scrapes of the metrics endpoint served at once; more are answered 503 with Retry-After. 0 means no limit.',
  },
  'web.serving-threads': {
    type: 'string',
    env: 'MONAPI_WEB_SERVING_THREADS',
    default: 'auto',
    help: `Threads that serve the listen address, all on its port: scrapes are written from them, never from the thread that polls the upstream. auto: one per CPU core beyond one, from 1 to ${MAX_DEFAULT_SERVING_THREADS}; 0: the main thread serves everything.`,
  },
  'log.level': { type: 'string', env: 'MONAPI_LOG_LEVEL', default: 'info', help: `Log level: ${LOG_LEVELS.join(', ')}.` },
  'log.format': { type: 'string', env: 'MONAPI_LOG_FORMAT', help: `Log format: ${LOG_FORMATS.join(', ')}. Default: pretty when stdout is a terminal, else json.` },
  shard: { type: 'string', env: 'MONAPI_SHARD', help: 'This process\'s shard, 0 to --total-shards minus 1: it polls only the accounts whose names hash to it.' },
  'total-shards': { type: 'string', env: 'MONAPI_TOTAL_SHARDS', default: '1', help: 'Number of shards the accounts are spread over (jump hash of the account name).' },
  'shard.pod-name': {
    type: 'string',
    env: 'MONAPI_SHARD_POD_NAME',
    help: 'Take the shard from this StatefulSet pod name\'s ordinal suffix (monapi-exporter-2 is shard 2), instead of --shard.',
  },
  help: { type: 'boolean', help: 'Show this help and exit.' },
  version: { type: 'boolean', help: 'Show the version and exit.' },
};

const SECRET_LOOKING_FLAG = /key|token|secret|passw|credential|bearer/i;

export function helpText(): string {
  const lines = ['Usage: monapi-exporter [flags]', '       monapi-exporter probe --config.file=<file> [flags]   (what the upstream answers; probe --help)', '', 'Flags:'];
  for (const [name, spec] of Object.entries(FLAGS)) {
    const value = spec.type === 'string' ? '=<value>' : '';
    const extras = [spec.env && `env ${spec.env}`, spec.default !== undefined && `default ${JSON.stringify(spec.default)}`].filter(Boolean);
    lines.push(`  --${name}${value}`, `      ${spec.help}${extras.length > 0 ? ` (${extras.join(', ')})` : ''}`);
  }
  lines.push('', 'API keys are never taken from the command line: set api_key_env or api_key_file in the config file.');
  return lines.join('\n');
}

/**
 * `parseFlags(process.argv.slice(2), process.env)`. Returns `{help}` or `{version}` when
 * asked for; throws `FlagError` for an unknown flag, a bad value, or a flag that looks
 * like it carries a key. Long because it is the one place every flag is read, checked and
 * defaulted, flag and environment variable side by side; split up, a flag's rules would scatter.
 */
export function parseFlags(argv: readonly string[], env: NodeJS.ProcessEnv, options: ParseFlagsOptions = {}): Flags | { help: string } | { version: string } {
  for (const arg of argv) {
    if (arg === '--') break;
    if (!arg.startsWith('-')) continue;
    // Only the name is ever echoed: a value after "=" may be a key.
    const name = arg.replace(/^--?/, '').split('=')[0] ?? '';
    if (SECRET_LOOKING_FLAG.test(name)) {
      throw new FlagError(
        `refusing --${name}: API keys must not be passed on the command line (they show in ps and shell history); set api_key_env or api_key_file in the config file`,
      );
    }
    if (!(name in FLAGS) && !(arg === '-h')) {
      const suggestion = closestKey(name, Object.keys(FLAGS));
      const hint = suggestion === undefined ? '' : ` (did you mean --${suggestion}?)`;
      throw new FlagError(`unknown flag ${arg.startsWith('--') ? '--' : '-'}${name}${hint}`);
    }
  }

  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: {
        ...Object.fromEntries(Object.entries(FLAGS).map(([name, spec]) => [name, { type: spec.type }])),
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
    values = parsed.values;
    positionals = parsed.positionals;
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new FlagError(message ?? 'invalid command line');
  }
  if (positionals.length > 0) {
    throw new FlagError(`unexpected argument at position ${argv.indexOf(positionals[0] ?? '') + 1}: this program takes only --flags`);
  }

  if (values.help === true) return { help: helpText() };
  if (values.version === true) return { version: `monapi-exporter ${options.version ?? EXPORTER_VERSION}` };

  const pick = (name: string): { value: string; from: string } | undefined => {
    const flag = values[name];
    if (typeof flag === 'string') return { value: flag, from: `--${name}` };
    const envName = FLAGS[name]?.env;
    const fromEnv = envName === undefined ? undefined : env[envName];
    if (envName !== undefined && fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, from: envName };
    return undefined;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const given = pick(name);
    if (given === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(given.value)) {
      throw new FlagError(`${given.from} must be one of ${allowed.join(', ')} (got ${JSON.stringify(given.value)})`);
    }
    return given.value as T;
  };

  const configFile = pick('config.file')?.value ?? DEFAULT_CONFIG_FILE;
  const listenGiven = pick('web.listen-address') ?? { value: DEFAULT_LISTEN_ADDRESS, from: '--web.listen-address' };
  let listen: ListenAddress;
  try {
    listen = parseListenAddress(listenGiven.value);
  } catch (error) {
    const why = (error instanceof Error ? error.message : String(error)).replace(/^invalid listen address "(?:[^"\\]|\\.)*": /, '');
    throw new FlagError(
      `${listenGiven.from} must be [host]:port with a port from 0 to 65535, such as :9866, 127.0.0.1:9866 or [::1]:9866 (got ${JSON.stringify(listenGiven.value)}: ${why})`,
    );
  }
  const probeGiven = pick('web.probe-listen-address');
  if (probeGiven !== undefined) {
    let probe: ListenAddress;
    try {
      probe = parseListenAddress(probeGiven.value);
    } catch (error) {
      const why = (error instanceof Error ? error.message : String(error)).replace(/^invalid listen address "(?:[^"\\]|\\.)*": /, '');
      throw new FlagError(`${probeGiven.from} must be [host]:port, such as :9867 (got ${JSON.stringify(probeGiven.value)}: ${why})`);
    }
    if (probe.port !== 0 && probe.port === listen.port && probe.host === listen.host) {
      throw new FlagError(`${probeGiven.from} must differ from the main listen address ${listenGiven.value}`);
    }
  }
  const pathGiven = pick('web.telemetry-path') ?? { value: '/metrics', from: '--web.telemetry-path' };
  if (!/^\/[^\s?#]+$/.test(pathGiven.value)) {
    throw new FlagError(`${pathGiven.from} must start with / and name a path other than / itself, without spaces, ? or # (got ${JSON.stringify(pathGiven.value)})`);
  }

  let shard: ShardAssignment;
  try {
    shard = resolveShard({ shard: pick('shard'), totalShards: pick('total-shards'), podName: pick('shard.pod-name') });
  } catch (error) {
    if (error instanceof ShardError) throw new FlagError(error.message);
    throw error;
  }

  const stateFile = pick('state.file')?.value;
  const webConfigFile = pick('web.config.file')?.value;
  const lifecycle = values['web.enable-lifecycle'] === true ? 'true' : env.MONAPI_WEB_ENABLE_LIFECYCLE;
  if (lifecycle !== undefined && lifecycle !== '' && !['true', 'false'].includes(lifecycle)) {
    throw new FlagError(`MONAPI_WEB_ENABLE_LIFECYCLE must be true or false (got ${JSON.stringify(lifecycle)})`);
  }
  const maxGiven = pick('web.max-requests') ?? { value: String(DEFAULT_MAX_REQUESTS), from: '--web.max-requests' };
  if (!/^\d{1,6}$/.test(maxGiven.value)) {
    throw new FlagError(`${maxGiven.from} must be a whole number, 0 for no limit (got ${JSON.stringify(maxGiven.value)})`);
  }

  const threadsGiven = pick('web.serving-threads') ?? { value: 'auto', from: '--web.serving-threads' };
  const servingThreads = servingThreadsOf(threadsGiven.value);
  if (servingThreads === undefined) {
    throw new FlagError(`${threadsGiven.from} must be auto or a whole number from 0 to ${MAX_SERVING_THREADS} (got ${JSON.stringify(threadsGiven.value)})`);
  }

  const watchGiven = pick('config.watch-interval') ?? { value: DEFAULT_CONFIG_WATCH_INTERVAL, from: '--config.watch-interval' };
  const watchInterval = watchGiven.value === '0' ? { ms: 0 } : parseDuration(watchGiven.value);
  if ('error' in watchInterval || (watchInterval.ms > 0 && watchInterval.ms < MIN_CONFIG_WATCH_INTERVAL_MS)) {
    throw new FlagError(
      `${watchGiven.from} must be a duration of at least ${MIN_CONFIG_WATCH_INTERVAL_MS}ms such as 10s, or 0 to turn the watching off (got ${JSON.stringify(watchGiven.value)})`,
    );
  }

  return {
    configFile,
    configCheck: values['config.check'] === true,
    configWatchIntervalMs: watchInterval.ms,
    stateFile,
    webConfigFile,
    webProbeListenAddress: probeGiven?.value,
    webEnableLifecycle: lifecycle === 'true',
    webListenAddress: listenGiven.value,
    listen,
    webTelemetryPath: pathGiven.value,
    webMaxRequests: Number(maxGiven.value),
    webServingThreads: servingThreads,
    logLevel: oneOf('log.level', LOG_LEVELS, 'info'),
    logFormat: oneOf('log.format', LOG_FORMATS, (options.stdoutIsTTY ?? process.stdout.isTTY === true) ? 'pretty' : 'json'),
    shard,
  };
}


