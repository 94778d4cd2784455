import { closeSync, fsyncSync, openSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Writes `body` so that a reader sees the old file or the new one, never a part: a temporary
 * file beside it (`<path>.tmp-<pid>`, mode 0600), fsync, rename, fsync of the folder. A kill
 * between the steps leaves at most the temporary file, which its owner removes at start.
 */
export async function writeFileAtomically(path: string, body: string): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  const handle = await open(temporary, 'w', 0o600);
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

/** Makes the rename itself durable; a file system that cannot fsync a folder is left as it is. */
function syncFolder(folder: string): void {
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
