import type { Logger } from 'pino';
import { ConfigError } from '../config/index.js';
import type { Config } from '../config/types.js';
import { configFiles, watchConfigFiles } from '../config/watch.js';
import { startExporter, type RunningExporter } from '../exporter/index.js';
import { loadConfig, summarizeConfig } from '../exporter/config.js';
import { systemClock } from '../lib/clock.js';
import { createLogger } from '../lib/logger.js';
import { processRedactor } from '../lib/redact.js';
import { startProbeServer, type RunningProbeServer } from '../server/probe-server.js';
import { loadWebConfig, WebConfigError } from '../server/web-config.js';
import { mainThreadWebServer } from '../server/web-server.js';
import { checkCapacity } from '../sharding/capacity.js';
import type { ShardAssignment } from '../sharding/index.js';
import type { Flags } from './flags.js';
import { stderr, stdout } from './output.js';

/** SIGTERM/SIGINT: the whole shutdown, in-flight scrapes included, stays within this. */
const SHUTDOWN_LIMIT_MS = 5_000;

/** The configuration, and how many accounts this process would poll: beyond the measured maximum it must be sharded. */
export function loadForShard(file: string, shard: ShardAssignment): Config {
  const loaded = loadConfig(file, process.env);
  checkCapacity(loaded, file, shard);
  return loaded;
}

/** Loads the configuration for a command; on a ConfigError says why and gives undefined. */
export function configOrExplain(file: string, shard: ShardAssignment): Config | undefined {
  try {
    return loadForShard(file, shard);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    stderr(`monapi-exporter: ${err.message}\n`);
    return undefined;
  }
}

/** Whether the web configuration file loads; says why on stderr when it does not. */
function webConfigLoads(file: string): boolean {
  try {
    loadWebConfig(file);
    return true;
  } catch (err) {
    if (!(err instanceof WebConfigError)) throw err;
    stderr(`monapi-exporter: ${err.message}\n`);
    return false;
  }
}

async function startProbes(address: string, exporter: () => RunningExporter | undefined, log: Logger): Promise<RunningProbeServer> {
  const probes = await startProbeServer(address, {
    ready: () => exporter()?.ready() ?? false,
    reason: () => processRedactor.scrub(exporter()?.notReadyReason() ?? 'starting'),
  });
  log.info({ url: probes.url }, 'probe listener (/-/healthy, /-/ready) on its own thread');
  return probes;
}

/**
 * The exporter itself: the config file, then run until SIGTERM or SIGINT; SIGHUP, or a change
 * of the config file or a key or CA file it names (`--config.watch-interval`), re-reads the
 * configuration. Exit codes: 0 clean, 1 invalid configuration.
 */
export async function serve(flags: Flags): Promise<number> {
  // Node's default for SIGHUP is to exit: a reload signal must never kill the exporter, even while it starts.
  const running: { exporter?: RunningExporter; reloadBeforeStart?: boolean } = {};
  const reload = () => {
    if (running.exporter) running.exporter.reload();
    else running.reloadBeforeStart = true;
  };
  process.on('SIGHUP', reload);

  const config = configOrExplain(flags.configFile, flags.shard);
  if (config === undefined) return 1;
  if (flags.webConfigFile !== undefined && !webConfigLoads(flags.webConfigFile)) return 1;
  if (flags.configCheck) {
    const web = flags.webConfigFile === undefined ? '' : `\nweb configuration ${flags.webConfigFile} is valid`;
    stdout(`${summarizeConfig(config, flags.configFile)}${web}\n`);
    return 0;
  }

  const log = createLogger({ level: flags.logLevel, format: flags.logFormat });
  const { configFile, webConfigFile } = flags;
  // The configuration in force: the files it names are the ones watched.
  let current = config;
  // Watching starts from the files as they were loaded, so a change during the start is not lost.
  const watch =
    flags.configWatchIntervalMs > 0
      ? watchConfigFiles({
          intervalMs: flags.configWatchIntervalMs,
          clock: systemClock,
          files: () => configFiles(configFile, current),
          onChange: (changed) => {
            log.info({ files: changed }, 'configuration files changed; reloading');
            reload();
          },
        })
      : undefined;
  // Before the exporter, so kubelet gets answers while it starts.
  const probes = flags.webProbeListenAddress === undefined ? undefined : await startProbes(flags.webProbeListenAddress, () => running.exporter, log);
  const exporter = await startExporter({
    config,
    listenAddress: flags.webListenAddress,
    telemetryPath: flags.webTelemetryPath,
    maxConcurrentScrapes: flags.webMaxRequests,
    log,
    shard: flags.shard,
    stateFile: flags.stateFile,
    reloadConfig: () => {
      // A configuration that loads is applied at once (applyConfig does not fail).
      current = loadForShard(configFile, flags.shard);
      return current;
    },
    enableLifecycle: flags.webEnableLifecycle,
    serve: mainThreadWebServer({ webConfigFile, log }),
    servingThreads: flags.webServingThreads,
    ...(webConfigFile === undefined ? {} : { webConfigFile }),
  });
  running.exporter = exporter;
  if (running.reloadBeforeStart) exporter.reload();
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      log.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
  // Anything still holding the event loop after a clean stop must not keep the process alive.
  setTimeout(() => process.exit(0), SHUTDOWN_LIMIT_MS).unref();
  watch?.stop();
  await exporter.stop();
  await probes?.close();
  return 0;
}
