import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { atLowerPriority, requireProgram } from './processes.js';

const execFileAsync = promisify(execFile);

/** What one wrk run measured, read from its Lua `done` hook (exact figures, not the rounded table). */
export interface WrkResult {
  readonly requests: number;
  /** Every byte read, headers included. */
  readonly bytes: number;
  readonly seconds: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly errors: { readonly connect: number; readonly read: number; readonly write: number; readonly status: number; readonly timeout: number };
}

const DONE_SCRIPT = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"bytes":%d,"us":%d,"p50":%d,"p99":%d,"max":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.bytes, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
`;

export interface WrkOptions {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly connections: number;
  readonly threads: number;
  readonly seconds: number;
  readonly timeoutSeconds: number;
  /** Where the Lua script is written. */
  readonly dir: string;
  /** Nice steps below the harness that wrk runs at (see atLowerPriority). */
  readonly nice: number;
}

export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const wrk = requireProgram('wrk', 'wrk');
  const script = join(options.dir, 'wrk-done.lua');
  writeFileSync(script, DONE_SCRIPT);
  const args = [
    '-t',
    String(Math.min(options.threads, options.connections)),
    '-c',
    String(options.connections),
    '-d',
    `${options.seconds}s`,
    '--timeout',
    `${options.timeoutSeconds}s`,
    '-s',
    script,
    ...Object.entries(options.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
    options.url,
  ];
  const [program, ...programArgs] = atLowerPriority([wrk, ...args], options.nice);
  const { stdout } = await execFileAsync(program as string, programArgs, { maxBuffer: 16 * 1024 * 1024 });
  const line = stdout.split('\n').find((l) => l.startsWith('WRK_RESULT '));
  if (!line) throw new Error(`wrk printed no result for ${options.url}:\n${stdout}`);
  const r = JSON.parse(line.slice('WRK_RESULT '.length)) as Record<string, number>;
  const n = (key: string): number => r[key] ?? NaN;
  return {
    requests: n('requests'),
    bytes: n('bytes'),
    seconds: n('us') / 1e6,
    p50Ms: n('p50') / 1000,
    p99Ms: n('p99') / 1000,
    maxMs: n('max') / 1000,
    errors: { connect: n('connect'), read: n('read'), write: n('write'), status: n('status'), timeout: n('timeout') },
  };
}

/**
 * Why a run cannot count as `connections` scrapers getting full 200 answers of `bodyLength`
 * bytes, or undefined. wrk counts a response only once it has read the whole body its
 * Content-Length announces; a non-2xx answer is a status error. So: no errors of any kind, and
 * the bytes read cover every counted response at full length (plus at most the headers, and
 * what was in flight when the run ended). The exporter's own body grows a little while it is
 * scraped (its self-metrics count the scrapes), so for it only the lower bound holds.
 */
export function fullLengthProblem(result: WrkResult, bodyLength: number, connections: number, bodyMayGrow = false): string | undefined {
  const e = result.errors;
  if (result.requests === 0) return 'no response completed';
  if (e.status > 0) return `${e.status} answers were not 2xx/3xx`;
  if (e.connect + e.read + e.write + e.timeout > 0) return `errors: connect ${e.connect}, read ${e.read}, write ${e.write}, timeout ${e.timeout}`;
  const minimum = result.requests * bodyLength;
  const maximum = (result.requests + connections) * (bodyLength + 2048);
  if (result.bytes < minimum) return `read ${result.bytes} bytes for ${result.requests} responses of ${bodyLength} bytes: some were short`;
  if (!bodyMayGrow && result.bytes > maximum) return `read ${result.bytes} bytes for ${result.requests} responses of ${bodyLength} bytes: more than full length`;
  return undefined;
}
