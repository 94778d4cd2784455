import { parseArgs } from 'node:util';
import { liveStartsFrom, type LiveStart } from '../backfill/join.js';
import { Progress, ProgressError } from '../backfill/progress.js';
import { runBackfill, type BackfillReport } from '../backfill/run.js';
import { HistoryRefusedError, OpenMetricsFileWriter, RemoteWriteHistoryWriter, type HistoryWriter } from '../backfill/writers.js';
import { httpUrlProblem } from '../config/schema.js';
import { RemoteWriteQueue } from '../remote-write/queue.js';
import { HttpWriteSender } from '../remote-write/sender.js';
import { parseDuration } from '../config/duration.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { createLogger } from '../lib/logger.js';
import { proxySettingsFromEnv, type ProxySettings } from '../upstream/http/transport.js';
import type { RemoteWriteConfig } from '../config/types.js';
import { endpointFromConfig } from '../remote-write/endpoint.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel, DEFAULT_CONFIG_FILE } from './flags.js';
import { stderr, stdout } from './output.js';
import { configOrExplain } from './serve.js';
import { SINGLE_SHARD } from '../sharding/index.js';
import { readStateFile } from '../state/state-file.js';
import type { Config } from '../config/types.js';

/**
 * `monapi-exporter backfill`: the upstream's history of every host into an OpenMetrics file
 * for `promtool tsdb create-blocks-from openmetrics`, or into a remote write receiver; see
 * docs/backfill.md. Exit codes: 0 complete, 1 not complete (run it again: it goes on where it
 * stopped) or an invalid configuration, 2 bad flags.
 */

interface BackfillFlagSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  readonly env?: string;
  readonly help: string;
}

const BACKFILL_FLAGS: Readonly<Record<string, BackfillFlagSpec>> = {
  'config.file': { type: 'string', env: 'MONAPI_CONFIG_FILE', help: `YAML configuration file, the exporter's own (default ${JSON.stringify(DEFAULT_CONFIG_FILE)}).` },
  since: { type: 'string', env: 'MONAPI_BACKFILL_SINCE', help: "How far back, such as 30d or 4w. Default: the plan's retention, as /account states it." },
  until: { type: 'string', env: 'MONAPI_BACKFILL_UNTIL', help: 'Where history ends, an RFC 3339 time. Default: when the first run started (kept in the progress file).' },
  'state.file': {
    type: 'string',
    env: 'MONAPI_STATE_FILE',
    help: "The running exporter's --state.file, read only: each host's history then ends exactly where its live counters began counting, so nothing is counted twice or left out at the join (hosts it does not name end at --until).",
  },
  output: { type: 'string', env: 'MONAPI_BACKFILL_OUTPUT', help: 'Write an OpenMetrics file with timestamps here, for promtool tsdb create-blocks-from openmetrics.' },
  'remote-write.url': {
    type: 'string',
    env: 'MONAPI_BACKFILL_REMOTE_WRITE_URL',
    help: 'Or send history with Prometheus remote write to this URL (a Prometheus with --web.enable-remote-write-receiver and an out-of-order window, Mimir, Thanos Receive, VictoriaMetrics).',
  },
  'progress.file': {
    type: 'string',
    env: 'MONAPI_BACKFILL_PROGRESS_FILE',
    help: 'What has been written, so that a stopped backfill goes on where it stopped. Default: <output>.progress.json, or monapi-backfill.progress.json with remote write.',
  },
  'requests-per-minute': {
    type: 'string',
    env: 'MONAPI_BACKFILL_REQUESTS_PER_MINUTE',
    help: "Upstream requests per minute per account, at most the account's rate limit (held to it, with a warning). Default: what the live exporter leaves of the key (the account's rate limit times its headroom, 12 of 120 by default).",
  },
  label: {
    type: 'string',
    multiple: true,
    help: 'name=value added to every series, repeatable: the job and instance labels the Prometheus scraping the exporter gives its series (such as --label=job=monapi --label=instance=monapi-exporter:9866), so history and live data are one series.',
  },
  'chunk-samples': {
    type: 'string',
    env: 'MONAPI_BACKFILL_CHUNK_SAMPLES',
    help: 'Samples written (and acknowledged) between two updates of the progress file: less memory and less to redo after a stop, more round trips (default 100000).',
  },
  'log.level': { type: 'string', env: 'MONAPI_LOG_LEVEL', help: `Log level: ${LOG_LEVELS.join(', ')} (default info).` },
  'log.format': { type: 'string', env: 'MONAPI_LOG_FORMAT', help: `Log format: ${LOG_FORMATS.join(', ')}. Default: pretty on a terminal, else json.` },
  help: { type: 'boolean', help: 'Show this help and exit.' },
};

/** Labels the exporter itself gives series: a --label may not change them. */
const RESERVED_LABELS = ['account', 'host_uuid'];

export interface BackfillFlags {
  readonly configFile: string;
  readonly sinceMs: number | undefined;
  readonly untilMs: number | undefined;
  readonly stateFile: string | undefined;
  readonly output: { readonly kind: 'file'; readonly path: string } | { readonly kind: 'remote_write'; readonly url: string };
  readonly progressFile: string;
  readonly requestsPerMinute: number | undefined;
  readonly chunkSamples: number | undefined;
  readonly labels: Readonly<Record<string, string>>;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

export class BackfillFlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackfillFlagError';
  }
}

export function backfillHelp(): string {
  const lines = ['Usage: monapi-exporter backfill --config.file=<file> (--output=<file.om> | --remote-write.url=<url>) [flags]', '', 'Flags:'];
  for (const [name, spec] of Object.entries(BACKFILL_FLAGS)) {
    lines.push(`  --${name}${spec.type === 'string' ? '=<value>' : ''}`, `      ${spec.help}${spec.env === undefined ? '' : ` (env ${spec.env})`}`);
  }
  return lines.join('\n');
}

/** A window such as 30d, 4w or 36h, in milliseconds. */
function parseSince(text: string, from: string): number {
  const weeks = /^(\d+)w$/.exec(text.trim());
  const parsed = weeks ? { ms: Number(weeks[1]) * 7 * 86_400_000 } : parseDuration(text);
  if ('error' in parsed || parsed.ms < 60_000) throw new BackfillFlagError(`${from} must be a duration of at least 1m such as 30d, 4w or 36h (got ${JSON.stringify(text)})`);
  return parsed.ms;
}

export function parseBackfillFlags(argv: readonly string[], env: NodeJS.ProcessEnv, stdoutIsTTY = process.stdout.isTTY === true): BackfillFlags | { help: string } {
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: { ...Object.fromEntries(Object.entries(BACKFILL_FLAGS).map(([name, spec]) => [name, { type: spec.type, multiple: spec.multiple === true }])), help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    });
    values = parsed.values;
  } catch (error) {
    throw new BackfillFlagError((error instanceof Error ? error.message.split('\n')[0] : undefined) ?? 'invalid command line');
  }
  if (values.help === true) return { help: backfillHelp() };
  const pick = (name: string): { value: string; from: string } | undefined => {
    const flag = values[name];
    if (typeof flag === 'string') return { value: flag, from: `--${name}` };
    const envName = BACKFILL_FLAGS[name]?.env;
    const fromEnv = envName === undefined ? undefined : env[envName];
    return envName !== undefined && fromEnv !== undefined && fromEnv !== '' ? { value: fromEnv, from: envName } : undefined;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const given = pick(name);
    if (given === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(given.value)) throw new BackfillFlagError(`${given.from} must be one of ${allowed.join(', ')} (got ${JSON.stringify(given.value)})`);
    return given.value as T;
  };
  const file = pick('output');
  const url = pick('remote-write.url');
  if ((file === undefined) === (url === undefined)) throw new BackfillFlagError('say where history goes, one of --output=<file.om> and --remote-write.url=<url>');
  if (url !== undefined) {
    const problem = httpUrlProblem(url.value);
    if (problem !== undefined) throw new BackfillFlagError(`${url.from} ${problem}`);
  }
  const output = file !== undefined ? ({ kind: 'file', path: file.value } as const) : ({ kind: 'remote_write', url: (url as { value: string }).value } as const);
  const since = pick('since');
  const until = pick('until');
  let untilMs: number | undefined;
  if (until !== undefined) {
    untilMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(until.value) ? Date.parse(until.value) : NaN;
    if (!Number.isFinite(untilMs)) throw new BackfillFlagError(`${until.from} must be an RFC 3339 time such as 2026-11-26T12:00:00Z (got ${JSON.stringify(until.value)})`);
  }
  const rate = pick('requests-per-minute');
  if (rate !== undefined && (!/^\d{1,6}$/.test(rate.value) || Number(rate.value) < 1)) {
    throw new BackfillFlagError(`${rate.from} must be a whole number of at least 1 (got ${JSON.stringify(rate.value)})`);
  }
  const labels: Record<string, string> = {};
  for (const given of (values.label ?? []) as string[]) {
    const match = /^([a-zA-Z_][a-zA-Z0-9_]*)=(.*)$/s.exec(given);
    const name = match?.[1];
    if (name === undefined || name.startsWith('__') || RESERVED_LABELS.includes(name)) {
      throw new BackfillFlagError(`--label must be name=value with a label name of letters, digits and _, not starting with __ and none of ${RESERVED_LABELS.join(', ')} (got ${JSON.stringify(given)})`);
    }
    labels[name] = match?.[2] ?? '';
  }
  const chunk = pick('chunk-samples');
  if (chunk !== undefined && (!/^\d{1,9}$/.test(chunk.value) || Number(chunk.value) < 100)) {
    throw new BackfillFlagError(`${chunk.from} must be a whole number of at least 100 (got ${JSON.stringify(chunk.value)})`);
  }
  return {
    configFile: pick('config.file')?.value ?? DEFAULT_CONFIG_FILE,
    sinceMs: since === undefined ? undefined : parseSince(since.value, since.from),
    untilMs,
    stateFile: pick('state.file')?.value,
    output,
    progressFile: pick('progress.file')?.value ?? (output.kind === 'file' ? `${output.path}.progress.json` : 'monapi-backfill.progress.json'),
    requestsPerMinute: rate === undefined ? undefined : Number(rate.value),
    chunkSamples: chunk === undefined ? undefined : Number(chunk.value),
    labels,
    logLevel: oneOf('log.level', LOG_LEVELS, 'info'),
    logFormat: oneOf('log.format', LOG_FORMATS, stdoutIsTTY ? 'pretty' : 'json'),
  };
}

/** The command: flags, configuration, progress, then the backfill until done or stopped (SIGTERM, SIGINT). */
export async function backfillCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, clock: Clock = systemClock): Promise<number> {
  let flags: BackfillFlags | { help: string };
  try {
    flags = parseBackfillFlags(argv, env);
  } catch (error) {
    if (!(error instanceof BackfillFlagError)) throw error;
    stderr(`monapi-exporter backfill: ${error.message}\nRun monapi-exporter backfill --help for the list of flags.\n`);
    return 2;
  }
  if ('help' in flags) {
    stdout(`${flags.help}\n`);
    return 0;
  }
  const config = configOrExplain(flags.configFile, SINGLE_SHARD);
  if (config === undefined) return 1;
  const log = createLogger({ level: flags.logLevel, format: flags.logFormat });
  let boundaryOf: ((account: string, uuid: string) => Promise<LiveStart | undefined>) | undefined;
  try {
    boundaryOf = liveBoundaries(flags, config, log);
  } catch (error) {
    stderr(`monapi-exporter backfill: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const writer = historyWriter(flags, config.remoteWrite, proxySettingsFromEnv(env), clock, log);
  let progress: Progress;
  try {
    progress = Progress.open(flags.progressFile, writer.target, flags.untilMs ?? clock.now(), flags.untilMs !== undefined);
  } catch (error) {
    if (!(error instanceof ProgressError)) throw error;
    stderr(`monapi-exporter backfill: ${error.message}\n`);
    return 1;
  }
  writer.restore?.(progress.partSizes);
  const stop = new AbortController();
  const onSignal = (signal: string) => {
    log.info({ signal }, 'backfill: stopping after the chunk being written; run again to go on');
    stop.abort();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  // The clock's timers do not hold the process (the server does, when serving): this does while the backfill waits for its budget.
  const keepAlive = setInterval(() => undefined, 60_000);
  let report: BackfillReport;
  try {
    report = await runBackfill({ config, writer, progress, clock, log, proxy: proxySettingsFromEnv(env), sinceMs: flags.sinceMs, boundaryOf, requestsPerMinute: flags.requestsPerMinute, chunkSamples: flags.chunkSamples, labels: { ...config.remoteWrite?.externalLabels, ...flags.labels }, signal: stop.signal });
  } catch (error) {
    if (!(error instanceof HistoryRefusedError)) throw error;
    log.error({ err: error.message }, 'backfill: stopped');
    return 1;
  } finally {
    clearInterval(keepAlive);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
    await writer.close();
  }
  logReport(log, report);
  return report.complete ? 0 : 1;
}

/**
 * Where each host's history ends, from the live exporter's state file: where its counters
 * began counting. Without one, every host ends at --until (or the first run's start), which
 * the output says: the join with live counters is then only as good as that time.
 */
function liveBoundaries(flags: BackfillFlags, config: Config, log: ReturnType<typeof createLogger>): ((account: string, uuid: string) => Promise<LiveStart | undefined>) | undefined {
  if (flags.stateFile === undefined) {
    log.warn(
      'backfill: no --state.file: history ends at --until (default: when the first run started) for every host, not where the live counters began counting; the join with live data may count a few minutes twice or leave a gap (docs/backfill.md, "Joining live data")',
    );
    return undefined;
  }
  const { starts, problems } = liveStartsFrom(readStateFile(flags.stateFile), config.accounts);
  for (const problem of problems) log.warn({ stateFile: flags.stateFile, problem }, 'backfill: the state file does not say where some live counters began; those hosts end at --until');
  log.info({ stateFile: flags.stateFile, hosts: [...starts.values()].reduce((n, hosts) => n + hosts.size, 0) }, 'backfill: history ends where the live counters began counting');
  return (account, uuid) => Promise.resolve(starts.get(account)?.get(uuid));
}

/** Prometheus' own remote_write defaults where they fit a backfill: it may wait, never drop. */
export const BACKFILL_QUEUE = { maxSamplesPerSend: 5_000, capacity: 50_000, batchSendDeadlineMs: 5_000, minBackoffMs: 30, maxBackoffMs: 5_000, timeoutMs: 30_000 } as const;

/** With a `remote_write` section in the configuration, its authorization, headers and TLS settings are used. */
function historyWriter(
  flags: BackfillFlags,
  section: RemoteWriteConfig | undefined,
  proxy: ProxySettings,
  clock: Clock,
  log: ReturnType<typeof createLogger>,
): HistoryWriter & { restore?: (sizes: Readonly<Record<string, number>>) => void } {
  if (flags.output.kind === 'file') return new OpenMetricsFileWriter(flags.output.path);
  const made: { writer?: RemoteWriteHistoryWriter } = {};
  const endpoint = section === undefined ? { url: flags.output.url, timeoutMs: BACKFILL_QUEUE.timeoutMs, proxy } : endpointFromConfig(section, proxy, flags.output.url);
  const queue = new RemoteWriteQueue({
    sender: new HttpWriteSender(endpoint),
    clock,
    ...BACKFILL_QUEUE,
    whenFull: 'wait',
    retryOnHttp429: true,
    onEvent: (event) => {
      made.writer?.observe(event);
      if (event.type === 'retrying') log.warn({ attempt: event.attempt, waitMs: event.waitMs, reason: event.reason }, 'backfill: remote write failed; retrying');
      else if (event.type === 'recovered') log.info({ attempts: event.attempts }, 'backfill: remote write recovered');
    },
  });
  made.writer = new RemoteWriteHistoryWriter(flags.output.url, queue);
  return made.writer;
}

function logReport(log: ReturnType<typeof createLogger>, report: BackfillReport): void {
  const minutes = (report.finishedAtMs - report.startedAtMs) / 60_000;
  for (const a of report.accounts) {
    log.info({ account: a.account, hosts: a.hosts, hostsDone: a.hostsDone, hostsFailed: a.hostsFailed, requests: a.requests, samples: a.samples, minutes: Math.round(minutes * 10) / 10 }, 'backfill: account');
  }
  if (report.complete) log.info('backfill: complete');
  else if (report.earlierRun === undefined) log.warn('backfill: not complete; run the same command again to go on where it stopped');
}
