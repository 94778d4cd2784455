#!/usr/bin/env node
import { backfillCommand } from './command-line/backfill.js';
import { FlagError, parseFlags } from './command-line/flags.js';
import { stderr, stdout } from './command-line/output.js';
import { probe } from './command-line/probe.js';
import { serve } from './command-line/serve.js';

/**
 * The exporter's command line: flags and environment, then the command: serving (no command
 * word), `probe` (src/command-line/probe.ts) or `backfill` (src/command-line/backfill.ts).
 * Exit codes: 0 clean, 1 invalid configuration, 2 bad flags.
 */
async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'probe') return probe(argv.slice(1));
  if (argv[0] === 'backfill') return backfillCommand(argv.slice(1));
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
  return serve(flags);
}

// A crash's message and stack pass the redactor too: Node's own report would print them as they are.
const crash = (err: unknown) => {
  stderr(`monapi-exporter: crashed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    stderr(`monapi-exporter: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
