import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../../src/lib/clock.js';

/**
 * Every request that reaches the simulator's Monitoring API, with the simulated time it
 * arrived at: when the exporter polled what, seen from the upstream side of the wire (so
 * a test learns it without asking the exporter). Node publishes each request an HTTP server
 * receives on the `http.server.request.start` diagnostics channel; those under `/api/v2/`
 * are kept, so record before the exporter starts and run one simulator at a time.
 */
export interface UpstreamRequest {
  readonly atMs: number;
  /** The API key the request presented (X-Api-Key or a Bearer token), if any. */
  readonly key: string | undefined;
  /** Path below `/api/v2`, decoded, e.g. `/hosts/<uuid>/metrics/series`. */
  readonly path: string;
  readonly query: URLSearchParams;
}

export interface UpstreamLog {
  readonly requests: readonly UpstreamRequest[];
  /** Arrival times of the requests that match, oldest first. */
  times(match: (request: UpstreamRequest) => boolean): number[];
  stop(): void;
}

const CHANNEL = 'http.server.request.start';

export function recordUpstreamRequests(clock: Clock): UpstreamLog {
  const requests: UpstreamRequest[] = [];
  const onMessage = (message: unknown): void => {
    const { request } = message as { readonly request: IncomingMessage };
    const url = new URL(request.url ?? '/', 'http://upstream');
    if (!url.pathname.startsWith('/api/v2/')) return;
    const header = request.headers['x-api-key'];
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    requests.push({
      atMs: clock.now(),
      key: typeof header === 'string' ? header : bearer,
      path: decodeURIComponent(url.pathname.slice('/api/v2'.length)),
      query: url.searchParams,
    });
  };
  subscribe(CHANNEL, onMessage);
  return {
    requests,
    times: (match) => requests.filter(match).map((r) => r.atMs),
    stop: () => void unsubscribe(CHANNEL, onMessage),
  };
}
