import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki, type TestPki } from '../../test/support/tls.js';
import { thrownBy } from '../../test/support/thrown.js';
import { FailureThrottle } from './password-check.js';
import { BasicAuthChecker, loadWebConfig, parseWebConfig, ThrottledPasswordGate, WebConfigError, type AuthOutcome } from './web-config.js';

let pki: TestPki;
let dir: string;
beforeAll(() => {
  pki = makeTestPki();
  dir = mkdtempSync(join(tmpdir(), 'monapi-webcfg-'));
});
afterAll(() => {
  pki.remove();
  rmSync(dir, { recursive: true, force: true });
});

const HASH = bcrypt.hashSync('s3cret', 4);
const problems = (text: string) => thrownBy(WebConfigError, () => parseWebConfig(text, pki.dir)).problems;

describe('parseWebConfig', () => {
  it('reads the exporter-toolkit format: TLS with client certificates, headers, users', () => {
    const config = parseWebConfig(
      `tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  min_version: TLS13\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\nbasic_auth_users:\n  prometheus: ${HASH}\n`,
      pki.dir,
    );
    expect(config.tls).toMatchObject({ clientAuth: 'RequireAndVerifyClientCert', context: { minVersion: 'TLSv1.3', ca: pki.caCert, cert: pki.serverCert } });
    expect([...config.users.keys()]).toEqual(['prometheus']);
    expect(config.headers).toEqual({ 'X-Frame-Options': 'deny' });
    expect(config.files).toEqual([pki.serverCertFile, pki.serverKeyFile, pki.caCertFile]);
  });

  it('an empty file means plain HTTP, no auth', () => {
    expect(parseWebConfig('', dir)).toEqual({ tls: undefined, users: new Map(), headers: {}, files: [] });
  });

  it.each([
    ['a password where the hash belongs (never echoed)', 'basic_auth_users:\n  prometheus: hunter2\n', ['basic_auth_users.prometheus: must be a bcrypt hash ($2y$10$... from htpasswd -nBC 10 prometheus), never the password itself']],
    ['an unknown key', 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  clientauth: x\n', ['tls_server_config: unknown key "clientauth"']],
    ['cipher suites by Go names', 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n', [expect.stringContaining('tls_server_config.cipher_suites: cipher_suites is not supported by this exporter')]],
    ['TLS without a key', 'tls_server_config:\n  cert_file: server.crt\n', ['tls_server_config.key_file: is required with tls_server_config']],
    ['a verifying client auth without a CA', 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n', ['tls_server_config.client_ca_file: is required with client_auth_type RequireAndVerifyClientCert']],
    ['a certificate with another key', 'tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n', [expect.stringMatching(/^tls_server_config: the certificate, key and client CA cannot be used together: .*(mismatch|does not match)/)]],
    ['a key file that is a device', 'tls_server_config:\n  cert_file: server.crt\n  key_file: /dev/zero\n', ['tls_server_config.key_file: /dev/zero: the key_file must be a regular file, not a character device (a device, pipe or socket could be endless)']],
    ['an unknown client auth type', 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: Always\n', [expect.stringContaining('tls_server_config.client_auth_type: ')]],
  ])('refuses %s, naming the field', (_label, text, expected) => {
    const found = problems(text);
    expect(found).toEqual(expected);
    expect(found.join('\n')).not.toContain('hunter2');
  });

  it('loadWebConfig names the file and refuses one over 1 MiB', () => {
    const path = join(dir, 'web.yml');
    writeFileSync(path, `# ${'x'.repeat(1024 * 1024)}\n`);
    expect(() => loadWebConfig(path)).toThrow(`invalid web configuration ${path}: 1 problem\n  - (file): the web configuration file is 1048579 bytes, over the limit of 1048576 bytes (1 MiB)`);
  });
});

describe('BasicAuthChecker', () => {
  const header = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  it('accepts the right password, refuses a wrong one, an unknown user and a malformed header', async () => {
    const auth = new BasicAuthChecker(new Map([['prometheus', HASH]]));
    expect(await auth.check(header('prometheus', 's3cret'))).toBe('ok');
    expect(await auth.check(header('prometheus', 's3cret'))).toBe('ok');
    expect(await auth.check(header('prometheus', 'wrong'))).toBe('denied');
    expect(await auth.check(header('nobody', 's3cret'))).toBe('denied');
    expect(await auth.check(undefined)).toBe('denied');
    expect(await auth.check('Bearer abc')).toBe('denied');
    expect(await auth.check('Basic !!!')).toBe('denied');
  });

  it('throttles an address after five failed checks, with the time to wait; a right password (cached) still passes', async () => {
    let now = 0;
    const auth = new BasicAuthChecker(new Map([['prometheus', HASH]]), new ThrottledPasswordGate(undefined, new FailureThrottle(5, 2_000, () => now)));
    expect(await auth.check(header('prometheus', 's3cret'), '10.0.0.1')).toBe('ok');
    const outcomes: AuthOutcome[] = [];
    for (let i = 0; i < 8; i++) outcomes.push(await auth.check(header('prometheus', `wrong-${i}`), '10.0.0.1'));
    expect(outcomes.filter((o) => o === 'denied')).toHaveLength(5);
    expect(outcomes.filter((o) => typeof o === 'object')).toEqual(Array.from({ length: 3 }, () => ({ retryAfterSeconds: 2 })));
    expect(await auth.check(header('prometheus', 's3cret'), '10.0.0.1')).toBe('ok');
    expect(await auth.check(header('prometheus', 'wrong'), '10.0.0.2')).toBe('denied');
    now += 2_000;
    expect(await auth.check(header('prometheus', 'wrong'), '10.0.0.1')).toBe('denied');
    expect(await auth.check(header('prometheus', 'wrong'), '10.0.0.1')).toEqual({ retryAfterSeconds: 2 });
  });
});
