import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';

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
}

/**
 * Why a request produced no complete response. The transport knows nothing of APIs or route
 * templates; `src/upstream/http/exchange.ts` turns these into the typed upstream errors.
 */
export type TransportFailureKind = 'timeout' | 'network' | 'too_large' | 'aborted';

export class TransportFailure extends Error {
  readonly kind: TransportFailureKind;
  /** Set when the failure happened after the status line arrived (e.g. body too large). */
  readonly status: number | undefined;

  constructor(kind: TransportFailureKind, message: string, status?: number) {
    super(message);
    this.name = 'TransportFailure';
    this.kind = kind;
    this.status = status;
  }
}

export interface UndiciTransportOptions {
  /** Time to open the TCP (and TLS) connection. */
  connectTimeoutMs?: number;
  /** Time from sending the request to receiving the complete response headers. */
  headersTimeoutMs?: number;
  /** Longest silence between two body chunks. */
  bodyTimeoutMs?: number;
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
  maxResponseBytes: 8 * 1024 * 1024,
  connectionsPerOrigin: 4,
  keepAliveTimeoutMs: 10_000,
};

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** One keep-alive `undici.Pool` per origin, created on first use. */
export class UndiciTransport implements Transport {
  private readonly options: Readonly<Required<UndiciTransportOptions>>;
  private readonly pools = new Map<string, Pool>();
  private closed = false;

  constructor(options: UndiciTransportOptions = {}) {
    const merged = { ...DEFAULT_TRANSPORT_OPTIONS, ...definedOnly(options) };
    for (const [name, value] of Object.entries(merged)) {
      if (!Number.isFinite(value) || value <= 0) {
        throw new RangeError(`transport option ${name} must be a positive number, got ${String(value)}`);
      }
    }
    this.options = merged;
  }

  async get(url: string, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<TransportResponse> {
    if (this.closed) throw new TransportFailure('network', 'transport is closed');
    const target = parseHttpUrl(url);
    if (signal.aborted) throw new TransportFailure('aborted', 'request aborted before it was sent');

    let response: Dispatcher.ResponseData | undefined;
    try {
      response = await this.pool(target.origin).request({
        method: 'GET',
        path: `${target.pathname}${target.search}`,
        headers: { accept: 'application/json, text/plain;q=0.9', ...headers },
        signal,
      });
      const status = response.statusCode;
      const cap = this.options.maxResponseBytes;
      const declared = Number(headerValue(response.headers['content-length']));
      if (Number.isFinite(declared) && declared > cap) {
        discard(response.body);
        throw new TransportFailure('too_large', `response declares ${declared} bytes, over the cap of ${cap} bytes`, status);
      }
      const chunks: Buffer[] = [];
      let received = 0;
      for await (const chunk of response.body) {
        const buffer = chunk as Buffer;
        received += buffer.length;
        if (received > cap) {
          discard(response.body);
          throw new TransportFailure('too_large', `response body exceeds the cap of ${cap} bytes`, status);
        }
        chunks.push(buffer);
      }
      return { status, headers: flattenHeaders(response.headers), body: Buffer.concat(chunks, received) };
    } catch (error) {
      if (response && !response.body.destroyed) discard(response.body);
      throw toTransportFailure(error, signal);
    }
  }

  /** Closes every pool, letting in-flight requests finish. */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  private pool(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: this.options.connectionsPerOrigin,
        connectTimeout: this.options.connectTimeoutMs,
        headersTimeout: this.options.headersTimeoutMs,
        bodyTimeout: this.options.bodyTimeoutMs,
        keepAliveTimeout: this.options.keepAliveTimeoutMs,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }
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
