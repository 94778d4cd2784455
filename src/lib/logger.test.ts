import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Secret } from '../config/secret.js';
import { createLogger, REDACTED, type LogFormat } from './logger.js';
import { Redactor, REDACTED_TEXT } from './redact.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { lines, destination };
}

const KEYS = ['k-top', 'k-nested', 'k-snake', 'k-auth', 'k-xapi', 'k-rapid', 'k-req', 'k-deep', 'k-market', 'k-secret-object'];

function logEverything(format: LogFormat, loadPretty?: () => undefined): string {
  const { lines, destination } = capture();
  const log = createLogger({ level: 'debug', format, destination, ...(loadPretty && { loadPretty }) });
  log.info(
    {
      apiKey: 'k-top',
      account: { name: 'prod', apiKey: 'k-nested', api_key: 'k-snake' },
      headers: { authorization: 'Bearer k-auth', 'x-api-key': 'k-xapi', 'x-rapidapi-key': 'k-rapid', accept: 'application/json' },
      req: { headers: { Authorization: 'Bearer k-req' } },
      job: { account: { apiKey: 'k-deep' } },
      releases: { marketplaceKey: 'k-market' },
      wrapped: { value: new Secret('k-secret-object') },
    },
    'polled',
  );
  return lines.join('');
}

describe('createLogger', () => {
  it.each(['json', 'pretty'] as const)('redacts every key-bearing field in %s output', (format) => {
    const output = logEverything(format);
    expect(output).toContain('polled');
    expect(output).toContain(REDACTED);
    expect(output).toContain('application/json');
    for (const key of KEYS) expect(output).not.toContain(key);
  });

  it('writes one JSON object a line with a level name, an ISO time and the message', () => {
    const { lines, destination } = capture();
    createLogger({ level: 'info', format: 'json', destination }).info({ account: 'prod' }, 'started');
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(record).toMatchObject({ level: 'info', account: 'prod', msg: 'started' });
    expect(record.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it.each([
    ['debug', ['debug', 'info', 'warn', 'error']],
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
  ] as const)('at level %s writes %j', (level, expected) => {
    const { lines, destination } = capture();
    const log = createLogger({ level, format: 'json', destination });
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(lines.map((line) => (JSON.parse(line) as { level: string }).level)).toEqual(expected);
  });

  it('falls back to JSON with a warning when pino-pretty is missing', () => {
    const { lines, destination } = capture();
    createLogger({ level: 'info', format: 'pretty', destination, loadPretty: () => undefined }).info('hello');
    const records = lines.map((line) => JSON.parse(line) as { level: string; msg: string });
    expect(records).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'log format "pretty" needs the pino-pretty package, which is not installed; logging JSON instead' }),
      expect.objectContaining({ level: 'info', msg: 'hello' }),
    ]);
  });

  it('still redacts in the fallback', () => {
    const output = logEverything('pretty', () => undefined);
    for (const key of KEYS) expect(output).not.toContain(key);
  });

  it('writes human-readable lines with pino-pretty when it is installed', () => {
    const { lines, destination } = capture();
    createLogger({ level: 'info', format: 'pretty', destination }).info({ account: 'prod' }, 'hello');
    const text = lines.join('');
    expect(text).toMatch(/INFO.*hello/);
    expect(() => JSON.parse(text) as unknown).toThrow();
  });

  it.each(['json', 'pretty'] as const)('scrubs a known key from any part of a %s line, in any form', (format) => {
    const key = 'canary-Log-k3y-77aa';
    const redactor = new Redactor();
    redactor.add(key);
    const { lines, destination } = capture();
    const log = createLogger({ level: 'debug', format, destination, redactor });
    log.warn({ upgrade: `https://x.example/?k=${encodeURIComponent(key.toUpperCase())}`, err: { message: `refused ${key}` } }, `base64 ${Buffer.from(key).toString('base64')}`);
    const output = lines.join('');
    expect(output).toContain(REDACTED_TEXT);
    expect(redactor.finds(output)).toBe(false);
  });
});
