import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { thrownBy } from '../../test/support/thrown.js';
import { processRedactor, Redactor } from '../lib/redact.js';
import { ConfigError } from './errors.js';
import { KEY_FILE_MAX_BYTES, readBoundedFile } from './input.js';
import { loadConfig, parseConfig } from '../exporter/config.js';
import { secretsReferencedBy } from './referenced-secrets.js';

const dir = mkdtempSync(join(tmpdir(), 'monapi-referenced-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readFile = (path: string) => readBoundedFile(path, KEY_FILE_MAX_BYTES, 'key file');

describe('secretsReferencedBy', () => {
  it('finds what *_env and key *_file point at, pasted keys, credential fields and URL passwords', () => {
    writeFileSync(join(dir, 'prod.key'), 'file-key-0123456789\n');
    const text = `accounts:
  - name: prod
    base_url: https://user:url-pass-77@mon.example.com/api/v2
    api_key_env: PROD_KEY
    api_key_file: prod.key
    api_key: pasted-key-abcdef
    http: { ca_file: ca.pem }
  - name: other
    api_key_env: sk-pasted-into-env-123
  - name: third
    api_key_env: lower_case_unset
    api_key_file: abcDEF0123456789
releases:
  header_names: { key: X-RapidAPI-Key }
  marketplace_key_env: UNSET_BUT_CONVENTIONAL
  outdated: { projects: { keycloak: keycloak/keycloak } }
`;
    const found = secretsReferencedBy(text, { env: { PROD_KEY: 'env-key-0123456789' }, readFile, baseDir: dir });
    expect(found.sort()).toEqual(
      ['abcDEF0123456789', 'env-key-0123456789', 'file-key-0123456789', 'lower_case_unset', 'pasted-key-abcdef', 'sk-pasted-into-env-123', 'url-pass-77'].sort(),
    );
  });

  it('reads a text too deeply nested for the YAML parser line by line', () => {
    const text = `accounts: ${'['.repeat(5000)}${']'.repeat(5000)}\n  api_key_env: DEEP_KEY\n  token: "tok-0123456789"\n`;
    expect(secretsReferencedBy(text, { env: { DEEP_KEY: 'deep-key-0123456789' }, readFile, baseDir: dir }).sort()).toEqual(['deep-key-0123456789', 'tok-0123456789']);
  });

  it('never reads a key "file" that is a kernel pseudo-file', () => {
    const text = 'accounts:\n  - name: a\n    api_key_file: /proc/self/environ\n';
    expect(secretsReferencedBy(text, { env: { SOME: 'value-that-must-not-be-read' }, readFile, baseDir: dir })).toEqual([]);
  });
});

describe('config errors never quote a secret', () => {
  const KEY = 'canary-Headroom-k3y-51';
  const base = (extra: string) => `accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n    api_key_env: PROD_KEY\n${extra}`;

  it.each([
    ['pasted into headroom', `    headroom: "${KEY}"\n`],
    ['pasted into a duration', `    ingest_delay: "${KEY}"\n`],
    ['pasted into base_url of another account', `  - name: other\n    base_url: "${KEY}"\n    api_key_env: PROD_KEY\n`],
    ['pasted into a metric pattern', `    metrics: { include: ["${KEY}"] }\n`],
  ])('a key %s is named by its path, never quoted', (_label, extra) => {
    const error = thrownBy(ConfigError, () => parseConfig(base(extra), { env: { PROD_KEY: KEY } }));
    const redactor = new Redactor();
    redactor.add(KEY);
    expect(redactor.finds(error.message)).toBe(false);
    expect(error.issues.some((issue) => redactor.finds(issue.message))).toBe(false);
    expect(error.message).toContain('[REDACTED]');
  });

  it('a key pasted into api_key_file, or the name of an unset variable that looks like a key, is not echoed', () => {
    const pasted = 'sk_live_Abc0123456789xyz';
    const error = thrownBy(ConfigError, () => parseConfig(`accounts:\n  - name: a\n    base_url: https://m.example.com/api/v2\n    api_key_file: ${pasted}\n  - name: b\n    base_url: https://m.example.com/api/v2\n    api_key_env: ${pasted}2\n`, { env: {}, baseDir: dir }));
    expect(error.message).not.toContain(pasted);
    expect(error.message).toContain('accounts[0].api_key_file');
    expect(error.message).toContain('accounts[1].api_key_env');
  });

  it('the process redactor knows the secrets of a configuration that failed to load', () => {
    const key = 'canary-failed-load-k3y-93';
    const path = join(dir, 'broken.yaml');
    writeFileSync(path, base('    headroom: lots\n'));
    expect(() => loadConfig(path, { PROD_KEY: key })).toThrow(ConfigError);
    expect(processRedactor.scrub(`upstream said ${Buffer.from(key).toString('base64')}`)).not.toContain(Buffer.from(key).toString('base64'));
  });
});
