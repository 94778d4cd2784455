import type { Clock } from '../../lib/clock.js';
import { Redactor } from '../../lib/redact.js';
import type { CutOffReason, UpstreamMetrics, RequestObservation } from '../metrics.js';
import {
  BadRequestError,
  InvalidResponseError,
  NetworkError,
  NotFoundError,
  PlanRequiredError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
  type RequestContext,
  type UpstreamError,
} from './errors.js';
import { TransportFailure, type Transport, type TransportResponse } from './transport.js';

/**
 * One attempt of one upstream request: send it, measure it, count it, and turn every
 * outcome other than a 2xx into the typed error the budget and the exporter act on.
 */

/** The subset of a pino logger the clients use, so tests can capture lines. */
export interface UpstreamLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface ExchangeDeps {
  readonly transport: Transport;
  readonly clock: Clock;
  readonly metrics?: UpstreamMetrics | undefined;
  readonly logger?: UpstreamLogger | undefined;
  /** Account name for the self-metrics' `account` label. */
  readonly account?: string | undefined;
}

export interface ExchangeRequest {
  readonly context: RequestContext;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  /** Values that must never reach an error message or a log line: the API keys. */
  readonly secrets: readonly string[];
}

/** Longest upstream-provided text copied into an error message. */
const MAX_UPSTREAM_TEXT = 300;

/** Sends the request; resolves with a 2xx response, throws an `UpstreamError` otherwise. */
export async function exchange(deps: ExchangeDeps, request: ExchangeRequest): Promise<TransportResponse> {
  const { context, secrets } = request;
  const started = deps.clock.now();
  const observe = (code: RequestObservation['code'], bytes: number): void => {
    const durationSeconds = Math.max(0, deps.clock.now() - started) / 1000;
    deps.metrics?.observeRequest({ ...context, account: deps.account, code, durationSeconds, bytes });
    deps.logger?.debug(
      { account: deps.account, api: context.api, endpoint: context.endpoint, code, durationMs: Math.round(durationSeconds * 1000), bytes },
      'upstream request',
    );
  };

  let response: TransportResponse;
  try {
    response = await deps.transport.get(request.url, request.headers, request.signal);
  } catch (error) {
    const mapped = errorForFailure(context, error, request.signal, secrets);
    observe(codeForFailure(error, request.signal), 0);
    const cutOff = cutOffReason(error);
    if (cutOff !== undefined) deps.metrics?.countCutOff?.({ ...context, account: deps.account }, cutOff);
    throw mapped;
  }
  observe(response.status, response.body.length);
  if (response.status >= 200 && response.status < 300) return response;
  const error = errorForStatus(context, response, secrets);
  response.release?.();
  throw error;
}

/** Maps a non-2xx response to its typed error, using the `{error, message}` body when present. */
export function errorForStatus(
  context: RequestContext,
  response: TransportResponse,
  secrets: readonly string[],
): UpstreamError {
  const { status } = response;
  const body = readErrorBody(response.body);
  const said = body ? `: ${clip(redact(body.message ?? body.error ?? '', secrets))}` : '';
  const describe = (what: string): string => `${what} (HTTP ${status})${said}`;

  if (status === 400) return new BadRequestError(context, describe('bad request'), status);
  if (status === 401) return new UnauthorizedError(context, describe('unauthorized: the API key is missing or invalid'), status);
  if (status === 403 && body?.error === 'plan_required') {
    const upgradeUrl = body.upgradeUrl === undefined ? undefined : clip(redact(body.upgradeUrl, secrets));
    return new PlanRequiredError(context, describe('plan required: the account plan does not include API access'), upgradeUrl);
  }
  // A 403 that is not plan_required (for example a marketplace key without a subscription)
  // is the same for the exporter as a key that does not work.
  if (status === 403) return new UnauthorizedError(context, describe('forbidden: the key is not allowed this request'), status);
  if (status === 404) return new NotFoundError(context, describe('not found'), status);
  if (status === 429) {
    const retryAfter = response.headers['retry-after'];
    return new RateLimitedError(context, describe('rate limited'), retryAfter === undefined ? undefined : clip(redact(retryAfter, secrets)));
  }
  if (status === 408) return new TimeoutError(context, describe('the server timed out waiting for the request'), status);
  if (status >= 500 && status <= 599) return new ServerError(context, describe('server error'), status);
  if (status >= 400 && status <= 499) return new BadRequestError(context, describe('request rejected'), status);
  return new InvalidResponseError(context, `unexpected HTTP status ${status}`, [`status: ${status}`], status);
}

function errorForFailure(
  context: RequestContext,
  error: unknown,
  signal: AbortSignal,
  secrets: readonly string[],
): Error {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    // The budget aborts with a reason of its own; hand it back so it recognises it.
    if (reason instanceof Error && reason.name === 'TimeoutError') {
      return new TimeoutError(context, 'request aborted: the caller’s deadline passed');
    }
    if (reason instanceof Error) return reason;
    return new NetworkError(context, 'request aborted by the caller');
  }
  if (error instanceof TransportFailure) {
    const message = redact(error.message, secrets);
    switch (error.kind) {
      case 'timeout':
        return new TimeoutError(context, message);
      case 'too_large':
        return new InvalidResponseError(context, message, ['body: too large'], error.status);
      case 'redirect':
        return new InvalidResponseError(context, message, [`status: ${error.status ?? 'redirect'}`], error.status);
      case 'aborted':
      case 'network':
        return new NetworkError(context, message);
    }
  }
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new NetworkError(context, `request failed: ${clip(redact(detail, secrets))}`);
}

/** Responses the transport cut off on purpose, for `monapi_upstream_responses_cut_off_total`. */
function cutOffReason(error: unknown): CutOffReason | undefined {
  if (!(error instanceof TransportFailure)) return undefined;
  if (error.kind === 'too_large') return 'too_large';
  if (error.kind === 'redirect') return 'redirect';
  if (error.kind === 'timeout' && error.deadline) return 'deadline';
  return undefined;
}

function codeForFailure(error: unknown, signal: AbortSignal): RequestObservation['code'] {
  if (error instanceof TransportFailure) {
    if (error.kind === 'too_large' || error.kind === 'redirect') return error.status ?? 'network';
    if (error.kind === 'timeout') return 'timeout';
    if (error.kind === 'aborted') return 'aborted';
    return 'network';
  }
  return signal.aborted ? 'aborted' : 'network';
}

interface ErrorBodyFields {
  error: string | undefined;
  message: string | undefined;
  upgradeUrl: string | undefined;
}

function readErrorBody(body: Buffer): ErrorBodyFields | undefined {
  if (body.length === 0 || body.length > 64 * 1024) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const fields = { error: text(record.error), message: text(record.message), upgradeUrl: text(record.upgrade_url) };
  return fields.error === undefined && fields.message === undefined ? undefined : fields;
}

/**
 * Runs a decode step and makes sure no secret leaves it: upstream text (an odd map key, a
 * body that echoes the request) can end up in an InvalidResponseError's message or issues.
 */
export function withoutSecrets<T>(context: RequestContext, secrets: readonly string[], decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof InvalidResponseError) {
      const leaks = (text: string): boolean => redactorOf(secrets).finds(text);
      if (leaks(error.message) || error.issues.some(leaks)) {
        const prefix = `${context.api} ${context.endpoint}: `;
        const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
        throw new InvalidResponseError(
          context,
          redact(message, secrets),
          error.issues.map((issue) => redact(issue, secrets)),
          error.status,
          redactDropped(error.dropped, secrets),
        );
      }
    }
    throw error;
  }
}

/** The dropped-item report with every secret replaced. */
export function redactDropped<T extends { path: string; issue: string }>(dropped: readonly T[], secrets: readonly string[]): T[] {
  return dropped.map((item) => ({ ...item, path: redact(item.path, secrets), issue: redact(item.issue, secrets) }));
}

const redactors = new WeakMap<readonly string[], Redactor>();

function redactorOf(secrets: readonly string[]): Redactor {
  let redactor = redactors.get(secrets);
  if (!redactor) {
    redactor = new Redactor({ replacement: '[redacted]', minLength: 1 });
    redactor.add(...secrets);
    redactors.set(secrets, redactor);
  }
  return redactor;
}

/**
 * Replaces every occurrence of a secret with `[redacted]`: as written in any case,
 * URL-encoded, or base64 (an upstream may echo the key in any of these; see src/lib/redact.ts).
 */
export function redact(text: string, secrets: readonly string[]): string {
  return redactorOf(secrets).scrub(text);
}

function clip(text: string): string {
  return text.length > MAX_UPSTREAM_TEXT ? `${text.slice(0, MAX_UPSTREAM_TEXT)}…` : text;
}
