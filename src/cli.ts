#!/usr/bin/env node
import { ConfigError } from './config/index.js';
import { FlagError, parseFlags } from './command-line/flags.js';
import { loadConfig, summarizeConfig } from './exporter/config.js';
import { configFiles, watchConfigFiles } from './config/watch.js';
import { systemClock } from './lib/clock.js';
import { createLogger } from './lib/logger.js';
import { startExporter, type RunningExporter } from './exporter/index.js';
import { withLifecycle } from './server/lifecycle.js';
import { loadWebConfig, WebConfigError } from './server/web-config.js';
import { startWebServer } from './server/web-server.js';

/** SIGTERM/SIGINT: the whole shutdown, in-flight scrapes included, stays within this. */
const SHUTDOWN_LIMIT_MS = 5_000;

/**
 * The exporter's command line: flags and environment, then the config file, then run
 * until SIGTERM or SIGINT; SIGHUP, or a change of the config file or a key or CA file it names
 * (`--config.watch-interval`), re-reads the configuration. Exit codes: 0 clean, 1 invalid
 * configuration, 2 bad flags.
 */
async function main(argv: readonly string[]): Promise<number> {
  // Node's default for SIGHUP is to exit: a reload signal must never kill the exporter, even while it starts.
  const running: { exporter?: RunningExporter; reloadBeforeStart?: boolean } = {};
  const reload = () => {
    if (running.exporter) running.exporter.reload();
    else running.reloadBeforeStart = true;
  };
  process.on('SIGHUP', reload);

  let flags;
  try {
    flags = parseFlags(argv, process.env);
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`monapi-exporter: ${err.message}\nRun with --help for the list of flags.\n`);
      return 2;
    }
    throw err;
  }
  if ('help' in flags) {
    process.stdout.write(`${flags.help}\n`);
    return 0;
  }
  if ('version' in flags) {
    process.stdout.write(`${flags.version}\n`);
    return 0;
  }

  let config;
  try {
    config = loadConfig(flags.configFile, process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`monapi-exporter: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  if (flags.webConfigFile !== undefined && !webConfigLoads(flags.webConfigFile)) return 1;
  if (flags.configCheck) {
    const web = flags.webConfigFile === undefined ? '' : `\nweb configuration ${flags.webConfigFile} is valid`;
    process.stdout.write(`${summarizeConfig(config, flags.configFile)}${web}\n`);
    return 0;
  }

  const log = createLogger({ level: flags.logLevel, format: flags.logFormat });
  const configFile = flags.configFile;
  const enableLifecycle = flags.webEnableLifecycle;
  const webConfigFile = flags.webConfigFile;
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
      current = loadConfig(configFile, process.env);
      return current;
    },
    serve: (app, address, lifecycle) => startWebServer(withLifecycle(app, lifecycle, enableLifecycle), { listenAddress: address, webConfigFile, log }),
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
  return 0;
}

/** Whether the web configuration file loads; says why on stderr when it does not. */
function webConfigLoads(file: string): boolean {
  try {
    loadWebConfig(file);
    return true;
  } catch (err) {
    if (!(err instanceof WebConfigError)) throw err;
    process.stderr.write(`monapi-exporter: ${err.message}\n`);
    return false;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`monapi-exporter: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
