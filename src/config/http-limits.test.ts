import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { parseConfig } from '../exporter/config.js';
import { thrownBy } from '../../test/support/thrown.js';

/** The `http` and `limits` sections of an account: defaults, bounds, and the CA file. */

const dir = mkdtempSync(join(tmpdir(), 'monapi-http-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
writeFileSync(join(dir, 'ca.pem'), PEM);
writeFileSync(join(dir, 'not-a-cert.pem'), 'hello\n');

const account = (extra: string) =>
  `accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n    api_key_env: K\n${extra}`;
const parse = (extra: string) => parseConfig(account(extra), { env: { K: 'k-1' }, baseDir: dir });
const issues = (extra: string) => thrownBy(ConfigError, () => parse(extra)).issues.map((i) => `${i.path}: ${i.message}`);

describe('accounts[].http', () => {
  it('defaults: 15 s per phase, 30 s per request, 8 MiB, the system CAs, verification on', () => {
    expect(parse('').accounts[0]?.http).toEqual({
      timeoutMs: 15_000,
      deadlineMs: 30_000,
      maxResponseBytes: 8 * 1024 * 1024,
      caFile: undefined,
      ca: undefined,
      insecureSkipVerify: false,
    });
  });

  it('reads a CA file relative to the config folder', () => {
    const http = parse('    http:\n      timeout: 5s\n      deadline: 1m\n      ca_file: ca.pem\n      max_response_bytes: 1048576\n').accounts[0]?.http;
    expect(http).toMatchObject({ timeoutMs: 5_000, deadlineMs: 60_000, caFile: join(dir, 'ca.pem'), ca: PEM, maxResponseBytes: 1_048_576 });
  });

  it.each([
    ['    http:\n      timeout: 20s\n      deadline: 10s\n', 'accounts[0].http.deadline: must be at least timeout (20s): the deadline bounds the whole request, headers and body (got 10s)'],
    ['    http:\n      timeout: 100ms\n', 'accounts[0].http.timeout: must be at least 1s (got 100ms); a shorter wait fails slow but healthy answers'],
    ['    http:\n      ca_file: missing.pem\n', `accounts[0].http.ca_file: cannot read the CA file ${join(dir, 'missing.pem')}: cannot read the CA file: file not found`],
    ['    http:\n      ca_file: not-a-cert.pem\n', `accounts[0].http.ca_file: ${join(dir, 'not-a-cert.pem')} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`],
    ['    http:\n      ca_file: /dev/zero\n', 'accounts[0].http.ca_file: cannot read the CA file /dev/zero: the CA file must be a regular file, not a character device (a device, pipe or socket could be endless)'],
    ['    http:\n      max_response_bytes: 10\n', 'accounts[0].http.max_response_bytes: must be at least 65536 (got 10)'],
    ['    http:\n      insecure_skip_verify: yes\n', 'accounts[0].http.insecure_skip_verify: must be true or false (got "yes")'],
    ['    http:\n      proxy: http://p:3128\n', 'accounts[0].http: unknown key "proxy" (allowed: timeout, deadline, max_response_bytes, ca_file, insecure_skip_verify)'],
  ])('refuses %j', (extra, message) => {
    expect(issues(extra)).toEqual([message]);
  });
});

describe('accounts[].limits', () => {
  it('defaults and 0 for "no limit"', () => {
    expect(parse('').accounts[0]?.limits).toEqual({ series: 200_000, metricNameLength: 200, labelNameLength: 100, labelValueLength: 1024 });
    expect(parse('    limits:\n      series: 0\n').accounts[0]?.limits?.series).toBe(0);
  });

  it('refuses a negative or fractional limit', () => {
    expect(issues('    limits:\n      series: -1\n      label_value_length: 1.5\n')).toEqual([
      'accounts[0].limits.series: must be at least 0 (got -1)',
      'accounts[0].limits.label_value_length: must be a whole number (got 1.5)',
    ]);
  });
});
