import { EnvHttpProxyAgent, errors as undiciErrors, type Dispatcher } from 'undici';
import { responseTurns } from '../../lib/turns.js';

/**
 * The narrow door between the upstream clients and the network. A client hands over a URL,
 * headers and the budget's AbortSignal and gets the status, headers and whole body back; it
 * never sees sockets, so clients are tested with a fake that returns canned responses.
 */
export interface Transport {
  get(url: string, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<TransportResponse>;
}

export interface TransportResponse {
  readonly status: number;
  /** Lower-case header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /**
   * Frees the body's memory at once, for the caller to call once it has read what it needs
   * (the body is empty after). Without it, a body that lived through a decode on a busy thread
   * waits for a full collection (docs/scaling.md). A transport that keeps its bodies has none.
   */
  readonly release?: () => void;
}

/**
 * Why a request produced no complete response. The transport knows nothing of APIs or route
 * templates; `src/upstream/http/exchange.ts` turns these into the typed upstream errors.
 */
export type TransportFailureKind = 'timeout' | 'network' | 'too_large' | 'aborted' | 'redirect';

export class TransportFailure extends Error {
  readonly kind: TransportFailureKind;
  /** Set when the failure happened after the status line arrived (e.g. body too large). */
  readonly status: number | undefined;
  /** A timeout of the whole request (the deadline), not of one phase. */
  readonly deadline: boolean;

  constructor(kind: TransportFailureKind, message: string, status?: number, deadline = false) {
    super(message);
    this.name = 'TransportFailure';
    this.kind = kind;
    this.status = status;
    this.deadline = deadline;
  }
}

export interface UndiciTransportOptions {
  /** Time to open the TCP (and TLS) connection. */
  connectTimeoutMs?: number;
  /** Time from sending the request to receiving the complete response headers. */
  headersTimeoutMs?: number;
  /** Longest silence between two body chunks. */
  bodyTimeoutMs?: number;
  /**
   * The whole request, connection, headers and body together. The idle timeouts alone let a
   * body that drips a byte every few seconds hold a connection (and a budget slot) for good.
   */
  deadlineMs?: number;
  /** A response body larger than this fails instead of being buffered. */
  maxResponseBytes?: number;
  /** Concurrent connections per origin; the budget's concurrency cap normally binds first. */
  connectionsPerOrigin?: number;
  /** How long an idle keep-alive connection is kept when the server gives no hint. */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_TRANSPORT_OPTIONS: Readonly<Required<UndiciTransportOptions>> = {
  connectTimeoutMs: 5_000,
  headersTimeoutMs: 15_000,
  bodyTimeoutMs: 15_000,
  deadlineMs: 30_000,
  maxResponseBytes: 8 * 1024 * 1024,
  connectionsPerOrigin: 4,
  keepAliveTimeoutMs: 10_000,
};

/** How the upstream's certificate is checked. */
export interface TlsOptions {
  /** PEM of the CA certificates to trust instead of the system's. */
  readonly ca?: string | undefined;
  /** Accept any certificate. Off by default; the exporter warns when it is on. */
  readonly insecureSkipVerify?: boolean | undefined;
}

/**
 * Proxies as curl and Go read them from HTTPS_PROXY, HTTP_PROXY and NO_PROXY (lower case
 * wins, as in curl). Loopback hosts are never proxied, as in Go's net/http.
 */
export interface ProxySettings {
  readonly httpProxy?: string | undefined;
  readonly httpsProxy?: string | undefined;
  readonly noProxy?: string | undefined;
}

export function proxySettingsFromEnv(env: NodeJS.ProcessEnv): ProxySettings {
  const pick = (name: string): string | undefined => {
    const value = env[name.toLowerCase()] ?? env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  return { httpProxy: pick('HTTP_PROXY'), httpsProxy: pick('HTTPS_PROXY'), noProxy: pick('NO_PROXY') };
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/**
 * One keep-alive pool per origin (undici's Agent), behind the proxy the environment names.
 * Redirects are never followed: the key would travel to wherever the Location points.
 */
export class UndiciTransport implements Transport {
  private readonly options: Readonly<Required<UndiciTransportOptions>>;
  private readonly dispatcher: Dispatcher;
  private closed = false;

  constructor(options: UndiciTransportOptions = {}, tls: TlsOptions = {}, proxy: ProxySettings = {}) {
    const merged = { ...DEFAULT_TRANSPORT_OPTIONS, ...definedOnly(options) };
    for (const [name, value] of Object.entries(merged)) {
      if (!Number.isFinite(value) || value <= 0) {
        throw new RangeError(`transport option ${name} must be a positive number, got ${String(value)}`);
      }
    }
    this.options = merged;
    const connect = {
      timeout: merged.connectTimeoutMs,
      ...(tls.ca !== undefined && { ca: tls.ca }),
      ...(tls.insecureSkipVerify === true && { rejectUnauthorized: false }),
    };
    const noProxy = proxy.noProxy?.trim() === '*' ? '*' : [proxy.noProxy, ...LOOPBACK_HOSTS].filter(Boolean).join(',');
    this.dispatcher = new EnvHttpProxyAgent({
      connections: merged.connectionsPerOrigin,
      headersTimeout: merged.headersTimeoutMs,
      bodyTimeout: merged.bodyTimeoutMs,
      keepAliveTimeout: merged.keepAliveTimeoutMs,
      connect,
      // Through a proxy the target's TLS is set up inside the tunnel, with these settings.
      requestTls: connect,
      // Explicit values, so undici never reads process.env itself: the caller decides.
      httpProxy: proxy.httpProxy ?? '',
      httpsProxy: proxy.httpsProxy ?? '',
      noProxy,
    });
  }

  async get(url: string, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<TransportResponse> {
    if (this.closed) throw new TransportFailure('network', 'transport is closed');
    const target = parseHttpUrl(url);
    if (signal.aborted) throw new TransportFailure('aborted', 'request aborted before it was sent');

    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.options.deadlineMs);
    const stop = () => deadline.abort();
    signal.addEventListener('abort', stop, { once: true });
    let response: Dispatcher.ResponseData | undefined;
    try {
      response = await this.dispatcher.request({
        origin: target.origin,
        method: 'GET',
        path: `${target.pathname}${target.search}`,
        headers: { accept: 'application/json, text/plain;q=0.9', ...headers },
        signal: deadline.signal,
      });
      const status = response.statusCode;
      if (status >= 300 && status < 400 && response.headers.location !== undefined) {
        discard(response.body);
        throw new TransportFailure('redirect', describeRedirect(target, headerValue(response.headers.location) ?? ''), status);
      }
      const cap = this.options.maxResponseBytes;
      const declared = Number(headerValue(response.headers['content-length']));
      if (Number.isFinite(declared) && declared > cap) {
        discard(response.body);
        throw new TransportFailure('too_large', `response declares ${declared} bytes, over the cap of ${cap} bytes`, status);
      }
      const body = new OwnedBody(Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined, cap);
      for await (const chunk of response.body) {
        if (body.length + (chunk as Buffer).length > cap) {
          discard(response.body);
          throw new TransportFailure('too_large', `response body exceeds the cap of ${cap} bytes`, status);
        }
        body.append(chunk as Buffer);
      }
      const complete: TransportResponse = { status, headers: flattenHeaders(response.headers), body: body.bytes(), release: () => body.release() };
      // What the caller does with it (decode, map, publish) waits for its own turn of the loop.
      await responseTurns.next();
      return complete;
    } catch (error) {
      if (response && !response.body.destroyed) discard(response.body);
      if (deadline.signal.aborted && !signal.aborted && !(error instanceof TransportFailure)) {
        throw new TransportFailure('timeout', `no complete response within the request deadline of ${this.options.deadlineMs / 1000} s`, response?.statusCode, true);
      }
      throw toTransportFailure(error, signal);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    }
  }

  /** Closes every connection, letting in-flight requests finish. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.dispatcher.close();
  }
}

/** Room for a body that declares no length, at first. */
const UNDECLARED_BODY_BYTES = 16 * 1024;

/**
 * A body in memory of its own, into which each chunk is copied as it comes. undici's chunks
 * are views on the socket's read buffers: held until the body is whole (and through the turn
 * after it), those buffers outlived the young generation's collections on a busy main thread,
 * and at a million series the external memory they held brought full collections of 45 to 140
 * ms (docs/scaling.md). Copied at once, they die young; the body's own memory is freed by
 * `release` once it is decoded.
 */
class OwnedBody {
  private store: ArrayBuffer;
  private view: Buffer;
  private received = 0;

  constructor(
    declared: number | undefined,
    /** The most it ever holds: the transport refuses a longer body before appending to it. */
    private readonly cap: number,
  ) {
    this.store = new ArrayBuffer(declared ?? Math.min(cap, UNDECLARED_BODY_BYTES));
    this.view = Buffer.from(this.store);
  }

  get length(): number {
    return this.received;
  }

  append(chunk: Buffer): void {
    const needed = this.received + chunk.length;
    if (needed > this.store.byteLength) {
      const grown = new ArrayBuffer(Math.max(needed, Math.min(this.cap, 2 * this.store.byteLength)));
      const view = Buffer.from(grown);
      this.view.copy(view, 0, 0, this.received);
      this.store.transfer(0);
      this.store = grown;
      this.view = view;
    }
    chunk.copy(this.view, this.received);
    this.received = needed;
  }

  bytes(): Buffer {
    return this.received === this.view.length ? this.view : this.view.subarray(0, this.received);
  }

  release(): void {
    if (!this.store.detached) this.store.transfer(0);
  }
}

/** Where a redirect pointed: the host when it is another one, never the path or query (they may echo a key). */
function describeRedirect(from: URL, location: string): string {
  let to: URL | undefined;
  try {
    to = new URL(location, from);
  } catch {
    to = undefined;
  }
  const where = to === undefined ? 'an unreadable location' : to.origin === from.origin ? 'another path on the same host' : `another host (${to.host})`;
  return `redirected to ${where}; redirects are not followed, so the key never travels elsewhere: set base_url to the final address`;
}

/** Drops the rest of a body (and its connection); the abort error this raises is expected. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

function definedOnly(options: UndiciTransportOptions): UndiciTransportOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

function parseHttpUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError('request URL is not a valid absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`request URL must use http or https, not ${parsed.protocol}`);
  }
  return parsed;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const joined = headerValue(value);
    if (joined !== undefined) flat[name.toLowerCase()] = joined;
  }
  return flat;
}

/**
 * Keeps only the error's class of failure and a short description. The original error is
 * not attached: undici errors can hold the request (and with it the credential headers).
 */
function toTransportFailure(error: unknown, signal: AbortSignal): TransportFailure {
  if (error instanceof TransportFailure) return error;
  if (signal.aborted) return new TransportFailure('aborted', 'request aborted by the caller');
  const code = errorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new TransportFailure('timeout', describeTimeout(code));
  }
  if (error instanceof undiciErrors.RequestAbortedError) {
    return new TransportFailure('aborted', 'request aborted');
  }
  const label = code ?? (error instanceof Error ? error.name : 'unknown error');
  return new TransportFailure('network', `connection failed (${label})`);
}

function describeTimeout(code: string): string {
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connect timeout';
    case 'UND_ERR_HEADERS_TIMEOUT':
      return 'no response headers within the headers timeout';
    case 'UND_ERR_BODY_TIMEOUT':
      return 'response body stalled beyond the body timeout';
    default:
      return `timed out (${code})`;
  }
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = error.code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
