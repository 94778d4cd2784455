import { lstatSync, readdirSync, renameSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { InputFileError, readBoundedFile } from '../config/input.js';
import { writeFileAtomically, type AtomicWriteOptions } from '../lib/atomic-file.js';

/**
 * The state file (`--state.file`): per account, the persistent state of its sources, as one
 * JSON document. Written atomically: a temporary file beside it, fsync, rename, fsync of the
 * folder, so a crash at any instant leaves either the old file or the new one, never half of
 * one. A file that cannot be read as ours (corrupt, truncated by a full disk, another
 * program's) is renamed aside and reported, never fatal: the exporter starts afresh.
 */

export const STATE_FORMAT = 'monapi-exporter-state';
export const STATE_VERSION = 1;
/** Far above any real state (about 100 bytes per counter), far below what would exhaust memory. */
export const STATE_FILE_MAX_BYTES = 512 * 1024 * 1024;

const snapshotSchema = z.object({
  format: z.literal(STATE_FORMAT),
  version: z.literal(STATE_VERSION),
  savedAtMs: z.number().finite(),
  accounts: z.record(z.string(), z.object({ baseUrl: z.string(), sources: z.record(z.string(), z.unknown()), budget: z.unknown().optional() })),
});

export interface AccountState {
  /** The account's base URL when saved: state of another upstream is not restored. */
  readonly baseUrl: string;
  /** By source name, what each source's `persist.save()` returned. */
  readonly sources: Readonly<Record<string, unknown>>;
  /** The request budget's bucket and pause (`RequestBudget.persistentState()`), so a restart spends no more than the upstream gave back. */
  readonly budget?: unknown;
}

export interface StateSnapshot {
  readonly savedAtMs: number;
  readonly accounts: Readonly<Record<string, AccountState>>;
}

export type StateLoad =
  | { readonly kind: 'none' }
  | { readonly kind: 'loaded'; readonly snapshot: StateSnapshot }
  | { readonly kind: 'set_aside'; readonly reason: string; readonly movedTo: string | undefined };

/**
 * Reads the state file; a missing one is `none`, an unusable one is renamed aside. First the
 * temporary files of saves that never finished (`<file>.tmp-<pid>`, left by a kill during a
 * write) are removed: nothing else removes them, and a crash loop filled a small volume with
 * them (10 kills, 13 MB beside a 1.5 MB file).
 */
export function loadStateFile(path: string, nowMs: number): StateLoad {
  removeStaleTemporaries(path);
  let text: string;
  try {
    text = readBoundedFile(path, STATE_FILE_MAX_BYTES, 'state file');
  } catch (error) {
    if (error instanceof InputFileError && error.reason.endsWith('file not found')) return { kind: 'none' };
    return setAside(path, nowMs, error instanceof InputFileError ? error.reason : String(error));
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return setAside(path, nowMs, `not JSON (${error instanceof Error ? error.message.split('\n')[0] : 'unreadable'}), e.g. cut short by a full disk`);
  }
  const parsed = snapshotSchema.safeParse(json);
  if (!parsed.success) {
    const foreign = typeof json !== 'object' || json === null || (json as { format?: unknown }).format !== STATE_FORMAT;
    const version = (json as { version?: unknown } | null)?.version;
    const reason = foreign
      ? `not a ${STATE_FORMAT} file`
      : version !== STATE_VERSION
        ? `state format version ${JSON.stringify(version)}, this exporter reads version ${STATE_VERSION}`
        : `malformed (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})`;
    return setAside(path, nowMs, reason);
  }
  return { kind: 'loaded', snapshot: { savedAtMs: parsed.data.savedAtMs, accounts: parsed.data.accounts } };
}

/**
 * Reads another process's state file (the backfill reads the live exporter's) and changes
 * nothing: no temporaries removed, nothing set aside, since the file is not ours. Throws an
 * error naming what is wrong.
 */
export function readStateFile(path: string): StateSnapshot {
  let text: string;
  try {
    text = readBoundedFile(path, STATE_FILE_MAX_BYTES, 'state file');
  } catch (error) {
    throw new Error(error instanceof InputFileError ? `state file ${path}: ${error.reason}` : String(error));
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`state file ${path}: not JSON`);
  }
  const parsed = snapshotSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`state file ${path}: not a ${STATE_FORMAT} file of version ${STATE_VERSION} (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'unreadable'})`);
  }
  return { savedAtMs: parsed.data.savedAtMs, accounts: parsed.data.accounts };
}

/**
 * Removes `<file>.tmp-<digits>` (and `<file>.tmp-<digits>-<hex>`, the name a save takes when
 * the first is occupied) beside the state file: at start no save of this process is under way,
 * and a temporary file of another process's save is one it never finished (two exporters
 * sharing a state file is a mistake of its own). Only regular files: a link is left alone.
 * Returns what was removed.
 */
export function removeStaleTemporaries(path: string): string[] {
  const folder = dirname(path);
  const prefix = `${basename(path)}.tmp-`;
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix) || !/^\d+(-[0-9a-f]+)?$/.test(name.slice(prefix.length))) continue;
    const file = join(folder, name);
    try {
      if (!lstatSync(file).isFile()) continue;
      unlinkSync(file);
      removed.push(file);
    } catch {
      // Gone meanwhile, or not ours to remove (a read-only folder): the next save still works.
    }
  }
  return removed;
}

/** Renames a bad state file aside; anything but a regular file (a device, a pipe, a link) is left where it is. */
function setAside(path: string, nowMs: number, reason: string): StateLoad {
  try {
    if (!lstatSync(path).isFile()) return { kind: 'set_aside', reason, movedTo: undefined };
  } catch {
    return { kind: 'set_aside', reason, movedTo: undefined };
  }
  const movedTo = `${path}.unreadable-${new Date(nowMs).toISOString().replace(/[:.]/g, '-')}`;
  try {
    renameSync(path, movedTo);
    return { kind: 'set_aside', reason, movedTo };
  } catch {
    // Not movable (a read-only folder, a device): leave it, the next save replaces it if it can.
    return { kind: 'set_aside', reason, movedTo: undefined };
  }
}

/** Writes the snapshot atomically (temporary file created exclusively, fsync, rename, fsync of the folder). */
export async function writeStateFile(path: string, snapshot: StateSnapshot, options: AtomicWriteOptions = {}): Promise<number> {
  const body = JSON.stringify({ format: STATE_FORMAT, version: STATE_VERSION, savedAtMs: snapshot.savedAtMs, accounts: snapshot.accounts });
  await writeFileAtomically(path, body, options);
  return Buffer.byteLength(body);
}

