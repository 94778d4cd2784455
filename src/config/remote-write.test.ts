import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../exporter/config.js';
import { ConfigError } from './errors.js';

const ACCOUNT = 'accounts:\n  - name: a\n    base_url: http://monitoring.test/api/v2\n    api_key_env: KEY\n';
const env = { KEY: 'account-key-1', RW_PASSWORD: 'rw-password-9', RW_TOKEN: 'rw-token-7' };

function problems(yaml: string, files: Record<string, string> = {}): string[] {
  try {
    parseConfig(ACCOUNT + yaml, {
      env,
      readFile: (path) => {
        const text = files[path];
        if (text === undefined) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
        return text;
      },
      baseDir: '/etc/monapi',
    });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe('the remote_write section', () => {
  it('is optional', () => {
    expect(parseConfig(ACCOUNT, { env }).remoteWrite).toBeUndefined();
  });

  it('takes Prometheus-like settings with defaults, and builds the Authorization value without showing it', () => {
    const config = parseConfig(`${ACCOUNT}remote_write:\n  url: https://mimir.test/api/v1/push\n  basic_auth: { username: monapi, password_env: RW_PASSWORD }\n  headers: { X-Scope-OrgID: t1 }\n  external_labels: { job: monapi }\n`, { env });
    const rw = config.remoteWrite;
    expect(rw).toMatchObject({
      url: 'https://mimir.test/api/v1/push',
      pushIntervalMs: 60_000,
      remoteTimeoutMs: 30_000,
      headers: { 'X-Scope-OrgID': 't1' },
      externalLabels: { job: 'monapi' },
      queue: { capacity: 10_000, maxSamplesPerSend: 2_000, batchSendDeadlineMs: 5_000, minBackoffMs: 30, maxBackoffMs: 5_000, retryOnHttp429: true },
    });
    expect(rw?.authorization?.reveal()).toBe(`Basic ${Buffer.from('monapi:rw-password-9').toString('base64')}`);
    expect(inspect(rw)).not.toContain('rw-password-9');
    expect(JSON.stringify(rw)).not.toContain(Buffer.from('monapi:rw-password-9').toString('base64'));
    const bearer = parseConfig(`${ACCOUNT}remote_write:\n  url: http://vm.test:8428/api/v1/write\n  authorization: { credentials_env: RW_TOKEN }\n`, { env });
    expect(bearer.remoteWrite?.authorization?.reveal()).toBe('Bearer rw-token-7');
  });

  it('names what is wrong', () => {
    expect(problems('remote_write:\n  url: ftp://x/\n')).toEqual(['remote_write.url: must use http or https (got ftp)']);
    expect(problems('remote_write:\n  url: http://x/\n  headers: { Authorization: "Bearer x" }\n')).toEqual([
      'remote_write.headers.Authorization: is set by the exporter (credentials go in basic_auth or authorization)',
    ]);
    expect(problems('remote_write:\n  url: http://x/\n  external_labels: { __name__: x }\n')[0]).toMatch(/^remote_write.external_labels.__name__: must be a label name/);
    expect(
      problems(
        'remote_write:\n  url: http://x/\n  basic_auth: { username: u, password_env: NOT_SET }\n  authorization: { credentials_env: RW_TOKEN }\n  queue_config: { capacity: 500, max_samples_per_send: 1000, min_backoff: 2s, max_backoff: 1s }\n  tls_config: { cert_file: c.pem }\n',
      ),
    ).toEqual([
      'remote_write: set only one of basic_auth and authorization, not both',
      'remote_write.basic_auth.password_env: environment variable NOT_SET is not set (it should hold the key of the remote write receiver)',
      'remote_write.queue_config.capacity: must be at least max_samples_per_send (1000): a request is taken from what the queue holds (got 500)',
      'remote_write.queue_config.max_backoff: must be at least min_backoff (2s) (got 1s)',
      'remote_write.tls_config.cert_file: cannot read /etc/monapi/c.pem: file not found',
      'remote_write.tls_config: set both cert_file and key_file (a client certificate and its key), or neither',
    ]);
  });
});
