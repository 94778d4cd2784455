import { rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/listen.js';
import { startWebServer } from '../../src/server/web-server.js';
import { makeTestPki, type TestPki } from '../support/tls.js';
import { until } from '../support/until.js';

/**
 * Item 1 of issue 13: --web.config.file with a real TLS client. A certificate authority is
 * made for the test; the client trusts it, and presents its own certificate, another CA's,
 * or none. /metrics, /status and / are protected; the health probes stay open.
 */

let pki: TestPki;
let server: RunningServer | undefined;
const PASSWORD = 'correct horse battery staple';
const HASH = bcrypt.hashSync(PASSWORD, 4);

beforeAll(() => {
  pki = makeTestPki();
});
afterAll(() => pki.remove());
afterEach(async () => {
  await server?.close(100);
  server = undefined;
});

const app = (_req: unknown, res: { end(body: string): void }) => res.end('data\n');

async function serve(yaml: string, name = 'web.yml', extra: { registry?: Registry; log?: pino.Logger } = {}): Promise<{ port: number; file: string }> {
  const file = join(pki.dir, name);
  writeFileSync(file, yaml);
  server = await startWebServer(app, { listenAddress: '127.0.0.1:0', webConfigFile: file, log: extra.log ?? pino({ level: 'silent' }), registry: extra.registry });
  return { port: Number(new URL(server.url).port), file };
}

async function gauge(registry: Registry, name: string): Promise<number | undefined> {
  return (await registry.getSingleMetric(name)?.get())?.values[0]?.value;
}

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

function get(port: number, path: string, options: RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, ca: pki.caCert, servername: 'localhost', agent: false, ...options }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const tlsYaml = (extra = '') => `tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n${extra}`;

describe('TLS and basic auth', () => {
  it('serves HTTPS; no password and a wrong one get 401 with a challenge, the right one the data; probes stay open', async () => {
    const { port } = await serve(`${tlsYaml()}basic_auth_users:\n  prometheus: ${HASH}\nhttp_server_config:\n  headers:\n    Strict-Transport-Security: max-age=31536000\n`);
    expect(server?.url).toMatch(/^https:\/\//);
    for (const path of ['/metrics', '/status', '/', '/-/reload']) {
      const none = await get(port, path);
      expect(none.status, path).toBe(401);
      expect(none.headers['www-authenticate']).toBe('Basic realm="monapi-exporter", charset="UTF-8"');
    }
    expect((await get(port, '/metrics', { headers: basic('prometheus', 'wrong') })).status).toBe(401);
    expect((await get(port, '/metrics', { headers: basic('someone', PASSWORD) })).status).toBe(401);
    const ok = await get(port, '/metrics', { headers: basic('prometheus', PASSWORD) });
    expect(ok).toMatchObject({ status: 200, body: 'data\n' });
    expect(ok.headers['strict-transport-security']).toBe('max-age=31536000');
    for (const path of ['/-/healthy', '/-/ready']) expect((await get(port, path)).status, path).toBe(200);
  });

  it('a client that does not trust the CA cannot connect', async () => {
    const { port } = await serve(tlsYaml());
    await expect(get(port, '/metrics', { ca: pki.strangerCert })).rejects.toThrow(/self-signed|unable to verify|SELF_SIGNED/i);
  });

  it('min_version TLS13 refuses a TLS 1.2 client', async () => {
    const { port } = await serve(tlsYaml('  min_version: TLS13\n'));
    await expect(get(port, '/metrics', { maxVersion: 'TLSv1.2' })).rejects.toThrow(/version|alert/i);
    expect((await get(port, '/metrics')).status).toBe(200);
  });
});

describe('client certificates', () => {
  it('RequireAndVerifyClientCert: none and a stranger’s are refused, the CA’s accepted; probes open without one', async () => {
    const { port } = await serve(tlsYaml('  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n'));
    const none = await get(port, '/metrics');
    expect(none).toMatchObject({ status: 403, body: 'Forbidden: a client certificate is required\n' });
    const stranger = await get(port, '/metrics', { cert: pki.strangerCert, key: pki.strangerKey });
    expect(stranger).toMatchObject({ status: 403, body: 'Forbidden: the client certificate is not signed by the configured client CA\n' });
    expect(await get(port, '/metrics', { cert: pki.clientCert, key: pki.clientKey })).toMatchObject({ status: 200, body: 'data\n' });
    expect((await get(port, '/-/healthy')).status).toBe(200);
  });

  it('client_allowed_sans: a certificate of the right CA but another name is refused', async () => {
    const { port } = await serve(tlsYaml('  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  client_allowed_sans: [prometheus.monitoring.svc]\n'));
    expect((await get(port, '/metrics', { cert: pki.clientCert, key: pki.clientKey })).status).toBe(403);
  });
});

describe('changes to the file', () => {
  it('a new password applies without a restart; an invalid edit keeps the previous configuration', async () => {
    const { port, file } = await serve(`${tlsYaml()}basic_auth_users:\n  prometheus: ${HASH}\n`, 'changing.yml');
    expect((await get(port, '/metrics', { headers: basic('prometheus', PASSWORD) })).status).toBe(200);
    writeFileSync(file, `${tlsYaml()}basic_auth_users:\n  prometheus: ${bcrypt.hashSync('rotated', 4)}\n`);
    const deadline = Date.now() + 10_000;
    while ((await get(port, '/metrics', { headers: basic('prometheus', 'rotated') })).status !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect((await get(port, '/metrics', { headers: basic('prometheus', 'rotated') })).status).toBe(200);
    expect((await get(port, '/metrics', { headers: basic('prometheus', PASSWORD) })).status).toBe(401);
    writeFileSync(file, `${tlsYaml()}basic_auth_users:\n  prometheus: plain-text\n`);
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await get(port, '/metrics', { headers: basic('prometheus', 'rotated') })).status).toBe(200);
  });
});

describe('the command line', () => {
  it('a bad web configuration stops the start with every problem named; a good one passes --config.check', async () => {
    const { spawnSync } = await import('node:child_process');
    writeFileSync(join(pki.dir, 'monapi.yaml'), 'accounts:\n  - name: prod\n    base_url: https://m.example.com/api/v2\n    api_key_env: K\n');
    const run = (web: string) => {
      writeFileSync(join(pki.dir, 'cli-web.yml'), web);
      return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', `--config.file=${join(pki.dir, 'monapi.yaml')}`, `--web.config.file=${join(pki.dir, 'cli-web.yml')}`, '--web.listen-address=127.0.0.1:0'], {
        cwd: new URL('../..', import.meta.url),
        env: { PATH: process.env.PATH ?? '', K: 'k-1' },
        encoding: 'utf8',
        timeout: 20_000,
      });
    };
    const bad = run('tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\nbasic_auth_users:\n  admin: letmein\n');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe(
      `monapi-exporter: invalid web configuration ${join(pki.dir, 'cli-web.yml')}: 2 problems\n` +
        '  - basic_auth_users.admin: must be a bcrypt hash ($2y$10$... from htpasswd -nBC 10 admin), never the password itself\n' +
        `  - tls_server_config.cert_file: ${join(pki.dir, 'missing.crt')}: cannot read the cert_file: file not found\n`,
    );
    writeFileSync(join(pki.dir, 'cli-web.yml'), tlsYaml());
    const check = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', `--config.file=${join(pki.dir, 'monapi.yaml')}`, `--web.config.file=${join(pki.dir, 'cli-web.yml')}`, '--config.check'], {
      cwd: new URL('../..', import.meta.url),
      env: { PATH: process.env.PATH ?? '', K: 'k-1' },
      encoding: 'utf8',
    });
    expect(check.status).toBe(0);
    expect(check.stdout).toContain(`web configuration ${join(pki.dir, 'cli-web.yml')} is valid`);
  }, 60_000);
});

describe('web configuration reloads on /metrics', () => {
  it('shows no reload gauges without a web configuration file: a 0 there would read as a reload that failed', async () => {
    const registry = new Registry();
    server = await startWebServer(app, { listenAddress: '127.0.0.1:0', log: pino({ level: 'silent' }), registry });
    expect((await fetch(server.url)).status).toBe(200);
    const exposition = await registry.metrics();
    expect(exposition).toContain('monapi_exporter_http_connections_closed_total');
    expect(exposition).not.toContain('monapi_exporter_web_config_last_reload');
  });

  it('monapi_exporter_web_config_last_reload_successful: 1, 0 after an invalid edit or deletion (logged once), 1 when fixed', async () => {
    const registry = new Registry();
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const { port, file } = await serve(`${tlsYaml()}basic_auth_users:\n  prometheus: ${HASH}\n`, 'reloading.yml', { registry, log });
    const successful = () => gauge(registry, 'monapi_exporter_web_config_last_reload_successful');
    expect(await successful()).toBe(1);
    expect(await gauge(registry, 'monapi_exporter_web_config_last_reload_success_timestamp_seconds')).toBeGreaterThan(0);

    writeFileSync(file, `${tlsYaml()}basic_auth_users:\n  prometheus: plain-text\n`);
    await until('the reload of a plain-text password failing', async () => ((await successful()) === 0 ? true : undefined));

    rmSync(file);
    await until('the deleted file reported', () => (lines.some((l) => l.includes('cannot be read')) ? true : undefined));
    await new Promise((r) => setTimeout(r, 4_500));
    const deletion = lines.filter((l) => l.includes('cannot be read'));
    expect(deletion).toHaveLength(1);
    expect(deletion[0]).toContain('deleted or moved');
    expect(await successful()).toBe(0);
    // What was in force still is.
    expect((await get(port, '/metrics', { headers: basic('prometheus', PASSWORD) })).status).toBe(200);

    writeFileSync(file, `${tlsYaml()}basic_auth_users:\n  prometheus: ${HASH}\n`);
    await until('the reload of the mended file succeeding', async () => ((await successful()) === 1 ? true : undefined));
  }, 30_000);
});

