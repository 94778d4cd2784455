import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { HistorySeries } from '../../src/backfill/replay.js';
import { OpenMetricsFileWriter } from '../../src/backfill/writers.js';
import { openNewFileSync, writeFileAtomically } from '../../src/lib/atomic-file.js';

/**
 * Every file the exporter and the backfill write is created exclusively, without following a
 * link: someone able to write a folder the exporter writes in must not make it overwrite a
 * file elsewhere by planting a symbolic link where a temporary file will be.
 */

const dir = mkdtempSync(join(tmpdir(), 'monapi-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function victim(name: string): string {
  const target = join(dir, name);
  writeFileSync(target, 'precious');
  return target;
}

const up = (timestampMs: number): HistorySeries => ({
  family: { name: 'up', type: 'gauge', help: 'Up.' },
  name: 'up',
  labels: {},
  samples: [{ timestampMs, value: 1 }],
});

describe('files written by the exporter', () => {
  it('a new file refuses a symbolic link planted at its name, and the target stays as it was', () => {
    const target = victim('victim-new.txt');
    const planted = join(dir, 'new-file.tmp');
    symlinkSync(target, planted);
    expect(() => openNewFileSync(planted, 0o600)).toThrow(/refusing to write .*new-file\.tmp/);
    expect(readFileSync(target, 'utf8')).toBe('precious');
    expect(lstatSync(planted).isSymbolicLink()).toBe(true);
  });

  it('an atomic write (state file, backfill progress) goes around a link planted at its temporary name', async () => {
    const sub = mkdtempSync(join(dir, 'progress-'));
    const target = victim('victim-progress.txt');
    const path = join(sub, 'progress.json');
    symlinkSync(target, `${path}.tmp-${process.pid}`);
    const refused: string[] = [];
    await writeFileAtomically(path, '{"ok":true}', { onRefused: (message) => refused.push(message) });
    expect(readFileSync(target, 'utf8')).toBe('precious');
    expect(readFileSync(path, 'utf8')).toBe('{"ok":true}');
    expect(refused).toHaveLength(1);
  });

  it('the backfill file writer removes the temporary output a run stopped before its rename left, and no running process\'s', async () => {
    const sub = mkdtempSync(join(dir, 'stray-'));
    const output = join(sub, 'history.om');
    // Above Linux's highest pid (2^22): no such process.
    const stray = join(sub, '.history.om.tmp-4194305');
    writeFileSync(stray, 'half an output');
    const running = join(sub, `.history.om.tmp-${process.ppid}`);
    writeFileSync(running, 'another run, still going');
    const writer = new OpenMetricsFileWriter(output);
    await writer.write([up(1_000)]);
    await writer.finish();
    expect(existsSync(stray)).toBe(false);
    expect(readFileSync(running, 'utf8')).toBe('another run, still going');
    expect(readFileSync(output, 'utf8').endsWith('# EOF\n')).toBe(true);
  });

  it('the backfill file writer writes through no link planted at its temporary name or at a part', async () => {
    const sub = mkdtempSync(join(dir, 'backfill-'));
    const target = victim('victim-backfill.txt');
    const output = join(sub, 'history.om');
    const writer = new OpenMetricsFileWriter(output);
    await writer.write([up(1_000)]);
    symlinkSync(target, join(sub, `.history.om.tmp-${process.pid}`));
    await expect(Promise.resolve().then(() => writer.finish())).rejects.toThrow(/refusing to write/);
    expect(readFileSync(target, 'utf8')).toBe('precious');

    const parts = join(sub, 'history.om.parts');
    const part = readdirSync(parts)[0] ?? 'none';
    rmSync(join(parts, part));
    symlinkSync(target, join(parts, part));
    expect(() => writer.write([up(2_000)])).toThrow(/ELOOP/);
    expect(readFileSync(target, 'utf8')).toBe('precious');
  });
});
