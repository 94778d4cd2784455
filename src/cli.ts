#!/usr/bin/env node
import { ConfigError, FlagError, loadConfig, parseFlags, summarizeConfig } from './config/index.js';
import { checkCapacity } from './config/capacity.js';
import { createLogger } from './lib/logger.js';
import { processRedactor } from './lib/redact.js';
import { startExporter, type RunningExporter } from './exporter.js';
import { startProbeServer, type RunningProbeServer } from './server/probe-server.js';
import { loadWebConfig, WebConfigError } from './server/web-config.js';
import { startWebServer } from './server/web-server.js';

/** SIGTERM/SIGINT: the whole shutdown, in-flight scrapes included, stays within this. */
const SHUTDOWN_LIMIT_MS = 5_000;

/** Everything the command line writes passes the redactor: an error may quote a configured key. */
const stdout = (text: string) => process.stdout.write(processRedactor.scrub(text));
const stderr = (text: string) => process.stderr.write(processRedactor.scrub(text));

/**
 * The exporter's command line: flags and environment, then the config file, then run
 * until SIGTERM or SIGINT; SIGHUP re-reads the configuration. Exit codes: 0 clean, 1 invalid
 * configuration, 2 bad flags.
 */
async function main(argv: readonly string[]): Promise<number> {
  // Node's default for SIGHUP is to exit: a reload signal must never kill the exporter, even while it starts.
  const running: { exporter?: RunningExporter; hupBeforeStart?: boolean } = {};
  process.on('SIGHUP', () => {
    if (running.exporter) running.exporter.reload();
    else running.hupBeforeStart = true;
  });

  let flags;
  try {
    flags = parseFlags(argv, process.env);
  } catch (err) {
    if (err instanceof FlagError) {
      stderr(`monapi-exporter: ${err.message}\nRun with --help for the list of flags.\n`);
      return 2;
    }
    throw err;
  }
  if ('help' in flags) {
    stdout(`${flags.help}\n`);
    return 0;
  }
  if ('version' in flags) {
    stdout(`${flags.version}\n`);
    return 0;
  }

  const shard = flags.shard;
  // The configuration, and how many accounts this process would poll: beyond the measured maximum it must be sharded.
  const load = (file: string) => {
    const loaded = loadConfig(file, process.env);
    checkCapacity(loaded, file, shard);
    return loaded;
  };
  let config;
  try {
    config = load(flags.configFile);
  } catch (err) {
    if (err instanceof ConfigError) {
      stderr(`monapi-exporter: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  if (flags.webConfigFile !== undefined) {
    try {
      loadWebConfig(flags.webConfigFile);
    } catch (err) {
      if (err instanceof WebConfigError) {
        stderr(`monapi-exporter: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
  }
  if (flags.configCheck) {
    const web = flags.webConfigFile === undefined ? '' : `\nweb configuration ${flags.webConfigFile} is valid`;
    stdout(`${summarizeConfig(config, flags.configFile)}${web}\n`);
    return 0;
  }

  const log = createLogger({ level: flags.logLevel, format: flags.logFormat });
  const configFile = flags.configFile;
  const enableLifecycle = flags.webEnableLifecycle;
  const webConfigFile = flags.webConfigFile;
  // Before the exporter, so kubelet gets answers while it starts.
  let probes: RunningProbeServer | undefined;
  if (flags.webProbeListenAddress !== undefined) {
    probes = await startProbeServer(flags.webProbeListenAddress, {
      ready: () => running.exporter?.ready() ?? false,
      reason: () => processRedactor.scrub(running.exporter ? running.exporter.notReadyReason() : 'starting'),
    });
    log.info({ url: probes.url }, 'probe listener (/-/healthy, /-/ready) on its own thread');
  }
  const exporter = await startExporter({
    config,
    listenAddress: flags.webListenAddress,
    telemetryPath: flags.webTelemetryPath,
    maxConcurrentScrapes: flags.webMaxRequests,
    log,
    shard: flags.shard,
    stateFile: flags.stateFile,
    reloadConfig: () => load(configFile),
    enableLifecycle,
    serve: (app, address, _lifecycle, registry) => startWebServer(app, { listenAddress: address, webConfigFile, log, registry }),
  });
  running.exporter = exporter;
  if (running.hupBeforeStart) exporter.reload();
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
  await exporter.stop();
  await probes?.close();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    stderr(`monapi-exporter: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
