import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../../src/lib/clock.js';

/**
 * When the exporter first and last asked the simulator for each thing, in constant memory:
 * the same arrival times test/support/upstream-log.ts records, but only the first and the
 * last per resource, so a run of a simulated day can keep them without its memory growing
 * hour by hour (the soak measures that memory). Like the upstream log it listens on Node's
 * `http.server.request.start` channel, sees the Monitoring API from the upstream side of the
 * wire, and counts a request when it arrives, whatever its answer: record from before the
 * exporter starts, run one simulator at a time, and compare at a moment when the last
 * requests were answered (no fault switched on).
 */
export interface ReadSpan {
  readonly firstMs: number;
  readonly lastMs: number;
}

export interface ReadSpans {
  /** Reads of one delta metric of one host (`/hosts/{uuid}/metrics/series` naming it). */
  series(key: string, hostUuid: string, metric: string): ReadSpan | undefined;
  /** Reads of `/websites/{id}/checks`. */
  checks(key: string, websiteId: number): ReadSpan | undefined;
  /** Reads of `/alerts/recent`. */
  alerts(key: string): ReadSpan | undefined;
  stop(): void;
}

const CHANNEL = 'http.server.request.start';
const SERIES = /^\/api\/v2\/hosts\/([^/]+)\/metrics\/series$/;
const CHECKS = /^\/api\/v2\/websites\/(-?\d+)\/checks$/;

export function recordReadSpans(clock: Clock): ReadSpans {
  const spans = new Map<string, { firstMs: number; lastMs: number }>();
  const touch = (id: string, atMs: number) => {
    const span = spans.get(id);
    if (span) span.lastMs = atMs;
    else spans.set(id, { firstMs: atMs, lastMs: atMs });
  };
  const onMessage = (message: unknown): void => {
    const { request } = message as { readonly request: IncomingMessage };
    const url = new URL(request.url ?? '/', 'http://upstream');
    if (!url.pathname.startsWith('/api/v2/')) return;
    const header = request.headers['x-api-key'];
    const key = typeof header === 'string' ? header : /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (key === undefined) return;
    const atMs = clock.now();
    const path = decodeURIComponent(url.pathname);
    const series = SERIES.exec(path);
    if (series) {
      for (const name of (url.searchParams.get('names') ?? '').split(',')) if (name !== '') touch(`s\u0000${key}\u0000${series[1]}\u0000${name}`, atMs);
      return;
    }
    const checks = CHECKS.exec(path);
    if (checks) touch(`c\u0000${key}\u0000${Number(checks[1])}`, atMs);
    else if (path === '/api/v2/alerts/recent') touch(`a\u0000${key}`, atMs);
  };
  subscribe(CHANNEL, onMessage);
  return {
    series: (key, hostUuid, metric) => spans.get(`s\u0000${key}\u0000${hostUuid}\u0000${metric}`),
    checks: (key, websiteId) => spans.get(`c\u0000${key}\u0000${websiteId}`),
    alerts: (key) => spans.get(`a\u0000${key}`),
    stop: () => void unsubscribe(CHANNEL, onMessage),
  };
}
