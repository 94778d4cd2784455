import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redactor } from '../../src/lib/redact.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { startFaultProxy, type FaultProxy } from '../faults/fault-proxy.js';
import { startExporterProcess, type ExporterProcess } from '../faults/process.js';
import { freePort } from '../support/prometheus.js';

/**
 * Item 9 of issue 13 and item 3 of issue 21: the whole program, as an operator runs it, with
 * recognisable keys at debug level, driven into 401 (a key the upstream does not know, echoed
 * back in its error body) and 403 plan_required (from proxies that echo the key as sent,
 * URL-encoded character by character, base64 and upper-cased, in the message and the upgrade
 * URL), a failed reload with a key pasted into a field of its own and into `headroom:`, a key
 * file, `--config.check` of a broken file and of `/proc/self/environ`. Every place a key could
 * surface is read: every log line, /metrics, /status (the last reload error included), the
 * landing page, the readiness text, error pages, the reload answers, the command's output. No
 * key in any form: each text is searched as the redactor searches (any case, URL-encoded,
 * base64 at any offset). (src/upstream/secrets.test.ts forces each path of the HTTP client.)
 */

const KEY_401 = 'canary-401-k3y-5f1d0a9e77';
const KEY_403 = 'canary-403-k3y-c0ffee1234';
const KEY_URL = 'canary-url-k3y-77e1b2c3d4';
const KEY_B64 = 'canary-b64-k3y-0badc0de99';
const KEY_UPPER = 'canary-upper-k3y-a1b2c3d4e5';
const KEY_FILE = 'canary-file-k3y-8badf00d42';
const KEYS = [KEY_401, KEY_403, KEY_URL, KEY_B64, KEY_UPPER, KEY_FILE];
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let sim: RunningSimulator;
const proxies: FaultProxy[] = [];
let dir: string;
let exporter: ExporterProcess | undefined;

beforeAll(async () => {
  sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 2, websites: 1 });
  for (const echo of [undefined, 'every-char-url-encoded', 'base64', 'upper-case'] as const) {
    const proxy = await startFaultProxy(sim.monitoringBaseUrl);
    proxy.set({ kind: 'plan_required', ...(echo && { echo }) });
    proxies.push(proxy);
  }
  dir = mkdtempSync(join(tmpdir(), 'monapi-secrets-'));
});
afterAll(async () => {
  exporter?.child.kill('SIGKILL');
  for (const proxy of proxies) await proxy.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Finds any of the keys in any form the redactor knows. */
const finder = new Redactor();
finder.add(...KEYS);

function check(args: readonly string[], env: Record<string, string>): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('no key anywhere', () => {
  it('in logs at debug level, /metrics, /status, /, readiness, error pages, reload answers or --config.check', async () => {
    writeFileSync(join(dir, 'file.key'), `${KEY_FILE}\n`);
    const [asSent, urlEncoded, base64, upper] = proxies;
    const config = `accounts:
  - name: refused
    base_url: ${sim.monitoringBaseUrl}
    api_key_env: KEY_401
  - name: starter
    base_url: ${asSent?.baseUrl ?? ''}
    api_key_env: KEY_403
  - name: starter-url
    base_url: ${urlEncoded?.baseUrl ?? ''}
    api_key_env: KEY_URL
  - name: starter-b64
    base_url: ${base64?.baseUrl ?? ''}
    api_key_env: KEY_B64
  - name: starter-upper
    base_url: ${upper?.baseUrl ?? ''}
    api_key_env: KEY_UPPER
  - name: from-file
    base_url: ${sim.monitoringBaseUrl}
    api_key_file: file.key
`;
    writeFileSync(join(dir, 'monapi.yaml'), config);
    const env = { KEY_401, KEY_403, KEY_URL, KEY_B64, KEY_UPPER };
    exporter = await startExporterProcess([`--config.file=${join(dir, 'monapi.yaml')}`, '--log.level=debug', '--web.enable-lifecycle'], env, await freePort());
    const p = exporter;
    await p.waitForLine(/API key is refused/);
    for (const account of ['starter', 'starter-url', 'starter-b64', 'starter-upper']) await p.waitForLine(new RegExp(`"account":"${account}".*plan_required|plan_required.*"account":"${account}"`));
    const texts: Record<string, string> = {};
    const read = async (where: string, path: string, init?: RequestInit) => {
      texts[where] = await (await fetch(`${p.url}${path}`, init)).text();
      return texts[where];
    };
    for (const path of ['/metrics', '/status', '/', '/-/ready', '/-/healthy', '/nowhere', '/metrics?x=1']) await read(path, path);
    await read('openmetrics', '/metrics', { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
    // The upgrade URLs made it to /status and the landing page, scrubbed.
    expect(texts['/status']).toMatch(/"upgrade_url":"https:\/\/monitoring\.example\.com\/upgrade\?key=\[redacted\]"/i);
    expect(texts['/']).toMatch(/Upgrade: https:\/\/monitoring\.example\.com\/upgrade\?key=\[redacted\]/i);

    // Failed reloads: a key pasted into a field of its own, then into headroom (quoted back as the wrong type, before).
    writeFileSync(join(dir, 'monapi.yaml'), `${config}    api_key: ${KEY_401}\n`);
    expect(await read('reload: api_key', '/-/reload', { method: 'POST' })).toContain('API keys must not be written in the config file');
    writeFileSync(join(dir, 'monapi.yaml'), `${config}    headroom: "${KEY_FILE}"\n`);
    expect(await read('reload: headroom', '/-/reload', { method: 'POST' })).toContain('accounts[5].headroom: must be a number (got "[REDACTED]")');
    const status = JSON.parse(await read('/status after the failed reload', '/status')) as { config: { last_reload_error: string } };
    expect(status.config.last_reload_error).toContain('accounts[5].headroom');
    await read('/ after the failed reload', '/');

    // --config.check of the broken file, of /proc/self/environ (the keys are in the environment), and of the good one.
    const broken = check([`--config.file=${join(dir, 'monapi.yaml')}`, '--config.check'], env);
    expect(broken.status).toBe(1);
    expect(broken.output).toContain('accounts[5].headroom: must be a number');
    texts['check: headroom'] = broken.output;
    const environ = check(['--config.file=/proc/self/environ', '--config.check'], env);
    expect(environ.status).toBe(1);
    expect(environ.output).toContain('not a kernel pseudo-file (/proc)');
    texts['check: /proc/self/environ'] = environ.output;
    writeFileSync(join(dir, 'monapi.yaml'), config);
    const good = check([`--config.file=${join(dir, 'monapi.yaml')}`, '--config.check'], env);
    expect(good.status).toBe(0);
    texts['check: valid'] = good.output;

    p.child.kill('SIGTERM');
    await p.exited();
    texts.logs = p.lines.join('\n');

    expect(texts['/metrics']).toMatch(/monapi_up_reason\{account="refused",reason="unauthorized"\} 1/);
    for (const account of ['starter', 'starter-url', 'starter-b64', 'starter-upper']) expect(texts['/metrics']).toMatch(new RegExp(`monapi_up_reason\\{account="${account}",reason="plan_required"\\} 1`));
    expect(texts.logs).toContain('"level":"debug"');
    expect(texts.logs).toContain('configuration reload failed');
    for (const [where, text] of Object.entries(texts)) {
      expect(finder.finds(text), `a key (in some form) found in ${where}:\n${finder.scrub(text) === text ? '' : text.slice(0, 2000)}`).toBe(false);
    }
  }, 90_000);

  it('a remote write password with quotes, a backslash and a dollar: not in logs, /status, reload answers or --config.check, escaped, encoded or cut', async () => {
    // Passwords hold no whitespace (the loader refuses it); every other character an escaping changes is here.
    const password = `Qz7"pa\\ss$w0rd'9x&<`;
    const user = 'monapi';
    const header = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    // A receiver that refuses every push and echoes the credentials: the password JSON-escaped, then the header across the 512th character.
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const prefix = JSON.stringify({ error: `user ${user} with password ${password} may not write` }).slice(0, -2);
        const pad = 'x'.repeat(Math.max(0, 500 - prefix.length - '; header: '.length));
        res.writeHead(400, { 'content-type': 'application/json' }).end(`${prefix}; ${pad}; header: ${req.headers.authorization ?? ''}"}`);
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/api/v1/write`;
    try {
      writeFileSync(join(dir, 'rw-password'), `${password}\n`);
      const config = `accounts:
  - name: pro
    base_url: ${sim.monitoringBaseUrl}
    api_key_env: KEY_401
remote_write:
  url: ${receiverUrl}
  push_interval: 1s
  basic_auth:
    username: ${user}
    password_file: rw-password
`;
      writeFileSync(join(dir, 'rw.yaml'), config);
      const env = { KEY_401: sim.keys.pro };
      const p = await startExporterProcess([`--config.file=${join(dir, 'rw.yaml')}`, '--log.level=debug', '--web.enable-lifecycle'], env, await freePort());
      exporter = p;
      await p.waitForLine(/the remote write receiver refused samples/, 30_000);
      const texts: Record<string, string> = {};
      const read = async (where: string, path: string, init?: RequestInit) => {
        texts[where] = await (await fetch(`${p.url}${path}`, init)).text();
        return texts[where];
      };
      // The password pasted into a field that quotes what it got.
      writeFileSync(join(dir, 'rw.yaml'), config.replace('api_key_env: KEY_401\n', `api_key_env: KEY_401\n    headroom: '${password.replace(/'/g, "''")}'\n`));
      expect(await read('reload', '/-/reload', { method: 'POST' })).toContain('accounts[0].headroom: must be a number (got "[REDACTED]")');
      await read('/status', '/status');
      await read('/', '/');
      const broken = check([`--config.file=${join(dir, 'rw.yaml')}`, '--config.check'], env);
      expect(broken.status).toBe(1);
      texts['check: broken'] = broken.output;
      p.child.kill('SIGTERM');
      await p.exited();
      texts.logs = p.lines.join('\n');
      expect(texts.logs).toContain('HTTP 400');

      const escaped = JSON.stringify(password).slice(1, -1);
      for (const [where, text] of Object.entries(texts)) {
        expect(text.includes('w0rd'), `the password, or part of it, in ${where}:\n${text.slice(0, 3000)}`).toBe(false);
        expect(text.includes(escaped), `the password JSON-escaped in ${where}`).toBe(false);
        expect(text.includes(header.slice(6, 20)), `the authorization header (base64), or part of it, in ${where}`).toBe(false);
        const finder = new Redactor();
        finder.add(password);
        expect(finder.finds(text), `the password in some form in ${where}:\n${text.slice(0, 3000)}`).toBe(false);
      }
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  }, 90_000);
});

