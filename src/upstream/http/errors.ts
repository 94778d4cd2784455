import type { FieldReport } from '../fields/resolve.js';
import type { DroppedItem } from '../tolerant/values.js';

/**
 * Every outcome of an upstream request that is not a decoded success. The budget decides
 * what to do from the class alone (pause the key, retry, give up), and the exporter turns
 * the class into the reason of `monapi_up_reason` and `monapi_source_up_reason`. Messages
 * never contain API keys.
 */

export type UpstreamApi = 'monitoring' | 'releases';

export interface RequestContext {
  readonly api: UpstreamApi;
  /** Route template such as `/hosts/{uuid}/metrics/series`, never a concrete URL with ids. */
  readonly endpoint: string;
}

export abstract class UpstreamError extends Error {
  abstract readonly kind: UpstreamErrorKind;
  /** Whether repeating the same request soon can succeed. */
  abstract readonly retryable: boolean;
  readonly context: RequestContext;
  readonly status: number | undefined;

  constructor(context: RequestContext, message: string, status?: number, options?: { cause?: unknown }) {
    super(`${context.api} ${context.endpoint}: ${message}`, options);
    this.context = context;
    this.status = status;
    this.name = new.target.name;
  }
}

export type UpstreamErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'plan_required'
  | 'not_found'
  | 'rate_limited'
  | 'server_error'
  | 'timeout'
  | 'network'
  | 'invalid_response';

export class BadRequestError extends UpstreamError {
  readonly kind = 'bad_request';
  readonly retryable = false;
}

export class UnauthorizedError extends UpstreamError {
  readonly kind = 'unauthorized';
  readonly retryable = false;
}

export class PlanRequiredError extends UpstreamError {
  readonly kind = 'plan_required';
  readonly retryable = false;
  readonly upgradeUrl: string | undefined;
  constructor(context: RequestContext, message: string, upgradeUrl: string | undefined) {
    super(context, message, 403);
    this.upgradeUrl = upgradeUrl;
  }
}

export class NotFoundError extends UpstreamError {
  readonly kind = 'not_found';
  readonly retryable = false;
}

export class RateLimitedError extends UpstreamError {
  readonly kind = 'rate_limited';
  readonly retryable = true;
  /** Raw `Retry-After` header value, if any; the budget parses and caps it. */
  readonly retryAfter: string | undefined;
  constructor(context: RequestContext, message: string, retryAfter: string | undefined) {
    super(context, message, 429);
    this.retryAfter = retryAfter;
  }
}

export class ServerError extends UpstreamError {
  readonly kind = 'server_error';
  readonly retryable = true;
}

export class TimeoutError extends UpstreamError {
  readonly kind = 'timeout';
  readonly retryable = true;
}

export class NetworkError extends UpstreamError {
  readonly kind = 'network';
  readonly retryable = true;
}

export class InvalidResponseError extends UpstreamError {
  readonly kind = 'invalid_response';
  readonly retryable = false;
  /** What failed validation, e.g. `hosts[3].uuid: expected string`. */
  readonly issues: readonly string[];
  /** Items read and refused before the whole response was: counted like any dropped item. */
  readonly dropped: readonly DroppedItem[];
  constructor(context: RequestContext, message: string, issues: readonly string[], status?: number, dropped: readonly DroppedItem[] = []) {
    super(context, message, status);
    this.issues = issues;
    this.dropped = dropped;
  }
}

/**
 * A response came and parsed, but the fields the source cannot do without are in none of
 * its items: polled and useless, which must never look like up (the source's reason is
 * `shape`). The report says what was found, what is missing and which paths were there.
 */
export class FieldsMissingError extends InvalidResponseError {
  readonly report: FieldReport;
  constructor(context: RequestContext, what: string, report: FieldReport) {
    const there = report.paths.length === 0 ? 'no fields' : `fields ${report.paths.slice(0, 12).join(', ')}${report.paths.length > 12 ? ', ...' : ''}`;
    super(context, `${what}: no item carries ${report.essentialMissing.length > 1 ? 'any of ' : ''}${report.essentialMissing.join(', ')} (the body has ${there}); set fields: in the configuration to name where it is`, report.essentialMissing.map((f) => `${f}: missing`));
    this.report = report;
  }
}
