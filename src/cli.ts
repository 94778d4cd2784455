#!/usr/bin/env node
import { ConfigError, FlagError, loadConfig, parseFlags, summarizeConfig } from './config/index.js';
import { createLogger } from './lib/logger.js';
import { startExporter } from './exporter.js';

/**
 * The exporter's command line: flags and environment, then the config file, then run
 * until SIGTERM or SIGINT. Exit codes: 0 clean, 1 invalid configuration, 2 bad flags.
 */
async function main(argv: readonly string[]): Promise<number> {
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
  if (flags.configCheck) {
    process.stdout.write(`${summarizeConfig(config, flags.configFile)}\n`);
    return 0;
  }

  const log = createLogger({ level: flags.logLevel, format: flags.logFormat });
  const exporter = await startExporter({
    config,
    listenAddress: flags.webListenAddress,
    telemetryPath: flags.webTelemetryPath,
    maxConcurrentScrapes: flags.webMaxRequests,
    log,
    shard: flags.shard,
  });
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      log.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
  // Anything still holding the event loop after a clean stop must not keep the process alive.
  setTimeout(() => process.exit(0), 5_000).unref();
  await exporter.stop();
  return 0;
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
