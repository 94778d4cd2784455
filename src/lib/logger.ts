/**
 * The program's logger: pino, JSON by default, human-readable through pino-pretty when
 * asked. pino-pretty is a devDependency, absent from the production image, so it is
 * loaded on demand and its absence falls back to JSON with a warning rather than a crash.
 * Fields that may hold a key are redacted wherever they appear in a logged object, and every
 * line is scrubbed of the configured keys, wherever they appear in it (src/lib/redact.ts).
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import { processRedactor, type Redactor } from './redact.js';

export type { Logger } from 'pino';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** Where lines go. Default: stdout. */
  readonly destination?: DestinationStream;
  /** Test seam: loads pino-pretty; returns undefined when it is not installed. */
  readonly loadPretty?: () => PrettyFactory | undefined;
  /** Scrubs every line written of every secret it knows, in any form. Default: the process's. */
  readonly redactor?: Redactor;
}

type PrettyFactory = (options: { destination?: DestinationStream | number; colorize?: boolean; sync?: boolean }) => DestinationStream;

export const REDACTED = '[REDACTED]';

const SECRET_FIELDS = ['apiKey', 'api_key', 'marketplaceKey', 'marketplace_key', 'authorization', 'Authorization', 'password', 'token'];
const SECRET_HEADERS = [
  'authorization',
  'Authorization',
  '"x-api-key"',
  '"X-Api-Key"',
  '"x-rapidapi-key"',
  '"X-RapidAPI-Key"',
  '"x-marketplace-key"',
  '"X-Marketplace-Key"',
];

/**
 * Paths the redaction covers: a secret field at the top level or one or two levels down
 * (`{account: {apiKey}}`, `{config: {accounts: ...}}` is covered by Secret's own toJSON),
 * and key-bearing headers under `headers`, `req.headers`, `request.headers`.
 */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.*.${field}`]),
  ...SECRET_HEADERS.flatMap((header) => {
    const access = header.startsWith('"') ? `[${header}]` : `.${header}`;
    return [`headers${access}`, `*.headers${access}`, `*.*.headers${access}`];
  }),
];

const require = createRequire(import.meta.url);

function loadPinoPretty(): PrettyFactory | undefined {
  try {
    return require('pino-pretty') as PrettyFactory;
  } catch {
    return undefined;
  }
}

/** `createLogger({level: 'info', format: 'json'})`. */
export function createLogger(options: LoggerOptions): Logger {
  const redactor = options.redactor ?? processRedactor;
  const base = {
    level: options.level,
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    timestamp: pino.stdTimeFunctions.isoTime,
    base: undefined,
    // `"level":"info"` rather than 30: readable in any log tool without pino's number table (formatters below).
    formatters: {
      level: (label: string) => ({ level: label }),
      // Each string is scrubbed before JSON escapes it: a password with a quote or a backslash was left escaped in the line.
      log: (object: Record<string, unknown>) => scrubLogged(object, redactor, 0) as Record<string, unknown>,
    },
    hooks: {
      logMethod(this: Logger, args: Parameters<Logger['info']>, method: (...args: Parameters<Logger['info']>) => void) {
        method.apply(this, args.map((arg) => (typeof arg === 'string' ? redactor.scrub(arg) : arg)) as Parameters<Logger['info']>);
      },
      // The last step before a line leaves: whatever field or message carries a key, in whatever form.
      streamWrite: (line: string) => redactor.scrub(line),
    },
  };
  if (options.format === 'pretty') {
    const pretty = (options.loadPretty ?? loadPinoPretty)();
    if (pretty !== undefined) {
      const stream = pretty({
        ...(options.destination !== undefined && { destination: options.destination, colorize: false }),
        sync: true,
      });
      return pino(base, stream);
    }
    const logger = options.destination === undefined ? pino(base) : pino(base, options.destination);
    logger.warn('log format "pretty" needs the pino-pretty package, which is not installed; logging JSON instead');
    return logger;
  }
  return options.destination === undefined ? pino(base) : pino(base, options.destination);
}

/** Deep enough for any object the exporter logs; deeper values are left to the line's own scrub. */
const MAX_SCRUB_DEPTH = 8;

/**
 * A copy of a logged object with its strings scrubbed: plain objects, arrays and errors (as
 * pino would serialise them); any other object (a Secret, a Buffer) is left to its own JSON.
 */
function scrubLogged(value: unknown, redactor: Redactor, depth: number): unknown {
  if (typeof value === 'string') return redactor.scrub(value);
  if (value === null || typeof value !== 'object' || depth > MAX_SCRUB_DEPTH) return value;
  if (value instanceof Error) {
    // The same kind of error (pino names its type) with its message, stack, cause and fields scrubbed.
    const copy: object = Object.create(Object.getPrototypeOf(value) as object | null) as object;
    for (const key of Object.getOwnPropertyNames(value)) {
      const { enumerable } = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
      // `stack` is an accessor bound to the original: read it there, keep a plain value.
      const item = scrubLogged((value as unknown as Record<string, unknown>)[key], redactor, depth + 1);
      Object.defineProperty(copy, key, { value: item, enumerable: enumerable === true, writable: true, configurable: true });
    }
    return copy;
  }
  if (Array.isArray(value)) return value.map((item) => scrubLogged(item, redactor, depth + 1));
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = scrubLogged(item, redactor, depth + 1);
  return out;
}
