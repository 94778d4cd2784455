import { describe, expect, it } from 'vitest';
import { defaultServingThreads } from '../server/serving-threads.js';
import { FlagError, helpText, parseFlags } from './flags.js';

const NOT_TTY = { stdoutIsTTY: false, version: '9.9.9' };

function flags(argv: string[], env: NodeJS.ProcessEnv = {}, options = NOT_TTY) {
  const result = parseFlags(argv, env, options);
  if ('help' in result || 'version' in result) throw new Error('expected flags');
  return result;
}

function errorOf(argv: string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    parseFlags(argv, env, NOT_TTY);
  } catch (error) {
    expect(error).toBeInstanceOf(FlagError);
    return (error as Error).message;
  }
  throw new Error('expected a FlagError');
}

describe('parseFlags', () => {
  it('has the documented defaults', () => {
    expect(flags([])).toEqual({
      configFile: 'monapi-exporter.yaml',
      configCheck: false,
      configWatchIntervalMs: 10_000,
      webListenAddress: ':9866',
      listen: { host: undefined, port: 9866 },
      webTelemetryPath: '/metrics',
      webMaxRequests: 10,
      webServingThreads: defaultServingThreads(),
      logLevel: 'info',
      logFormat: 'json',
      shard: { ordinal: 0, total: 1 },
      stateFile: undefined,
      webConfigFile: undefined,
      webProbeListenAddress: undefined,
      webEnableLifecycle: false,
    });
  });

  it('defaults the log format to pretty on a terminal', () => {
    expect(flags([], {}, { stdoutIsTTY: true, version: 'x' }).logFormat).toBe('pretty');
  });

  it('reads every flag in both --name=value and --name value forms', () => {
    expect(
      flags([
        '--config.file=/etc/monapi.yaml',
        '--config.check',
        '--config.watch-interval=2m',
        '--web.listen-address',
        '127.0.0.1:9100',
        '--web.telemetry-path=/probe/metrics',
        '--web.max-requests=3',
        '--web.serving-threads',
        '6',
        '--log.level=debug',
        '--log.format',
        'pretty',
        '--shard=1',
        '--total-shards',
        '2',
        '--state.file=/var/lib/monapi/state.json',
        '--web.config.file',
        '/etc/monapi/web.yaml',
        '--web.probe-listen-address=:9867',
        '--web.enable-lifecycle',
      ]),
    ).toEqual({
      configFile: '/etc/monapi.yaml',
      configCheck: true,
      configWatchIntervalMs: 120_000,
      webListenAddress: '127.0.0.1:9100',
      listen: { host: '127.0.0.1', port: 9100 },
      webTelemetryPath: '/probe/metrics',
      webMaxRequests: 3,
      webServingThreads: 6,
      logLevel: 'debug',
      logFormat: 'pretty',
      shard: { ordinal: 1, total: 2 },
      stateFile: '/var/lib/monapi/state.json',
      webConfigFile: '/etc/monapi/web.yaml',
      webProbeListenAddress: ':9867',
      webEnableLifecycle: true,
    });
  });

  it.each([
    ['MONAPI_CONFIG_FILE', '/srv/a.yaml', 'configFile', '/srv/a.yaml'],
    ['MONAPI_WEB_LISTEN_ADDRESS', '[::1]:9866', 'webListenAddress', '[::1]:9866'],
    ['MONAPI_WEB_TELEMETRY_PATH', '/m', 'webTelemetryPath', '/m'],
    ['MONAPI_WEB_MAX_REQUESTS', '0', 'webMaxRequests', 0],
    ['MONAPI_WEB_SERVING_THREADS', '0', 'webServingThreads', 0],
    ['MONAPI_LOG_LEVEL', 'warn', 'logLevel', 'warn'],
    ['MONAPI_LOG_FORMAT', 'pretty', 'logFormat', 'pretty'],
    ['MONAPI_STATE_FILE', '/data/state.json', 'stateFile', '/data/state.json'],
    ['MONAPI_WEB_CONFIG_FILE', '/etc/web.yml', 'webConfigFile', '/etc/web.yml'],
    ['MONAPI_WEB_ENABLE_LIFECYCLE', 'true', 'webEnableLifecycle', true],
    ['MONAPI_CONFIG_WATCH_INTERVAL', '500ms', 'configWatchIntervalMs', 500],
    ['MONAPI_CONFIG_WATCH_INTERVAL', '0', 'configWatchIntervalMs', 0],
    ['MONAPI_WEB_PROBE_LISTEN_ADDRESS', '127.0.0.1:9867', 'webProbeListenAddress', '127.0.0.1:9867'],
  ] as const)('takes %s from the environment', (envName, value, field, expected) => {
    expect(flags([], { [envName]: value })[field]).toBe(expected);
  });

  it('refuses a bad probe listen address, or the main one again, naming the flag', () => {
    expect(() => flags(['--web.probe-listen-address=9867'])).toThrow('--web.probe-listen-address must be [host]:port, such as :9867 (got "9867": expected host:port, :port or [ipv6]:port)');
    expect(() => flags(['--web.probe-listen-address=:9866'])).toThrow('--web.probe-listen-address must differ from the main listen address :9866');
  });

  it('takes the shard from the pod name the chart puts in the environment', () => {
    expect(flags([], { MONAPI_SHARD_POD_NAME: 'monapi-exporter-2', MONAPI_TOTAL_SHARDS: '3' }).shard).toEqual({ ordinal: 2, total: 3 });
    expect(flags(['--total-shards=4'], { MONAPI_SHARD_POD_NAME: 'monapi-exporter-3', MONAPI_TOTAL_SHARDS: '3' }).shard).toEqual({ ordinal: 3, total: 4 });
  });

  it('lets the flag win over the environment', () => {
    const result = flags(['--log.level=error', '--config.file=b.yaml'], { MONAPI_LOG_LEVEL: 'debug', MONAPI_CONFIG_FILE: 'a.yaml' });
    expect([result.logLevel, result.configFile]).toEqual(['error', 'b.yaml']);
  });

  it('ignores an empty environment variable', () => {
    expect(flags([], { MONAPI_LOG_LEVEL: '' }).logLevel).toBe('info');
  });

  it('answers --help and --version', () => {
    expect(parseFlags(['--help'], {}, NOT_TTY)).toEqual({ help: helpText() });
    expect(parseFlags(['-h'], {}, NOT_TTY)).toEqual({ help: helpText() });
    expect(parseFlags(['--version'], {}, NOT_TTY)).toEqual({ version: 'monapi-exporter 9.9.9' });
  });

  it('documents every flag with its variable and default in the help', () => {
    const help = helpText();
    for (const text of ['--config.file', 'MONAPI_CONFIG_FILE', '--config.check', '--config.watch-interval', 'MONAPI_CONFIG_WATCH_INTERVAL', '--web.listen-address', ':9866', '--web.telemetry-path', '--log.level', '--log.format', 'MONAPI_LOG_FORMAT', '--shard', 'MONAPI_SHARD', '--total-shards', '--shard.pod-name', 'MONAPI_SHARD_POD_NAME']) {
      expect(help).toContain(text);
    }
  });

  it('reads the version from package.json when none is given', () => {
    expect(parseFlags(['--version'], {}, { stdoutIsTTY: false })).toEqual({ version: expect.stringMatching(/^monapi-exporter \d+\.\d+\.\d+/) as unknown });
  });
});

describe('parseFlags refuses bad input with the flag and the allowed values', () => {
  it.each([
    [['--log.level=verbose'], {}, '--log.level must be one of debug, info, warn, error (got "verbose")'],
    [[], { MONAPI_LOG_LEVEL: 'trace' }, 'MONAPI_LOG_LEVEL must be one of debug, info, warn, error (got "trace")'],
    [['--log.format=text'], {}, '--log.format must be one of json, pretty (got "text")'],
    [
      ['--web.listen-address=9866'],
      {},
      '--web.listen-address must be [host]:port with a port from 0 to 65535, such as :9866, 127.0.0.1:9866 or [::1]:9866 (got "9866": expected host:port, :port or [ipv6]:port)',
    ],
    [
      [],
      { MONAPI_WEB_LISTEN_ADDRESS: ':70000' },
      'MONAPI_WEB_LISTEN_ADDRESS must be [host]:port with a port from 0 to 65535, such as :9866, 127.0.0.1:9866 or [::1]:9866 (got ":70000": port 70000 is above 65535)',
    ],
    [['--web.telemetry-path=metrics'], {}, '--web.telemetry-path must start with / and name a path other than / itself, without spaces, ? or # (got "metrics")'],
    [['--web.telemetry-path=/'], {}, '--web.telemetry-path must start with / and name a path other than / itself, without spaces, ? or # (got "/")'],
    [['--web.max-requests=-1'], {}, '--web.max-requests must be a whole number, 0 for no limit (got "-1")'],
    [['--web.serving-threads=many'], {}, '--web.serving-threads must be auto or a whole number from 0 to 32 (got "many")'],
    [['--web.serving-threads=33'], {}, '--web.serving-threads must be auto or a whole number from 0 to 32 (got "33")'],
    [[], { MONAPI_WEB_MAX_REQUESTS: 'many' }, 'MONAPI_WEB_MAX_REQUESTS must be a whole number, 0 for no limit (got "many")'],
    [['--config.watch-interval=10'], {}, '--config.watch-interval must be a duration of at least 100ms such as 10s, or 0 to turn the watching off (got "10")'],
    [[], { MONAPI_CONFIG_WATCH_INTERVAL: '10ms' }, 'MONAPI_CONFIG_WATCH_INTERVAL must be a duration of at least 100ms such as 10s, or 0 to turn the watching off (got "10ms")'],
    [['--log.levle=debug'], {}, 'unknown flag --log.levle (did you mean --log.level?)'],
    [['--shard=1'], {}, '--shard needs --total-shards: the number of shards (StatefulSet replicas) the accounts are spread over'],
    [['--total-shards=2', '--shard=2'], {}, 'shard 2 does not exist: --total-shards is 2, so shards are numbered 0 to 1'],
    [
      ['--total-shards=2'],
      { MONAPI_SHARD_POD_NAME: 'monapi-exporter' },
      'MONAPI_SHARD_POD_NAME "monapi-exporter" does not end in a StatefulSet ordinal: expected a pod name such as monapi-exporter-0 (sharding needs a StatefulSet, whose pods are numbered; a Deployment\'s are not)',
    ],
    [['--verbose'], {}, 'unknown flag --verbose'],
    [['-v'], {}, 'unknown flag -v'],
    [['extra'], {}, 'unexpected argument at position 1: this program takes only --flags'],
    [
      ['--api-key=abc123'],
      {},
      'refusing --api-key: API keys must not be passed on the command line (they show in ps and shell history); set api_key_env or api_key_file in the config file',
    ],
    [
      ['--monitoring.token', 'abc123'],
      {},
      'refusing --monitoring.token: API keys must not be passed on the command line (they show in ps and shell history); set api_key_env or api_key_file in the config file',
    ],
    [
      ['--marketplace-key=abc123'],
      {},
      'refusing --marketplace-key: API keys must not be passed on the command line (they show in ps and shell history); set api_key_env or api_key_file in the config file',
    ],
  ] as const)('%j %j', (argv, env, message) => {
    expect(errorOf([...argv], env)).toBe(message);
  });

  it('names a value-less string flag', () => {
    expect(errorOf(['--log.level'])).toMatch(/--log\.level/);
  });

  it('never echoes the value of a refused key flag', () => {
    expect(errorOf(['--api-key=abc123'])).not.toContain('abc123');
    expect(errorOf(['abc123'])).not.toContain('abc123');
  });
});

