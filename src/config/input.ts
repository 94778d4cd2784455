import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statfsSync } from 'node:fs';

/**
 * Bounded reading of the files the exporter takes from an operator: the config file, the web
 * config, key and CA files. Each must be a regular file under a size cap, and is read with
 * at most cap + 1 bytes in memory, so `--config.file=/dev/zero`, a FIFO or a 50 MB file is
 * refused at once instead of filling the heap. Kernel pseudo-files (/proc, /sys and their
 * kind) look like regular files but are not the operator's: `/proc/self/environ` as the
 * configuration would echo the environment, keys included, in the syntax errors.
 */

/** The configuration file and the web configuration file. */
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;
/** A key file holds one key. */
export const KEY_FILE_MAX_BYTES = 64 * 1024;
/** A CA bundle or certificate file (PEM). */
export const PEM_FILE_MAX_BYTES = 1024 * 1024;

/** Why a file was refused; the message names the file and the limit, never its content. */
export class InputFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = 'InputFileError';
  }
}

/**
 * Reads a regular file of at most `maxBytes` bytes as UTF-8. Throws `InputFileError` for a
 * missing, unreadable, special or oversized file.
 */
export function readBoundedFile(path: string, maxBytes: number, what = 'file'): string {
  const pseudo = kernelPseudoFile(path);
  if (pseudo !== undefined) {
    throw new InputFileError(path, `the ${what} must be a regular file, not a kernel pseudo-file (${pseudo}), which could show the environment or other secrets`);
  }
  let fd: number;
  try {
    // Non-blocking, so opening a named pipe with no writer does not hang before fstat refuses it.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new InputFileError(path, `cannot read the ${what}: ${describeFsError(error)}`);
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw new InputFileError(path, `cannot read the ${what}: it is a directory, not a file`);
    if (!stat.isFile()) {
      throw new InputFileError(path, `the ${what} must be a regular file, not a ${describeKind(stat)} (a device, pipe or socket could be endless)`);
    }
    if (stat.size > maxBytes) {
      throw new InputFileError(path, `the ${what} is ${stat.size} bytes, over the limit of ${maxBytes} bytes (${formatBytes(maxBytes)})`);
    }
    // The size may change between fstat and read: read at most one byte past the cap.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) throw new InputFileError(path, `the ${what} grew past the limit of ${maxBytes} bytes (${formatBytes(maxBytes)}) while it was read`);
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

/** Magic numbers (statfs f_type) of Linux file systems whose files are made up by the kernel. */
const PSEUDO_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'procfs'],
  [0x62656572, 'sysfs'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x62656570, 'configfs'],
  [0xcafe4a11, 'bpf'],
  [0xde5e81e4, 'efivarfs'],
]);

/** Where `path` is a kernel pseudo-file, what it is (`/proc`, `sysfs`, ...); undefined otherwise. */
export function kernelPseudoFile(path: string): string | undefined {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // Missing, or a link to something without a name (a pipe): opening it reports why.
  }
  const top = /^\/(proc|sys)(\/|$)/.exec(real);
  if (top) return `/${top[1]}`;
  try {
    return PSEUDO_FILE_SYSTEMS.get(Number(statfsSync(real).type));
  } catch {
    return undefined;
  }
}

function describeKind(stat: { isCharacterDevice(): boolean; isBlockDevice(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (stat.isCharacterDevice()) return 'character device';
  if (stat.isBlockDevice()) return 'block device';
  if (stat.isFIFO()) return 'named pipe';
  if (stat.isSocket()) return 'socket';
  return 'special file';
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

export function describeFsError(error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
  switch (code) {
    case 'ENOENT':
      return 'file not found';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory, not a file';
    default:
      return code ?? (error instanceof Error ? error.message : 'unreadable');
  }
}
