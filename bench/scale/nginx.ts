import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { requireProgram, stopProcess } from './processes.js';

/**
 * The floor: nginx serving the exporter's own response bodies from files, the gzip one with
 * `gzip_static` (so nginx sends stored bytes and compresses nothing), with sendfile. Each
 * variant is a location; the harness writes the files before measuring it.
 */

export interface NginxVariant {
  /** Location, e.g. `/text`. */
  readonly path: string;
  readonly contentType: string;
}

export interface RunningNginx {
  readonly origin: string;
  /** Saves the bodies nginx serves at `variant.path` (identity) and `variant.path.gz` (gzip). */
  write(variant: NginxVariant, identity: Buffer, gzip: Buffer): void;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startNginx(dir: string, variants: readonly NginxVariant[]): Promise<RunningNginx> {
  const nginx = requireProgram('nginx', 'nginx');
  const www = join(dir, 'www');
  for (const sub of ['www', 'temp', 'logs']) mkdirSync(join(dir, sub), { recursive: true });
  // nginx's workers drop root for `nobody`: every directory on the way and every file must
  // be readable by others, or nginx answers 403 and the floor is not a floor.
  for (const path of [dir, www]) chmodSync(path, 0o755);
  for (let path = dirname(dir); path !== dirname(path); path = dirname(path)) {
    if ((statSync(path).mode & 0o001) === 0) throw new Error(`nginx's worker could not reach ${www}: ${path} is not searchable by others (chmod o+x)`);
  }
  const port = await freePort();
  const locations = variants
    .map((v) => `    location = ${v.path} {\n      types { }\n      default_type "${v.contentType}";\n    }`)
    .join('\n');
  const conf = `worker_processes auto;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'logs', 'error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path ${join(dir, 'temp')};
  proxy_temp_path ${join(dir, 'temp')};
  fastcgi_temp_path ${join(dir, 'temp')};
  uwsgi_temp_path ${join(dir, 'temp')};
  scgi_temp_path ${join(dir, 'temp')};
  server {
    listen 127.0.0.1:${port};
    root ${www};
    gzip_static on;
    etag off;
${locations}
  }
}
`;
  const confFile = join(dir, 'nginx.conf');
  writeFileSync(confFile, conf);
  const child: ChildProcess = spawn(nginx, ['-c', confFile, '-p', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const origin = `http://127.0.0.1:${port}`;
  await waitUntilListening(port, child, () => output);
  return {
    origin,
    write(variant, identity, gzip) {
      const file = join(www, variant.path.slice(1));
      writeFileSync(file, identity, { mode: 0o644 });
      writeFileSync(`${file}.gz`, gzip, { mode: 0o644 });
      chmodSync(file, 0o644);
      chmodSync(`${file}.gz`, 0o644);
    },
    stop: () => stopProcess(child),
  };
}

async function waitUntilListening(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const req = request(`http://127.0.0.1:${port}/`, (res) => {
        res.resume();
        resolve(true);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nginx did not listen on port ${port} within 10 s: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
