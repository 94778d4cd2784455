import { statSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { guardConnections, type ClosedReason, type ConnectionGuard } from './connection-guard.js';
import { enforceHeaderDeadline } from './header-deadline.js';
import { startHttpServer, type RunningServer } from './listen.js';
import { KnownGoodCredentials } from './password-check.js';
import { BasicAuthChecker, loadWebConfig, ThrottledPasswordGate, type PasswordGate, type WebConfig } from './web-config.js';

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
 * scrape over a kept-alive connection, far inside all of these. Connections are counted by
 * connection-guard.ts: past `evictIdleAbove` the longest-idle one makes room for a new one,
 * and one client address holds at most `maxConnectionsPerAddress`.
 */
export const SERVER_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  /** How often Node checks the two timeouts above (its default, 30 s, would let a slowloris live 40 s). */
  checkIntervalMs: 1_000,
  maxRequestsPerSocket: 1_000,
  maxConnections: 2_048,
  evictIdleAbove: 1_843,
  maxConnectionsPerAddress: 1_024,
  maxHeaderBytes: 16 * 1024,
} as const;

/**
 * A request refused for too many failed password checks is answered this much later: a client
 * looping on wrong passwords then costs one cheap request a second per connection, not as
 * many as the CPU can answer.
 */
const THROTTLED_ANSWER_DELAY_MS = 1_000;

/** How often the web configuration's files are looked at for changes. */
const WATCH_INTERVAL_MS = 2_000;

export interface WebServerOptions {
  readonly listenAddress: string;
  /** `--web.config.file`; undefined: plain HTTP, open. */
  readonly webConfigFile?: string | undefined;
  readonly log: Logger;
  /** Where the server's own metrics go (connections closed, web configuration reloads). */
  readonly registry?: Registry;
  /** Instead of `registry`: where a serving thread reports the same events (to the main thread's metrics). */
  readonly events?: WebServerEvents;
  /** Listen beside other sockets on the same port (serving threads; Linux and the BSDs). */
  readonly reusePort?: boolean;
  /** Where passwords not known to be right are checked; default this server's own throttle and the process's bcrypt threads. */
  readonly passwordGate?: PasswordGate;
}

/** What the server counts: connections it closed, throttled logins, web configuration reloads. */
export interface WebServerEvents {
  closed(reason: ClosedReason): void;
  throttled(): void;
  /** A reload of the web configuration file, or the first load; `atSeconds` Unix time. */
  reloaded(ok: boolean, atSeconds: number): void;
}

/** The events, counted in `registry` (its metrics registered on first use). */
export function webServerEvents(registry: Registry): WebServerEvents {
  const connections = connectionMetrics(registry);
  let reloads: WebConfigReloadMetrics | undefined;
  return {
    closed: (reason) => connections.closed.inc({ reason }),
    throttled: () => connections.throttled.inc(),
    reloaded: (ok, atSeconds) => {
      // Registered with the first read of a web configuration file: without one there is nothing
      // to reload, and a gauge at 0 would read as a reload that failed.
      reloads ??= webConfigReloadMetrics(registry);
      reloads.successful.set(ok ? 1 : 0);
      if (ok) reloads.timestamp.set(atSeconds);
    },
  };
}

interface ConnectionMetrics {
  readonly closed: Counter<'reason'>;
  readonly throttled: Counter;
}

interface WebConfigReloadMetrics {
  readonly successful: Gauge;
  readonly timestamp: Gauge;
}

/** Every metric the web server can show, those of a web configuration file included (for the metrics reference). */
export function createWebServerMetrics(registry: Registry): void {
  connectionMetrics(registry);
  webConfigReloadMetrics(registry);
}

/** Those an earlier server on the same registry registered (a restart in tests: prom-client refuses a second registration), or new ones. */
function connectionMetrics(registry: Registry): ConnectionMetrics {
  const registers = [registry];
  const existing = registry.getSingleMetric('monapi_exporter_http_connections_closed_total') as Counter<'reason'> | undefined;
  const closed =
    existing ??
    new Counter({
      name: 'monapi_exporter_http_connections_closed_total',
      help: 'Connections the HTTP server closed or refused to make room: idle_evicted (the longest-idle one, past the connection limit), address_idle_evicted (the longest-idle one of an address at its limit), refused_full and refused_address (none idle to close).',
      labelNames: ['reason'],
      registers,
    });
  if (!existing) for (const reason of ['idle_evicted', 'address_idle_evicted', 'refused_full', 'refused_address'] satisfies ClosedReason[]) closed.inc({ reason }, 0);
  return {
    closed,
    throttled:
      (registry.getSingleMetric('monapi_exporter_http_auth_throttled_total') as Counter | undefined) ??
      new Counter({
        name: 'monapi_exporter_http_auth_throttled_total',
        help: 'Requests answered 429 without a password check: their address had too many failed checks, or too many checks were waiting.',
        registers,
      }),
  };
}

/** As `connectionMetrics`, for the reloads of a web configuration file. */
function webConfigReloadMetrics(registry: Registry): WebConfigReloadMetrics {
  const registers = [registry];
  return {
    successful:
      (registry.getSingleMetric('monapi_exporter_web_config_last_reload_successful') as Gauge | undefined) ??
      new Gauge({
        name: 'monapi_exporter_web_config_last_reload_successful',
        help: 'Whether the web configuration (--web.config.file) in force is the file as it is now: 0 while a changed file that is invalid, unreadable or deleted is ignored and the previous one stays in force. Only with --web.config.file.',
        registers,
      }),
    timestamp:
      (registry.getSingleMetric('monapi_exporter_web_config_last_reload_success_timestamp_seconds') as Gauge | undefined) ??
      new Gauge({
        name: 'monapi_exporter_web_config_last_reload_success_timestamp_seconds',
        help: 'Unix time the web configuration (--web.config.file) was last read successfully (the start counts as one). Only with --web.config.file.',
        registers,
      }),
  };
}

interface ActiveConfig {
  readonly config: WebConfig;
  readonly auth: BasicAuthChecker;
  readonly fingerprint: string;
}

/**
 * `startExporter`'s `serve` for the main thread: `startWebServer` on the exporter's listen
 * address, reporting to its registry. The command line's and the demo's, so that both serve
 * alike, with the same self-metrics.
 */
export function mainThreadWebServer(options: { readonly log: Logger; readonly webConfigFile?: string | undefined }): (app: RequestListener, listenAddress: string, lifecycle: unknown, registry: Registry) => Promise<RunningServer> {
  return (app, listenAddress, _lifecycle, registry) => startWebServer(app, { listenAddress, webConfigFile: options.webConfigFile, log: options.log, registry });
}

/**
 * Starts the server for `app`; throws `WebConfigError` for a bad web configuration. Long: the
 * TLS context, basic auth, the connection guard and the reload of the web configuration share
 * the server's state and are wired here in one place.
 */
export async function startWebServer(app: RequestListener, options: WebServerOptions): Promise<RunningServer> {
  const file = options.webConfigFile;
  // Kept across reloads: a rotated password must not wipe the failures of a flood in progress, nor the logins known good.
  const gate = options.passwordGate ?? new ThrottledPasswordGate();
  const knownGood = new KnownGoodCredentials();
  const load = (): ActiveConfig | undefined => {
    if (file === undefined) return undefined;
    const config = loadWebConfig(file);
    return { config, auth: new BasicAuthChecker(config.users, gate, knownGood), fingerprint: fingerprintOf(file, config) };
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
  const events = options.events ?? (options.registry && webServerEvents(options.registry));
  const guard: ConnectionGuard = guardConnections(
    server,
    { maxConnections: SERVER_LIMITS.maxConnections, evictAt: SERVER_LIMITS.evictIdleAbove, maxPerAddress: SERVER_LIMITS.maxConnectionsPerAddress },
    (reason) => events?.closed(reason),
  );
  enforceHeaderDeadline(server, SERVER_LIMITS.headersTimeoutMs, tls ? 'secureConnection' : 'connection');
  const reloaded = (ok: boolean) => events?.reloaded(ok, Date.now() / 1000);
  if (file !== undefined) reloaded(true);
  /** Why the file in force is not the file on disk, logged once per kind of problem. */
  let problem: string | undefined;

  const refresh = () => {
    if (file === undefined || active === undefined) return;
    let fingerprint: string;
    try {
      fingerprint = fingerprintOf(file, active.config);
    } catch (error) {
      // Deleted or unreadable (the file, or a certificate it names): say so once, keep what is in force.
      const why = `cannot read ${describeMissing(error)}`;
      if (problem !== why) {
        options.log.error({ webConfigFile: file, err: { message: why } }, 'the web configuration or a file it names cannot be read; the previous web configuration stays in force');
        problem = why;
      }
      reloaded(false);
      return;
    }
    // Unchanged: nothing to do, unless the file had gone and is back as it was.
    if (fingerprint === active.fingerprint && !problem?.startsWith('cannot read')) return;
    try {
      const next = load();
      if (next === undefined) return;
      if ((next.config.tls === undefined) !== (active.config.tls === undefined)) {
        options.log.error({ webConfigFile: file }, 'the web configuration turns TLS on or off, which needs a restart; the previous web configuration stays in force');
        active = { ...active, fingerprint: next.fingerprint };
        problem = 'tls on or off';
        reloaded(false);
        return;
      }
      if (next.config.tls) (server as HttpsServer).setSecureContext(next.config.tls.context);
      if (next.config.tls && 'requestCert' in server) (server as HttpsServer & { requestCert: boolean }).requestCert = next.config.tls.clientAuth !== 'NoClientCert';
      const unchanged = next.fingerprint === active.fingerprint;
      active = next;
      problem = undefined;
      reloaded(true);
      options.log.info({ webConfigFile: file, tls: next.config.tls !== undefined, users: next.config.users.size }, unchanged ? 'web configuration readable again' : 'web configuration reloaded');
    } catch (error) {
      options.log.error({ webConfigFile: file, err: { message: error instanceof Error ? error.message : String(error) } }, 'the changed web configuration is invalid; the previous one stays in force');
      active = { ...active, fingerprint };
      problem = 'invalid';
      reloaded(false);
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
    current.auth.check(req.headers.authorization, req.socket.remoteAddress).then(
      (outcome) => {
        if (outcome === 'ok') app(req, res);
        else if (outcome === 'denied') deny(res, 401, 'Unauthorized\n', { 'WWW-Authenticate': 'Basic realm="monapi-exporter", charset="UTF-8"' });
        else {
          events?.throttled();
          const answer = setTimeout(() => {
            if (!res.destroyed) deny(res, 429, 'Too Many Requests: too many failed password checks from this address; retry later\n', { 'Retry-After': String(outcome.retryAfterSeconds) });
          }, THROTTLED_ANSWER_DELAY_MS);
          answer.unref();
          res.once('close', () => clearTimeout(answer));
        }
      },
      () => deny(res, 500, 'Internal Server Error\n'),
    );
  };

  const running = await startHttpServer(guarded, options.listenAddress, { server, reusePort: options.reusePort ?? false });
  return {
    ...running,
    close: (timeoutMs?: number) => {
      clearInterval(watcher);
      guard.stop();
      return running.close(timeoutMs);
    },
  };
}

function describeMissing(error: unknown): string {
  const path = typeof error === 'object' && error !== null && 'path' in error ? String(error.path) : 'a file';
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
  return `${path}: ${code === 'ENOENT' ? 'deleted or moved' : (code ?? 'unreadable')}`;
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
