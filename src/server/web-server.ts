import { statSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { enforceHeaderDeadline } from './header-deadline.js';
import { startHttpServer, type RunningServer } from './listen.js';
import { BasicAuthChecker, loadWebConfig, type WebConfig } from './web-config.js';

/**
 * The HTTP server as it faces the network: TLS, client certificates and basic auth from
 * `--web.config.file` (re-read when it or a file it names changes), and the limits that keep
 * slow or greedy clients from taking it over. The health probes stay open: kubelet cannot
 * present a client certificate or a password, and they reveal nothing.
 */

/** Paths served without authentication. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(['/-/healthy', '/-/ready']);

/**
 * Limits against slow and greedy clients. A slowloris connection (headers sent a byte at a
 * time) is cut after `headersTimeoutMs`; a request body after `requestTimeoutMs`; an idle
 * keep-alive connection after `keepAliveTimeoutMs`. Prometheus sends one small GET per
 * scrape over a kept-alive connection, far inside all of these.
 */
export const SERVER_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  /** How often Node checks the two timeouts above (its default, 30 s, would let a slowloris live 40 s). */
  checkIntervalMs: 1_000,
  maxRequestsPerSocket: 1_000,
  maxConnections: 2_048,
  maxHeaderBytes: 16 * 1024,
} as const;

/** How often the web configuration's files are looked at for changes. */
const WATCH_INTERVAL_MS = 2_000;

export interface WebServerOptions {
  readonly listenAddress: string;
  /** `--web.config.file`; undefined: plain HTTP, open. */
  readonly webConfigFile?: string | undefined;
  readonly log: Logger;
}

interface ActiveConfig {
  readonly config: WebConfig;
  readonly auth: BasicAuthChecker;
  readonly fingerprint: string;
}

/** Starts the server for `app`; throws `WebConfigError` for a bad web configuration. */
export async function startWebServer(app: RequestListener, options: WebServerOptions): Promise<RunningServer> {
  const file = options.webConfigFile;
  const load = (): ActiveConfig | undefined => {
    if (file === undefined) return undefined;
    const config = loadWebConfig(file);
    return { config, auth: new BasicAuthChecker(config.users), fingerprint: fingerprintOf(file, config) };
  };
  let active = load();
  const tls = active?.config.tls;

  const serverOptions = {
    headersTimeout: SERVER_LIMITS.headersTimeoutMs,
    requestTimeout: SERVER_LIMITS.requestTimeoutMs,
    keepAliveTimeout: SERVER_LIMITS.keepAliveTimeoutMs,
    connectionsCheckingInterval: SERVER_LIMITS.checkIntervalMs,
    maxHeaderSize: SERVER_LIMITS.maxHeaderBytes,
  };
  // Client certificates are asked for in the handshake but judged per request, so the open paths stay open.
  const server: Server = tls
    ? createHttpsServer({ ...serverOptions, handshakeTimeout: SERVER_LIMITS.headersTimeoutMs, ...tls.context, requestCert: tls.clientAuth !== 'NoClientCert', rejectUnauthorized: false })
    : createHttpServer(serverOptions);
  server.maxRequestsPerSocket = SERVER_LIMITS.maxRequestsPerSocket;
  server.maxConnections = SERVER_LIMITS.maxConnections;
  enforceHeaderDeadline(server, SERVER_LIMITS.headersTimeoutMs, tls ? 'secureConnection' : 'connection');

  const refresh = () => {
    if (file === undefined || active === undefined) return;
    let fingerprint: string;
    try {
      fingerprint = fingerprintOf(file, active.config);
    } catch {
      return;
    }
    if (fingerprint === active.fingerprint) return;
    try {
      const next = load();
      if (next === undefined) return;
      if ((next.config.tls === undefined) !== (active.config.tls === undefined)) {
        options.log.error({ webConfigFile: file }, 'the web configuration turns TLS on or off, which needs a restart; the previous web configuration stays in force');
        active = { ...active, fingerprint: next.fingerprint };
        return;
      }
      if (next.config.tls) (server as HttpsServer).setSecureContext(next.config.tls.context);
      if (next.config.tls && 'requestCert' in server) (server as HttpsServer & { requestCert: boolean }).requestCert = next.config.tls.clientAuth !== 'NoClientCert';
      active = next;
      options.log.info({ webConfigFile: file, tls: next.config.tls !== undefined, users: next.config.users.size }, 'web configuration reloaded');
    } catch (error) {
      options.log.error({ webConfigFile: file, err: { message: error instanceof Error ? error.message : String(error) } }, 'the changed web configuration is invalid; the previous one stays in force');
      active = { ...active, fingerprint };
    }
  };
  const watcher = setInterval(refresh, WATCH_INTERVAL_MS);
  watcher.unref();

  const guarded: RequestListener = (req, res) => {
    const current = active;
    if (current === undefined) {
      app(req, res);
      return;
    }
    for (const [name, value] of Object.entries(current.config.headers)) res.setHeader(name, value);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (OPEN_PATHS.has(path)) {
      app(req, res);
      return;
    }
    const refusal = clientCertificateRefusal(req, current.config);
    if (refusal !== undefined) {
      deny(res, 403, `Forbidden: ${refusal}\n`);
      return;
    }
    if (!current.auth.enabled) {
      app(req, res);
      return;
    }
    current.auth.check(req.headers.authorization).then(
      (ok) => {
        if (ok) app(req, res);
        else deny(res, 401, 'Unauthorized\n', { 'WWW-Authenticate': 'Basic realm="monapi-exporter", charset="UTF-8"' });
      },
      () => deny(res, 500, 'Internal Server Error\n'),
    );
  };

  const running = await startHttpServer(guarded, options.listenAddress, { server });
  return {
    ...running,
    close: (timeoutMs?: number) => {
      clearInterval(watcher);
      return running.close(timeoutMs);
    },
  };
}

function deny(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(body);
}

/** Why the client's certificate does not meet client_auth_type (and client_allowed_sans), or undefined. */
function clientCertificateRefusal(req: IncomingMessage, config: WebConfig): string | undefined {
  const tls = config.tls;
  if (!tls || tls.clientAuth === 'NoClientCert' || tls.clientAuth === 'RequestClientCert') return undefined;
  const socket = req.socket as TLSSocket;
  const certificate = socket.getPeerCertificate();
  const presented = certificate !== null && Object.keys(certificate).length > 0;
  const verify = tls.clientAuth === 'RequireAndVerifyClientCert' || (tls.clientAuth === 'VerifyClientCertIfGiven' && presented);
  if (!presented && tls.clientAuth !== 'VerifyClientCertIfGiven') return 'a client certificate is required';
  if (verify && !socket.authorized) return 'the client certificate is not signed by the configured client CA';
  if (presented && tls.allowedSans !== undefined) {
    const sans = (certificate.subjectaltname ?? '').split(', ').map((entry) => entry.slice(entry.indexOf(':') + 1));
    if (!sans.some((san) => tls.allowedSans?.includes(san))) return 'the client certificate names none of client_allowed_sans';
  }
  return undefined;
}

/** Changes when the web configuration file or a file it names changes (Kubernetes swaps a symlink). */
function fingerprintOf(file: string, config: WebConfig): string {
  const paths = [file, ...config.files];
  return paths
    .map((path) => {
      const s = statSync(path);
      return `${path}:${s.ino}:${s.size}:${s.mtimeMs}`;
    })
    .join('|');
}
