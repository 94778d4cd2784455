import { EnvHttpProxyAgent, type Dispatcher } from 'undici';
import { parseRetryAfter } from '../budget/retry-after.js';
import { processRedactor } from '../lib/redact.js';
import { EXPORTER_VERSION } from '../version.js';
import { REMOTE_WRITE_HEADERS } from './protocol.js';

/**
 * One POST of a write request and what became of it. The receiver's answer decides:
 * 2xx taken; 5xx, 429 and no answer at all (refused, reset, timed out) may be sent again;
 * any other status is a refusal of this request's data (a malformed or out-of-bounds
 * sample), which sending it again would not change.
 */
export type SendOutcome =
  | { readonly kind: 'ok'; readonly status: number }
  | { readonly kind: 'retry'; readonly status: number | undefined; readonly retryAfterMs: number | undefined; readonly reason: string }
  | { readonly kind: 'rejected'; readonly status: number; readonly reason: string };

export interface WriteSender {
  send(body: Uint8Array, signal: AbortSignal): Promise<SendOutcome>;
  close(): Promise<void>;
}

export interface RemoteWriteTls {
  /** PEM of the CA certificates to trust instead of the system's. */
  readonly ca?: string | undefined;
  /** PEM client certificate and key, for receivers that want mutual TLS. */
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
  /** Name the certificate must carry, when it differs from the URL's host. */
  readonly serverName?: string | undefined;
  readonly insecureSkipVerify?: boolean | undefined;
}

export interface RemoteWriteEndpoint {
  readonly url: string;
  /** The whole request, headers and body. */
  readonly timeoutMs: number;
  /** Extra headers such as Mimir's `X-Scope-OrgID`; never credentials (those go in `authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The Authorization header's value, built when a request is sent: basic or bearer. */
  readonly authorization?: (() => string) | undefined;
  readonly tls?: RemoteWriteTls;
  /** HTTP(S)_PROXY and NO_PROXY as the rest of the exporter reads them. */
  readonly proxy?: { readonly httpProxy?: string | undefined; readonly httpsProxy?: string | undefined; readonly noProxy?: string | undefined };
}

const RETRY_AFTER_CAP_MS = 5 * 60_000;
/** Enough of a refusal's body to say why; receivers put the reason in the first line. */
const REASON_CHARS = 512;
/**
 * How much of the body is read before the first line is taken and scrubbed: the cut to
 * `REASON_CHARS` comes after scrubbing, so a key the receiver echoes across the cut is scrubbed
 * whole (cut first, 14 of a bearer token's 20 characters were left in the log).
 */
const READ_BYTES = 64 * 1024;

export class HttpWriteSender implements WriteSender {
  private readonly dispatcher: Dispatcher;
  private readonly target: URL;

  constructor(private readonly endpoint: RemoteWriteEndpoint) {
    this.target = new URL(endpoint.url);
    const tls = endpoint.tls ?? {};
    const connect = {
      timeout: Math.min(10_000, endpoint.timeoutMs),
      ...(tls.ca !== undefined && { ca: tls.ca }),
      ...(tls.cert !== undefined && { cert: tls.cert }),
      ...(tls.key !== undefined && { key: tls.key }),
      ...(tls.serverName !== undefined && { servername: tls.serverName }),
      ...(tls.insecureSkipVerify === true && { rejectUnauthorized: false }),
    };
    this.dispatcher = new EnvHttpProxyAgent({
      connections: 4,
      headersTimeout: endpoint.timeoutMs,
      bodyTimeout: endpoint.timeoutMs,
      connect,
      requestTls: connect,
      httpProxy: endpoint.proxy?.httpProxy ?? '',
      httpsProxy: endpoint.proxy?.httpsProxy ?? '',
      noProxy: [endpoint.proxy?.noProxy, 'localhost', '127.0.0.1', '[::1]'].filter(Boolean).join(','),
    });
  }

  async send(body: Uint8Array, signal: AbortSignal): Promise<SendOutcome> {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.endpoint.timeoutMs)]);
    const headers: Record<string, string> = {
      ...this.endpoint.headers,
      ...REMOTE_WRITE_HEADERS,
      'user-agent': `monapi-exporter/${EXPORTER_VERSION}`,
    };
    const authorization = this.endpoint.authorization?.();
    if (authorization !== undefined) headers.authorization = authorization;
    let response: Dispatcher.ResponseData;
    try {
      response = await this.dispatcher.request({
        origin: this.target.origin,
        path: `${this.target.pathname}${this.target.search}`,
        method: 'POST',
        headers,
        body,
        signal: deadline,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      const reason = deadline.aborted ? `no answer within ${this.endpoint.timeoutMs / 1000} s` : describeNetworkError(error);
      return { kind: 'retry', status: undefined, retryAfterMs: undefined, reason };
    }
    const status = response.statusCode;
    const text = await readSome(response.body);
    if (status >= 200 && status < 300) return { kind: 'ok', status };
    const reason = `HTTP ${status}${text === '' ? '' : `: ${clip(processRedactor.scrub(text), REASON_CHARS)}`}`;
    if (status === 429 || status >= 500) {
      const retryAfter = response.headers['retry-after'];
      const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now(), RETRY_AFTER_CAP_MS);
      return { kind: 'retry', status, retryAfterMs, reason };
    }
    return { kind: 'rejected', status, reason };
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

/** The first line of a body (of its first `READ_BYTES`), not yet scrubbed nor cut; the rest is consumed so the connection can be reused. */
async function readSome(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      if (size < READ_BYTES) chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  } catch {
    // A body cut short still leaves its status to decide.
  }
  return Buffer.concat(chunks).subarray(0, READ_BYTES).toString('utf8').trim().split('\n')[0] ?? '';
}

/** `text` cut to `most` characters, marked; call it on scrubbed text only. */
function clip(text: string, most: number): string {
  return text.length > most ? `${text.slice(0, most)}…` : text;
}

function describeNetworkError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  const name = typeof cause === 'string' ? cause : typeof code === 'string' ? code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return processRedactor.scrub(name === undefined ? message : `${name}: ${message}`);
}
