import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, lstatSync, openSync, unlinkSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Flags for a file this process creates: exclusively (`O_EXCL`: an existing file or link is an
 * error, never opened) and without following a link in its last component (`O_NOFOLLOW`; with
 * `O_EXCL` already refused, kept for file systems that treat them apart). Someone who can write
 * the folder and plants a symbolic link where the file will be cannot make this process write
 * through it.
 */
export const EXCLUSIVE_CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

export interface AtomicWriteOptions {
  /** Told when the usual temporary name was taken by something not ours (a link, a folder), left untouched. */
  readonly onRefused?: (message: string) => void;
}

/**
 * Writes `body` so that a reader sees the old file or the new one, never a part: a temporary
 * file beside it (`<path>.tmp-<pid>`, created exclusively, mode 0600), fsync, rename, fsync of
 * the folder. A kill between the steps leaves at most the temporary file, which its owner
 * removes at start. A regular file already at the temporary name is a leftover of an earlier
 * save of this pid and is replaced; anything else there (a planted symbolic link) is left as
 * it is, reported, and the save goes through a fresh random name instead.
 */
export async function writeFileAtomically(path: string, body: string, options: AtomicWriteOptions = {}): Promise<void> {
  const { handle, temporary } = await openTemporary(path, options);
  try {
    await handle.writeFile(body, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await handle.close();
  await rename(temporary, path);
  syncFolder(dirname(path));
}

async function openTemporary(path: string, options: AtomicWriteOptions): Promise<{ handle: FileHandle; temporary: string }> {
  const usual = `${path}.tmp-${process.pid}`;
  try {
    return { handle: await open(usual, EXCLUSIVE_CREATE, 0o600), temporary: usual };
  } catch (error) {
    if (!isCode(error, 'EEXIST') && !isCode(error, 'ELOOP')) throw error;
  }
  if (isRegularFile(usual)) {
    // unlink removes a link itself, never its target, so a swap after lstat harms nothing.
    await unlink(usual).catch(() => undefined);
    try {
      return { handle: await open(usual, EXCLUSIVE_CREATE, 0o600), temporary: usual };
    } catch (error) {
      if (!isCode(error, 'EEXIST') && !isCode(error, 'ELOOP')) throw error;
    }
  }
  options.onRefused?.(`${usual} exists and is not a regular file this process left (a symbolic link?); left untouched, writing through a temporary file of another name`);
  for (let attempt = 0; ; attempt++) {
    const temporary = `${usual}-${randomBytes(8).toString('hex')}`;
    try {
      return { handle: await open(temporary, EXCLUSIVE_CREATE, 0o600), temporary };
    } catch (error) {
      if (attempt >= 4 || (!isCode(error, 'EEXIST') && !isCode(error, 'ELOOP'))) throw error;
    }
  }
}

/**
 * Opens `path` for writing as a new file (`EXCLUSIVE_CREATE`), for a temporary file the caller
 * renames into place. A regular file already there is a leftover of a run cut short (in a
 * container every run may have the same pid) and is removed first; anything else there, such as
 * a symbolic link, is refused with an error and left untouched.
 */
export function openNewFileSync(path: string, mode: number): number {
  try {
    return openSync(path, EXCLUSIVE_CREATE, mode);
  } catch (error) {
    if (!isCode(error, 'EEXIST') && !isCode(error, 'ELOOP')) throw error;
    if (!isRegularFile(path)) throw new Error(`refusing to write ${path}: something other than a regular file (a symbolic link?) is there`, { cause: error });
  }
  unlinkSync(path);
  return openSync(path, EXCLUSIVE_CREATE, mode);
}

function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

function isCode(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | null)?.code === code;
}

/** Makes the rename itself durable; a file system that cannot fsync a folder is left as it is. */
export function syncFolder(folder: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(folder, 'r');
    fsyncSync(fd);
  } catch {
    // e.g. EISDIR/EINVAL on some file systems: the rename is still atomic, only less durable.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
