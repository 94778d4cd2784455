import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { CONFIG_FILE_MAX_BYTES, InputFileError, readBoundedFile } from './input.js';
import { loadConfig } from '../exporter/config.js';
import { thrownBy } from '../../test/support/thrown.js';

const dir = mkdtempSync(join(tmpdir(), 'monapi-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ACCOUNT = 'accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n';

describe('readBoundedFile', () => {
  it.each([
    ['a missing file', join(dir, 'missing.yaml'), 'cannot read the configuration file: file not found'],
    ['a directory', dir, 'cannot read the configuration file: it is a directory, not a file'],
    ['/dev/zero (endless)', '/dev/zero', 'the configuration file must be a regular file, not a character device'],
  ])('refuses %s, naming the file', (_label, path, reason) => {
    const error = thrownBy(InputFileError, () => readBoundedFile(path, CONFIG_FILE_MAX_BYTES, 'configuration file'));
    expect(error.message).toBe(`${path}: ${reason}${reason.includes('regular') ? ' (a device, pipe or socket could be endless)' : ''}`);
  });

  it.each(['/proc/self/environ', '/proc/self/cmdline', '/sys/kernel/mm/transparent_hugepage/enabled'])('refuses the kernel pseudo-file %s before reading it', (path) => {
    const error = thrownBy(InputFileError, () => readBoundedFile(path, CONFIG_FILE_MAX_BYTES, 'configuration file'));
    expect(error.reason).toMatch(/^the configuration file must be a regular file, not a kernel pseudo-file \((\/proc|\/sys)\), which could show the environment or other secrets$/);
  });

  it('refuses a link to a pseudo-file too', () => {
    const link = join(dir, 'environ-link.yaml');
    execFileSync('ln', ['-s', '/proc/self/environ', link]);
    expect(() => readBoundedFile(link, CONFIG_FILE_MAX_BYTES, 'configuration file')).toThrow('not a kernel pseudo-file (/proc)');
  });

  it('refuses a named pipe without waiting for a writer', () => {
    const fifo = join(dir, 'pipe.yaml');
    execFileSync('mkfifo', [fifo]);
    expect(() => readBoundedFile(fifo, 100, 'configuration file')).toThrow(`${fifo}: the configuration file must be a regular file, not a named pipe`);
  });

  it('reads a file at the cap and refuses one byte more, naming the limit', () => {
    const atCap = join(dir, 'at-cap');
    writeFileSync(atCap, 'x'.repeat(1024));
    expect(readBoundedFile(atCap, 1024)).toHaveLength(1024);
    const over = join(dir, 'over');
    writeFileSync(over, 'x'.repeat(1025));
    expect(() => readBoundedFile(over, 1024, 'web configuration file')).toThrow(`${over}: the web configuration file is 1025 bytes, over the limit of 1024 bytes (1 KiB)`);
  });
});

describe('loadConfig input limits', () => {
  it('refuses --config.file=/dev/zero at once with the file and the reason', () => {
    const error = thrownBy(ConfigError, () => loadConfig('/dev/zero', {}));
    expect(error.message).toBe(
      'invalid configuration /dev/zero: 1 problem\n  - (file): the configuration file must be a regular file, not a character device (a device, pipe or socket could be endless)',
    );
  });

  it('refuses --config.file=/proc/self/environ without echoing a byte of the environment', () => {
    const error = thrownBy(ConfigError, () => loadConfig('/proc/self/environ', {}));
    expect(error.message).toBe(
      'invalid configuration /proc/self/environ: 1 problem\n  - (file): the configuration file must be a regular file, not a kernel pseudo-file (/proc), which could show the environment or other secrets',
    );
  });

  it('refuses a config file over 1 MiB, naming the limit', () => {
    const path = join(dir, 'huge.yaml');
    writeFileSync(path, `${ACCOUNT}# ${'x'.repeat(CONFIG_FILE_MAX_BYTES)}\n`);
    expect(() => loadConfig(path, {})).toThrow(/over the limit of 1048576 bytes \(1 MiB\)/);
  });

  it('refuses a key file that is a device or too large, naming the account and the file', () => {
    const sub = join(dir, 'keys-case');
    mkdirSync(sub);
    const config = join(sub, 'monapi.yaml');
    writeFileSync(join(sub, 'big.key'), 'k'.repeat(70_000));
    writeFileSync(config, `${ACCOUNT}    api_key_file: /dev/zero\n  - name: other\n    base_url: https://mon.example.com/api/v2\n    api_key_file: big.key\n`);
    const message = thrownBy(ConfigError, () => loadConfig(config, {})).message;
    expect(message).toContain('accounts[0].api_key_file: cannot read the key of account "prod" from /dev/zero: the key file must be a regular file, not a character device');
    expect(message).toContain(`accounts[1].api_key_file: cannot read the key of account "other" from ${join(sub, 'big.key')}: the key file is 70000 bytes, over the limit of 65536 bytes (64 KiB)`);
  });

  it('refuses an alias bomb with the limit instead of expanding it', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (const [i, name] of ['b', 'c', 'd', 'e', 'f', 'g'].entries()) {
      const prev = 'abcdefg'[i] ?? 'a';
      levels.push(`${name}: &${name} [${Array.from({ length: 9 }, () => `*${prev}`).join(',')}]`);
    }
    const path = join(dir, 'bomb.yaml');
    writeFileSync(path, `${levels.join('\n')}\naccounts: *g\n`);
    expect(() => loadConfig(path, {})).toThrow(
      `invalid configuration ${path}: 1 problem\n  - (yaml): aliases expand to more than 1000 nodes (a guard against alias bombs); share settings with fewer aliases`,
    );
  });
});
