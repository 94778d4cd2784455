import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ListenAddress {
  /** Undefined for `:port`, which listens on every interface. */
  readonly host: string | undefined;
  readonly port: number;
}

const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;
const IPV6 = /^[0-9A-Fa-f:.]+(%[A-Za-z0-9_.-]+)?$/;

/**
 * Parses `host:port`, `:port` or `[ipv6]:port` (the `--web.listen-address` forms).
 * Throws a RangeError naming the address and what is wrong with it.
 */
export function parseListenAddress(address: string): ListenAddress {
  const fail = (why: string): never => {
    throw new RangeError(`invalid listen address ${JSON.stringify(address)}: ${why}`);
  };
  const colon = address.lastIndexOf(':');
  if (colon < 0) return fail('expected host:port, :port or [ipv6]:port');
  let host: string | undefined = address.slice(0, colon);
  const portText = address.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) return fail(`port ${JSON.stringify(portText)} is not a number`);
  const port = Number(portText);
  if (port > 65535) return fail(`port ${port} is above 65535`);
  if (host.startsWith('[')) {
    if (!host.endsWith(']')) return fail('missing ] after the IPv6 address');
    host = host.slice(1, -1);
    if (!IPV6.test(host) || !host.includes(':')) return fail(`${JSON.stringify(host)} is not an IPv6 address`);
  } else if (host === '') {
    host = undefined;
  } else if (host.includes(':')) {
    return fail('an IPv6 address must be written in brackets, e.g. [::1]:9100');
  } else if (!HOSTNAME.test(host)) {
    return fail(`${JSON.stringify(host)} is not a valid host name or IPv4 address`);
  }
  return { host, port };
}

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:9100`; `localhost` when listening on every interface. */
  readonly url: string;
  readonly server: Server;
  /**
   * Stops accepting connections, lets in-flight requests finish, closes idle keep-alive
   * connections at once and, after `timeoutMs` (default 10 s), any that are still open.
   */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * `server`: one made by the caller (HTTPS, timeouts; see web-server.ts); default a plain HTTP
 * server. `reusePort`: share the port with other sockets that ask the same (serving threads).
 */
export async function startHttpServer(app: RequestListener, listenAddress: string, options: { server?: Server; reusePort?: boolean } = {}): Promise<RunningServer> {
  const { host, port } = parseListenAddress(listenAddress);
  const server = options.server ?? createServer();
  // Node's close() leaves a keep-alive socket open after its in-flight response; track
  // responses so closing can end those sockets (and refuse keep-alive to late requests).
  const inFlight = new Map<ServerResponse, Socket>();
  let shuttingDown = false;
  server.on('request', (req, res: ServerResponse) => {
    if (shuttingDown) res.shouldKeepAlive = false;
    inFlight.set(res, req.socket);
    res.once('close', () => inFlight.delete(res));
  });
  server.on('request', app);
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      reject(new Error(`cannot listen on ${listenAddress}: ${error.message}`, { cause: error }));
    };
    server.once('error', onError);
    server.listen({ host, port, ...(options.reusePort ? { reusePort: true } : {}) }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host === undefined ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `${'setSecureContext' in server ? 'https' : 'http'}://${urlHost}:${bound}`,
    server,
    close(timeoutMs = 10_000) {
      closing ??= new Promise<void>((resolve, reject) => {
        shuttingDown = true;
        for (const [res, socket] of inFlight) {
          if (!res.headersSent) res.shouldKeepAlive = false;
          else res.once('finish', () => socket.destroySoon());
        }
        const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
        force.unref();
        server.close((error) => {
          clearTimeout(force);
          if (error) reject(error);
          else resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
