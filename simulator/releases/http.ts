import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { WindowRateLimiter } from './rate-limit.js';
import { majorProblem } from './version.js';

/** Error codes of both release offerings; the body is `{error, message}` (ReleaseErrorBody). */
export type ReleaseErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'not_subscribed'
  | 'not_found'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'payload_too_large'
  | 'internal';

const STATUS: Readonly<Record<ReleaseErrorCode, number>> = {
  bad_request: 400,
  unauthorized: 401,
  not_subscribed: 403,
  not_found: 404,
  method_not_allowed: 405,
  rate_limited: 429,
  payload_too_large: 413,
  internal: 500,
};

export function sendError(res: Response, code: ReleaseErrorCode, message: string): void {
  res.status(STATUS[code]).json({ error: code, message });
}

/** Calls `stats(label, status)` once when the response has been sent. */
export function countResponses(
  stats: ((label: string, status: number) => void) | undefined,
  label: (req: Request) => string,
): RequestHandler {
  return (req, res, next) => {
    if (stats) {
      const chosen = label(req);
      res.on('finish', () => stats(chosen, res.statusCode));
    }
    next();
  };
}

/**
 * Reads the optional `major` query parameter: undefined when absent, the version prefix
 * when legal (`4`, `0`, `1.26`: see version.ts), or an error message naming what is wrong.
 */
export function readMajor(req: Request): { major: string | undefined } | { error: string } {
  const raw: unknown = (req.query as Record<string, unknown>).major;
  if (raw === undefined) return { major: undefined };
  if (typeof raw !== 'string') return { error: 'major must be given at most once' };
  const problem = majorProblem(raw);
  if (problem !== undefined) return { error: `${problem}; got '${truncate(raw)}'` };
  return { major: raw };
}

/** A single string query parameter, or an error message. */
export function readSingle(req: Request, name: string): { value: string | undefined } | { error: string } {
  const raw: unknown = (req.query as Record<string, unknown>)[name];
  if (raw === undefined) return { value: undefined };
  if (typeof raw !== 'string') return { error: `${name} must be given at most once` };
  return { value: raw };
}

export function truncate(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

export const notFoundRoute: RequestHandler = (req, res) => {
  sendError(res, 'not_found', `no such endpoint: ${req.method} ${truncate(req.path)}`);
};

/** Turns body-parser and unexpected errors into JSON instead of express's HTML page. */
export const jsonErrors: ErrorRequestHandler = (err: unknown, _req, res, next) => {
  if (res.headersSent) {
    next(err);
    return;
  }
  const type = typeof err === 'object' && err !== null && 'type' in err ? String(err.type) : '';
  if (type === 'entity.parse.failed') sendError(res, 'bad_request', 'request body is not valid JSON');
  else if (type === 'entity.too.large') sendError(res, 'payload_too_large', 'request body is too large');
  else if (type.startsWith('entity.') || type.startsWith('charset.') || type.startsWith('encoding.'))
    sendError(res, 'bad_request', 'request body cannot be read');
  else sendError(res, 'internal', 'internal error');
};

/**
 * Limits requests per client (`keyOf`), sets the offering's rate-limit headers
 * (`X-RateLimit-` on the free endpoint, `X-RateLimit-Requests-` on the marketplace) and
 * answers 429 with Retry-After when the window is spent.
 */
export function rateLimit(limiter: WindowRateLimiter, keyOf: (req: Request) => string, headerPrefix: string): RequestHandler {
  return (req, res, next) => {
    const decision = limiter.take(keyOf(req));
    const resetSeconds = Math.ceil(decision.resetInMs / 1000);
    res.set({
      [`${headerPrefix}Limit`]: String(decision.limit),
      [`${headerPrefix}Remaining`]: String(decision.remaining),
      [`${headerPrefix}Reset`]: String(resetSeconds),
    });
    if (decision.allowed) {
      next();
      return;
    }
    res.set('Retry-After', String(resetSeconds));
    sendError(res, 'rate_limited', `rate limit of ${decision.limit} requests per minute exceeded; retry in ${resetSeconds} s`);
  };
}
