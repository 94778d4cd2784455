import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { BackfillReport } from '../../src/backfill/run.js';
import { backfillOnce, MemoryHistoryWriter, startBackfillWorld, withTimePassing, type BackfillWorld } from './in-process.js';

/**
 * `--requests-per-minute` above what the key allows only draws 429s: the backfill holds its
 * rate to the account's limit (the configuration's, or a lower one `/account` states) and says
 * so. The simulator limits the key to 120 a minute with a burst of 5, and the backfill is asked
 * for 600; time passes only as the backfill waits for its budget.
 */

const DAY_MS = 86_400_000;

let world: BackfillWorld | undefined;
let dir: string | undefined;

afterEach(async () => {
  await world?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function backfillAt600(accountYaml: string): Promise<{ report: BackfillReport; world: BackfillWorld; log: string }> {
  world = await startBackfillWorld({ simulator: { seed: 'rate', hosts: 3, rateLimitPerMinute: 120, burst: 5 }, accountYaml });
  dir = mkdtempSync(join(tmpdir(), 'monapi-backfill-rate-'));
  const lines: string[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, next) => (lines.push(chunk.toString()), next()) }));
  const run = backfillOnce(world, { writer: new MemoryHistoryWriter(), progressFile: join(dir, 'progress.json'), sinceMs: 8 * DAY_MS, requestsPerMinute: 600, log });
  // Small steps: a request due within one goes out at its end, at most 10 ms late.
  const report = await withTimePassing(world, run, 10);
  return { report, world, log: lines.join('') };
}

describe('backfill --requests-per-minute=600 against a key limited to 120 a minute', () => {
  it.each([
    { limitFrom: 'the configuration', accountYaml: '    rate_limit:\n      requests_per_minute: 120\n      burst: 5\n' },
    { limitFrom: '/account (the configuration says 600)', accountYaml: '    rate_limit:\n      requests_per_minute: 600\n      burst: 100\n' },
  ])('known from $limitFrom: holds its rate to 120 a minute, draws no 429, and says so', async ({ accountYaml }) => {
    const { report, world, log } = await backfillAt600(accountYaml);
    expect(report.complete).toBe(true);
    expect(report.accounts[0]?.requests, 'requests sent: more than the key\'s burst').toBeGreaterThan(5);
    expect(world.answers.filter((a) => a.status === 429).length, 'answers 429').toBe(0);
    // Past the key's burst of 5, one request every 500 ms at most: 120 a minute.
    const gaps = world.answers.slice(5).map((answer, i) => answer.atMs - (world.answers[i + 4] as { atMs: number }).atMs);
    expect(Math.min(...gaps), 'the shortest time between two requests past the burst, ms').toBeGreaterThanOrEqual(500);
    expect(log).toMatch(/"requested":600/);
    expect(log).toMatch(/above the account's rate limit/);
    expect(log).toMatch(/"requestsPerMinute":120,"msg":"backfill: starting"/);
  });
});
