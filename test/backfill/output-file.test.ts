import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, type Mode, type OpenMode, type RmOptions } from 'node:fs';
import type * as FileSystem from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { OpenMetricsFileWriter } from '../../src/backfill/writers.js';
import { backfillOnce, startBackfillWorld, type BackfillWorld } from './in-process.js';

/**
 * The backfill's OpenMetrics file is complete or not there, whatever stops the backfill and
 * however often it runs: the process is "killed" (a file system call throws, nothing after it
 * runs) at each step of turning the parts into the output, then the same backfill runs again,
 * and its output must be the output of a run never stopped, byte for byte (every family, every
 * sample). A finished backfill run again must leave its output as it is and say so.
 */

const CRASH = 'simulated kill';
type CrashPoint = 'before-output-file' | 'before-rename' | 'after-rename' | 'removing-parts' | 'after-parts-removed';

/** File system calls the writer makes, in order, as far as making the output goes. */
type Step = 'output synced' | 'output renamed' | 'folder synced' | 'parts removed';

const faults = vi.hoisted(() => ({ crashAt: undefined as CrashPoint | undefined, output: '', steps: [] as Step[], temporaryFds: new Set<number>() }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof FileSystem>();
  const path = await import('node:path');
  const crash = (): never => {
    faults.crashAt = undefined;
    throw new Error('simulated kill');
  };
  const isTemporary = (file: unknown) =>
    typeof file === 'string' && faults.output !== '' && path.dirname(file) === path.dirname(faults.output) && path.basename(file).startsWith(`.${path.basename(faults.output)}.tmp`);
  return {
    ...fs,
    openSync(file: string, flags: OpenMode, mode?: Mode): number {
      if (isTemporary(file) && faults.crashAt === 'before-output-file') crash();
      const fd = fs.openSync(file, flags, mode);
      if (isTemporary(file)) faults.temporaryFds.add(fd);
      return fd;
    },
    closeSync(fd: number): void {
      faults.temporaryFds.delete(fd);
      fs.closeSync(fd);
    },
    fsyncSync(fd: number): void {
      fs.fsyncSync(fd);
      if (faults.temporaryFds.has(fd)) faults.steps.push('output synced');
      else if (faults.output !== '' && fs.fstatSync(fd).isDirectory()) faults.steps.push('folder synced');
    },
    renameSync(from: string, to: string): void {
      if (to !== faults.output) return fs.renameSync(from, to);
      if (faults.crashAt === 'before-rename') crash();
      fs.renameSync(from, to);
      faults.steps.push('output renamed');
      if (faults.crashAt === 'after-rename') crash();
    },
    rmSync(folder: string, options?: RmOptions): void {
      if (folder !== `${faults.output}.parts`) return fs.rmSync(folder, options);
      if (faults.crashAt === 'removing-parts') {
        // Killed part-way: some parts are gone, the rest are still there.
        const parts = fs.readdirSync(folder).sort();
        for (const part of parts.slice(0, Math.ceil(parts.length / 2))) fs.unlinkSync(path.join(folder, part));
        crash();
      }
      fs.rmSync(folder, options);
      faults.steps.push('parts removed');
      if (faults.crashAt === 'after-parts-removed') crash();
    },
  };
});

const HOUR_MS = 3_600_000;

let world: BackfillWorld;
let root: string;
let uninterrupted: string;

/** Families and samples of an OpenMetrics text. */
function contents(text: string): { families: number; samples: number; eof: boolean } {
  const lines = text.split('\n').filter((line) => line !== '');
  return { families: lines.filter((l) => l.startsWith('# TYPE ')).length, samples: lines.filter((l) => !l.startsWith('#')).length, eof: lines.at(-1) === '# EOF' };
}

function backfillInto(folder: string, log = pino({ level: 'silent' })) {
  const output = join(folder, 'history.om');
  return backfillOnce(world, { writer: new OpenMetricsFileWriter(output), progressFile: `${output}.progress.json`, sinceMs: 3 * HOUR_MS, log, extra: { chunkSamples: 20_000 } });
}

function logLines(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }));
  return { log, lines };
}

beforeAll(async () => {
  world = await startBackfillWorld({ simulator: { seed: 'output-file', hosts: 3 } });
  root = mkdtempSync(join(tmpdir(), 'monapi-backfill-file-'));
  const folder = freshFolder('uninterrupted');
  const report = await backfillInto(folder);
  expect(report.complete).toBe(true);
  uninterrupted = readFileSync(join(folder, 'history.om'), 'utf8');
}, 60_000);

afterAll(async () => {
  await world?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

beforeEach(() => {
  faults.crashAt = undefined;
  faults.output = '';
  faults.steps = [];
});

function freshFolder(name: string): string {
  return mkdtempSync(join(root, `${name}-`));
}

describe('the backfill\'s OpenMetrics file', () => {
  it('holds every host\'s history, families and samples', () => {
    expect(contents(uninterrupted).families).toBeGreaterThan(50);
    expect(contents(uninterrupted).samples).toBeGreaterThan(40_000);
    expect(contents(uninterrupted).eof).toBe(true);
  });

  it('is written to a temporary file that is synced, renamed into place and its folder synced, and only then are the parts removed', async () => {
    const folder = freshFolder('steps');
    faults.output = join(folder, 'history.om');
    expect((await backfillInto(folder)).complete).toBe(true);
    // From the output's sync on, each step once (the progress file's saves sync the folder too).
    const fromOutput = faults.steps.slice(faults.steps.indexOf('output synced'));
    expect(fromOutput.filter((step, i) => step !== fromOutput[i - 1])).toEqual(['output synced', 'output renamed', 'folder synced', 'parts removed']);
    expect(readFileSync(faults.output, 'utf8')).toBe(uninterrupted);
  });

  it.each<{ crashAt: CrashPoint; when: string }>([
    { crashAt: 'before-output-file', when: 'once every part is written, before the output is' },
    { crashAt: 'before-rename', when: 'once the output is written and synced, before it is renamed into place' },
    { crashAt: 'after-rename', when: 'right after the output is renamed into place, before the parts are removed' },
    { crashAt: 'removing-parts', when: 'half-way through removing the parts' },
    { crashAt: 'after-parts-removed', when: 'right after the parts are removed' },
  ])('killed $when, then run again, is the output of a run never stopped', async ({ crashAt }) => {
    const folder = freshFolder(crashAt);
    const output = join(folder, 'history.om');
    faults.output = output;
    faults.crashAt = crashAt;
    await expect(backfillInto(folder)).rejects.toThrow(CRASH);
    expect(faults.crashAt, 'the kill happened').toBeUndefined();

    const again = await backfillInto(folder);
    expect(again.complete).toBe(true);
    const text = readFileSync(output, 'utf8');
    expect(contents(text)).toEqual(contents(uninterrupted));
    expect(text === uninterrupted, 'the same bytes as the run never stopped').toBe(true);
    expect(readdirSync(folder).sort(), 'nothing left but the output and the progress file').toEqual(['history.om', 'history.om.progress.json']);
  });

  it('run again once complete, is left as it is, without a request upstream, and the run says so', async () => {
    const folder = freshFolder('twice');
    const output = join(folder, 'history.om');
    expect((await backfillInto(folder)).complete).toBe(true);
    const requestsBefore = world.answers.length;
    const { log, lines } = logLines();
    const again = await backfillInto(folder, log);
    expect(again.complete).toBe(true);
    expect(readFileSync(output, 'utf8') === uninterrupted, 'the same bytes as the first run').toBe(true);
    expect(world.answers.length - requestsBefore, 'requests upstream').toBe(0);
    expect(lines.join('')).toMatch(/already complete/);
  });

  it('is not complete after an account failed, and the next run writes the whole history', async () => {
    const folder = freshFolder('account-failed');
    world.answerInstead = (path) => (path.endsWith('/hosts') ? { status: 404, body: '{"error":"not_found","message":"no such resource"}' } : undefined);
    try {
      const failed = await backfillInto(folder);
      expect(failed.accounts[0]?.errors.join('')).toMatch(/hosts/);
      expect(failed.complete).toBe(false);
    } finally {
      world.answerInstead = undefined;
    }
    const again = await backfillInto(folder);
    expect(again.complete).toBe(true);
    expect(readFileSync(join(folder, 'history.om'), 'utf8') === uninterrupted, 'the same bytes as the run never stopped').toBe(true);
  });

  it('run again once complete, but with the output gone, says so and is not complete rather than writing less', async () => {
    const folder = freshFolder('moved');
    const output = join(folder, 'history.om');
    expect((await backfillInto(folder)).complete).toBe(true);
    rmSync(output);
    const { log, lines } = logLines();
    const again = await backfillInto(folder, log);
    expect(again.complete).toBe(false);
    expect(existsSync(output)).toBe(false);
    expect(lines.join('')).toMatch(/remove the progress file/);
  });
});
