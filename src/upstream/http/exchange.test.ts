import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../lib/clock.js';
import { createUpstreamMetrics } from '../metrics.js';
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
} from './errors.js';
import { errorForStatus, exchange, redact, type ExchangeDeps } from './exchange.js';
import { TransportFailure, type Transport, type TransportResponse } from './transport.js';

const context: RequestContext = { api: 'monitoring', endpoint: '/hosts/{uuid}' };

function response(status: number, body: unknown, headers: Record<string, string> = {}): TransportResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return { status, headers, body: Buffer.from(text) };
}

describe('errorForStatus', () => {
  it.each([
    [400, { error: 'bad_request', message: "query parameter 'limit' must be a positive integer" }, BadRequestError, 'bad_request', "'limit' must be"],
    [401, { error: 'unauthorized', message: 'invalid API key' }, UnauthorizedError, 'unauthorized', 'invalid API key'],
    [403, { error: 'forbidden', message: 'not subscribed' }, UnauthorizedError, 'unauthorized', 'not subscribed'],
    [404, { error: 'not_found', message: 'host not found' }, NotFoundError, 'not_found', 'host not found'],
    [408, '', TimeoutError, 'timeout', 'HTTP 408'],
    [414, '<html>too long</html>', BadRequestError, 'bad_request', 'HTTP 414'],
    [500, '<html>oops</html>', ServerError, 'server_error', 'HTTP 500'],
    [503, { error: 'unavailable', message: 'maintenance' }, ServerError, 'server_error', 'maintenance'],
    [302, '', InvalidResponseError, 'invalid_response', 'unexpected HTTP status 302'],
  ])('maps HTTP %i to the right error', (status, body, type, kind, text) => {
    const error = errorForStatus(context, response(status, body), []);
    expect(error).toBeInstanceOf(type);
    expect(error.kind).toBe(kind);
    expect(error.status).toBe(status);
    expect(error.message).toContain(text);
    expect(error.message.startsWith('monitoring /hosts/{uuid}: ')).toBe(true);
    expect(error.context).toEqual(context);
  });

  it('reads plan_required with its upgrade_url', () => {
    const error = errorForStatus(
      context,
      response(403, { error: 'plan_required', message: 'API access requires Pro', upgrade_url: 'https://x.example/upgrade' }),
      [],
    );
    expect(error).toBeInstanceOf(PlanRequiredError);
    expect((error as PlanRequiredError).upgradeUrl).toBe('https://x.example/upgrade');
    expect(error.message).toContain('API access requires Pro');
  });

  it('carries the raw Retry-After of a 429', () => {
    const error = errorForStatus(context, response(429, { error: 'rate_limited', message: '120 per minute' }, { 'retry-after': '17' }), []);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfter).toBe('17');
    expect(error.retryable).toBe(true);
  });

  it('leaves retryAfter undefined when the header is absent', () => {
    const error = errorForStatus(context, response(429, ''), []) as RateLimitedError;
    expect(error.retryAfter).toBeUndefined();
  });

  it('clips a long upstream message and redacts secrets inside it', () => {
    const error = errorForStatus(context, response(401, { error: 'x', message: `bad key k3y ${'z'.repeat(1000)}` }), ['k3y']);
    expect(error.message).not.toContain('k3y');
    expect(error.message).toContain('[redacted]');
    expect(error.message.length).toBeLessThan(500);
  });
});

describe('redact', () => {
  it.each([
    ['key abc and abc', ['abc'], 'key [redacted] and [redacted]'],
    ['nothing here', ['abc'], 'nothing here'],
    ['empty secret is ignored', [''], 'empty secret is ignored'],
    ['upgrade?k=canary%2Dk3y%2D42 (URL-encoded)', ['canary-k3y-42'], 'upgrade?k=[redacted] (URL-encoded)'],
    ['CANARY-K3Y-42 (another case)', ['canary-k3y-42'], '[redacted] (another case)'],
    [`b64 ${Buffer.from('canary-k3y-42').toString('base64')}`, ['canary-k3y-42'], 'b64 [redacted]g=='],
  ])('%s', (text, secrets, expected) => {
    expect(redact(text, secrets)).toBe(expected);
  });
});

function fakeTransport(clock: FakeClock, outcome: TransportResponse | Error, tookMs = 250): Transport {
  return {
    get: () => {
      clock.advance(tookMs);
      return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
    },
  };
}

function setup(outcome: TransportResponse | Error, accountLabel = false) {
  const clock = new FakeClock();
  const registry = new Registry();
  const metrics = createUpstreamMetrics(registry, { accountLabel });
  const deps: ExchangeDeps = { transport: fakeTransport(clock, outcome), clock, metrics, account: 'acme' };
  return { deps, registry };
}

const request = (signal = new AbortController().signal) => ({
  context,
  url: 'http://x/api/v2/hosts/abc',
  headers: {},
  signal,
  secrets: ['s3cret'],
});

describe('exchange', () => {
  it('returns a 2xx and counts it by status, duration and bytes', async () => {
    const { deps, registry } = setup(response(200, { ok: true }));
    const result = await exchange(deps, request());
    expect(result.status).toBe(200);
    const text = await registry.metrics();
    expect(text).toContain('monapi_upstream_requests_total{api="monitoring",endpoint="/hosts/{uuid}",code="200"} 1');
    expect(text).toContain('monapi_upstream_request_duration_seconds_sum{api="monitoring",endpoint="/hosts/{uuid}"} 0.25');
    expect(text).toContain('monapi_upstream_response_bytes_total{api="monitoring",endpoint="/hosts/{uuid}"} 11');
  });

  it('labels the account when asked to', async () => {
    const { deps, registry } = setup(response(200, {}), true);
    await exchange(deps, request());
    expect(await registry.metrics()).toContain(
      'monapi_upstream_requests_total{api="monitoring",account="acme",endpoint="/hosts/{uuid}",code="200"} 1',
    );
  });

  it('names the account in its request log line', async () => {
    const { deps } = setup(response(200, {}));
    const lines: Record<string, unknown>[] = [];
    const logger = { debug: (fields: Record<string, unknown>) => lines.push(fields), warn: () => undefined };
    await exchange({ ...deps, logger }, request());
    expect(lines).toEqual([expect.objectContaining({ account: 'acme', endpoint: '/hosts/{uuid}', code: 200 })]);
  });

  it('throws the typed error of a non-2xx and still counts it', async () => {
    const { deps, registry } = setup(response(404, { error: 'not_found', message: 'no such host' }));
    await expect(exchange(deps, request())).rejects.toBeInstanceOf(NotFoundError);
    expect(await registry.metrics()).toContain('code="404"} 1');
  });

  it.each([
    [new TransportFailure('timeout', 'connect timeout'), TimeoutError, 'timeout'],
    [new TransportFailure('network', 'connection failed (ECONNREFUSED)'), NetworkError, 'network'],
    [new TransportFailure('too_large', 'response body exceeds the cap of 10 bytes', 200), InvalidResponseError, '200'],
    [new Error('something odd s3cret'), NetworkError, 'network'],
  ])('maps the transport failure %s', async (failure, type, code) => {
    const { deps, registry } = setup(failure);
    const error = await exchange(deps, request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect(String((error as Error).message)).not.toContain('s3cret');
    expect(await registry.metrics()).toContain(`code="${code}"} 1`);
  });

  it('hands the budget back its own abort reason', async () => {
    const controller = new AbortController();
    const reason = new Error('budget shutting down');
    controller.abort(reason);
    const { deps, registry } = setup(new TransportFailure('aborted', 'request aborted'));
    await expect(exchange(deps, request(controller.signal))).rejects.toBe(reason);
    expect(await registry.metrics()).toContain('code="aborted"} 1');
  });

  it('turns an abort by deadline (AbortSignal.timeout) into a TimeoutError', async () => {
    const controller = new AbortController();
    controller.abort(new DOMException('deadline', 'TimeoutError'));
    const { deps } = setup(new TransportFailure('aborted', 'request aborted'));
    await expect(exchange(deps, request(controller.signal))).rejects.toBeInstanceOf(TimeoutError);
  });
});
