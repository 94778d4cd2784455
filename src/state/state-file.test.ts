import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadStateFile, readStateFile, STATE_FORMAT, writeStateFile } from './state-file.js';

const dir = mkdtempSync(join(tmpdir(), 'monapi-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const snapshot = { savedAtMs: NOW, accounts: { prod: { baseUrl: 'https://m.example.com/api/v2', sources: { alerts: { started: true } } } } };

describe('the state file', () => {
  it('round-trips a snapshot, written with no temporary file left behind and readable only by its owner', async () => {
    const path = join(dir, 'ok.json');
    const bytes = await writeStateFile(path, snapshot);
    expect(bytes).toBe(readFileSync(path).length);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
    expect(loadStateFile(path, NOW)).toEqual({ kind: 'loaded', snapshot });
  });

  it('is read by another process (the backfill) without changing anything: a bad one is an error naming why, left where it is with its temporaries', async () => {
    const path = join(dir, 'read-only.json');
    await writeStateFile(path, snapshot);
    writeFileSync(`${path}.tmp-12345`, 'a save under way');
    expect(readStateFile(path)).toEqual(snapshot);
    writeFileSync(path, '{"format":"other"}');
    expect(() => readStateFile(path)).toThrow(/read-only.json: not a monapi-exporter-state file of version 1/);
    expect(() => readStateFile(join(dir, 'absent.json'))).toThrow(/absent.json: .*not found/);
    expect(readFileSync(path, 'utf8')).toBe('{"format":"other"}');
    expect(existsSync(`${path}.tmp-12345`)).toBe(true);
  });

  it('is simply absent on a first start', () => {
    expect(loadStateFile(join(dir, 'never-written.json'), NOW)).toEqual({ kind: 'none' });
  });

  it.each([
    ['cut short', (text: string) => text.slice(0, text.length / 2), /^not JSON \(/],
    ['another program’s JSON', () => '{"hello": "world"}', /^not a monapi-exporter-state file$/],
    ['a future version', () => JSON.stringify({ format: STATE_FORMAT, version: 99, savedAtMs: 1, accounts: {} }), /^state format version 99, this exporter reads version 1$/],
    ['a field of the wrong type', () => JSON.stringify({ format: STATE_FORMAT, version: 1, savedAtMs: 'x', accounts: {} }), /^malformed \(savedAtMs: /],
  ])('a file %s is set aside with the reason, never fatal', async (_label, damage, reason) => {
    const path = join(dir, `bad-${_label.replace(/\W+/g, '-')}.json`);
    await writeStateFile(path, snapshot);
    writeFileSync(path, damage(readFileSync(path, 'utf8')));
    const result = loadStateFile(path, NOW);
    expect(result.kind).toBe('set_aside');
    if (result.kind !== 'set_aside') return;
    expect(result.reason).toMatch(reason);
    expect(result.movedTo).toBe(`${path}.unreadable-2026-11-22T12-00-00-000Z`);
    expect(existsSync(path)).toBe(false);
    expect(existsSync(result.movedTo ?? '')).toBe(true);
  });

  it('a named pipe in its place is refused without reading it, and left where it is', () => {
    const path = join(dir, 'pipe.json');
    execFileSync('mkfifo', [path]);
    expect(loadStateFile(path, NOW)).toEqual({
      kind: 'set_aside',
      reason: 'the state file must be a regular file, not a named pipe (a device, pipe or socket could be endless)',
      movedTo: undefined,
    });
    expect(existsSync(path)).toBe(true);
  });

  it('removes the temporary files of saves a kill cut short, and nothing else, when it is read at start', async () => {
    const sub = join(dir, 'crash-loop');
    mkdirSync(sub);
    const path = join(sub, 'state.json');
    await writeStateFile(path, snapshot);
    for (const pid of [101, 2_345, process.pid]) writeFileSync(`${path}.tmp-${pid}`, 'x'.repeat(1000));
    writeFileSync(join(sub, 'state.json.tmp-notes'), 'kept');
    writeFileSync(join(sub, 'other.json.tmp-7'), 'kept');
    mkdirSync(`${path}.tmp-9`);
    expect(loadStateFile(path, NOW)).toEqual({ kind: 'loaded', snapshot });
    expect(readdirSync(sub).sort()).toEqual(['other.json.tmp-7', 'state.json', 'state.json.tmp-9', 'state.json.tmp-notes']);
  });

  it('never writes through a symbolic link planted at its temporary name: the link and its target stay as they were, the refusal is reported', async () => {
    const sub = join(dir, 'planted');
    mkdirSync(sub);
    const path = join(sub, 'state.json');
    const target = join(dir, 'victim.txt');
    writeFileSync(target, 'precious', { mode: 0o644 });
    const planted = `${path}.tmp-${process.pid}`;
    symlinkSync(target, planted);
    const refusals: string[] = [];
    await writeStateFile(path, snapshot, { onRefused: (message) => refusals.push(message) });
    expect(readFileSync(target, 'utf8')).toBe('precious');
    expect(lstatSync(planted).isSymbolicLink()).toBe(true);
    expect(readlinkSync(planted)).toBe(target);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toContain(planted);
    expect(loadStateFile(path, NOW)).toEqual({ kind: 'loaded', snapshot });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(sub).sort()).toEqual(['state.json', `state.json.tmp-${process.pid}`]);
  });

  it('replaces a leftover regular temporary file of its own pid, and removes the random-named ones at start', async () => {
    const sub = join(dir, 'leftover');
    mkdirSync(sub);
    const path = join(sub, 'state.json');
    writeFileSync(`${path}.tmp-${process.pid}`, 'half a save');
    writeFileSync(`${path}.tmp-77-0123abcd`, 'another half');
    const refusals: string[] = [];
    await writeStateFile(path, snapshot, { onRefused: (message) => refusals.push(message) });
    expect(refusals).toEqual([]);
    expect(loadStateFile(path, NOW)).toEqual({ kind: 'loaded', snapshot });
    expect(readdirSync(sub)).toEqual(['state.json']);
  });
});
