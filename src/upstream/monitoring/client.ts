import type { Priority, RequestGate } from '../../budget/types.js';
import type { Clock } from '../../lib/clock.js';
import { decodeBody, monitoringDecoders, type Decoded, type DroppedItem, type JsonDecoder } from '../decode.js';
import type { UpstreamLogger } from '../http/exchange.js';
import { UpstreamCaller } from '../http/caller.js';
import { checkBaseUrl } from '../http/base-url.js';
import type { Transport } from '../http/transport.js';
import type { UpstreamMetrics } from '../metrics.js';
import type { Account } from './resources/account.js';
import type { AlertEvent } from './resources/alert-events.js';
import type { AlertRule } from './resources/alert-rules.js';
import type { WebsiteCheckList } from './resources/checks.js';
import type { ComponentList } from './resources/components.js';
import type { Host, HostList } from './resources/hosts.js';
import type { LatestValue } from './resources/latest.js';
import type { MetricNames } from './resources/metric-names.js';
import type { SeriesPoint } from './resources/series.js';
import type { WebsiteList, WebsiteSummary } from './resources/websites.js';

/**
 * Typed client of the Monitoring REST API. Every request goes through the request gate,
 * which decides when it starts and retries what may be retried; the client itself never
 * retries. Every method resolves with the decoded value and the list items the decoder
 * dropped, and rejects with an `UpstreamError`.
 */

export type AuthScheme = 'bearer' | 'x-api-key';

export interface MonitoringClientOptions {
  /** Base address ending in `/api/v2`, e.g. `https://monitoring.example.com/api/v2`. */
  baseUrl: string;
  apiKey: string;
  /** How the key is sent; both are equivalent upstream. Default `bearer`. */
  authScheme?: AuthScheme;
  transport: Transport;
  gate: RequestGate;
  metrics?: UpstreamMetrics;
  logger?: UpstreamLogger;
  /** Account name for self-metrics and logs when the exporter polls several accounts. */
  account?: string;
  clock?: Clock;
  /** Longest series URL the client builds; names are split into batches below it. */
  maxUrlLength?: number;
}

/**
 * 2000 bytes: the longest URL that every HTTP component on the way is known to accept
 * (browsers historically stopped at 2083, and some proxies and WAFs reject or truncate
 * longer request lines), while RFC 9110 only recommends supporting 8000. The real
 * service's limit is not documented, so the client stays far below any plausible one; an
 * operator who knows better raises it to spend fewer requests per series cycle.
 */
export const DEFAULT_MAX_URL_LENGTH = 2000;

/** Upper bound of `limit` on `/websites/{id}/checks`. */
export const MAX_CHECKS_LIMIT = 500;

const RELATIVE_WINDOW = /^[1-9][0-9]*[mhdw]$/;

/** One metric's points with the window and interval of the batch that carried them. */
export interface MetricSeries {
  readonly since: string;
  readonly intervalSeconds: number;
  readonly points: readonly SeriesPoint[];
}

/**
 * The merged answer of one or more series batches. Each metric keeps the `since` and
 * interval its own batch reported: batches answered a second apart report a `since` a
 * second apart, and in principle the interval can differ too.
 */
export interface SeriesResult {
  readonly hostUuid: string;
  readonly series: Readonly<Record<string, MetricSeries>>;
  /**
   * Set when every batch reported the same interval; `since` is then the earliest `since`
   * of the batches. Undefined when the intervals differ: use each metric's own.
   */
  readonly window: { readonly since: string; readonly intervalSeconds: number } | undefined;
  /** Requests spent. */
  readonly batches: number;
}

export interface ChecksQuery {
  /** Relative window such as `15m` or `1d`: checks inside it, oldest first. */
  since?: string;
  /** At most 500. */
  limit?: number;
}

export class MonitoringClient {
  private readonly baseUrl: string;
  private readonly caller: UpstreamCaller;
  private readonly maxUrlLength: number;

  constructor(options: MonitoringClientOptions) {
    this.baseUrl = checkMonitoringBaseUrl(options.baseUrl);
    if (options.apiKey.trim() === '') throw new TypeError('monitoring apiKey must not be empty');
    if (/[\r\n]/.test(options.apiKey)) throw new TypeError('monitoring apiKey must not contain line breaks');
    const scheme = options.authScheme ?? 'bearer';
    if (scheme !== 'bearer' && scheme !== 'x-api-key') {
      throw new TypeError(`monitoring authScheme must be 'bearer' or 'x-api-key', got '${String(scheme)}'`);
    }
    this.caller = new UpstreamCaller({
      api: 'monitoring',
      baseUrl: this.baseUrl,
      headers: scheme === 'bearer' ? { authorization: `Bearer ${options.apiKey}` } : { 'x-api-key': options.apiKey },
      secrets: [options.apiKey],
      transport: options.transport,
      gate: options.gate,
      metrics: options.metrics,
      logger: options.logger,
      account: options.account,
      clock: options.clock,
    });
    this.maxUrlLength = options.maxUrlLength ?? DEFAULT_MAX_URL_LENGTH;
    if (!Number.isSafeInteger(this.maxUrlLength) || this.maxUrlLength < 100) {
      throw new RangeError(`maxUrlLength must be an integer of at least 100, got ${String(options.maxUrlLength)}`);
    }
  }

  /** `/account`: plan, limits, usage and rate limit. */
  account(priority: Priority = 'high'): Promise<Decoded<Account>> {
    return this.call(priority, '/account', () => '/account', monitoringDecoders.account);
  }

  /** `/hosts`, `allowed: false` hosts included. */
  hosts(priority: Priority = 'high'): Promise<Decoded<HostList>> {
    return this.call(priority, '/hosts', () => '/hosts', monitoringDecoders.hosts);
  }

  /** `/hosts/{uuid}` */
  host(uuid: string, priority: Priority = 'normal'): Promise<Decoded<Host>> {
    return this.call(priority, '/hosts/{uuid}', () => `/hosts/${segment('uuid', uuid)}`, monitoringDecoders.host);
  }

  /** `/hosts/{uuid}/metrics`: metric names grouped by component. */
  metricCatalogue(uuid: string, priority: Priority = 'normal'): Promise<Decoded<MetricNames>> {
    return this.call(
      priority,
      '/hosts/{uuid}/metrics',
      () => `/hosts/${segment('uuid', uuid)}/metrics`,
      monitoringDecoders.metricCatalogue,
    );
  }

  /** `/hosts/{uuid}/metrics/{name}/latest` */
  async latest(uuid: string, name: string, priority: Priority = 'normal'): Promise<Decoded<LatestValue>> {
    const decoded = await this.call(
      priority,
      '/hosts/{uuid}/metrics/{name}/latest',
      () => `/hosts/${segment('uuid', uuid)}/metrics/${segment('name', name)}/latest`,
      monitoringDecoders.latest,
    );
    return { ...decoded, value: { host_uuid: uuid, name, ...decoded.value } };
  }

  /** `/hosts/{uuid}/components`: detected servers on the host. */
  components(uuid: string, priority: Priority = 'normal'): Promise<Decoded<ComponentList>> {
    return this.call(
      priority,
      '/hosts/{uuid}/components',
      () => `/hosts/${segment('uuid', uuid)}/components`,
      monitoringDecoders.components,
    );
  }

  /** `/alerts`: alert rules. */
  alertRules(priority: Priority = 'high'): Promise<Decoded<readonly AlertRule[]>> {
    return this.call(priority, '/alerts', () => '/alerts', monitoringDecoders.alertRules);
  }

  /** `/alerts/recent`, optionally capped at `limit` events. */
  recentAlerts(limit?: number, priority: Priority = 'high'): Promise<Decoded<readonly AlertEvent[]>> {
    return this.call(
      priority,
      '/alerts/recent',
      () => (limit === undefined ? '/alerts/recent' : `/alerts/recent?limit=${positiveInteger('limit', limit)}`), monitoringDecoders.recentAlerts);
  }

  /** `/websites` with their 24-hour aggregates. */
  websites(priority: Priority = 'high'): Promise<Decoded<WebsiteList>> {
    return this.call(priority, '/websites', () => '/websites', monitoringDecoders.websites);
  }

  /** `/websites/{id}`: uptime, time to first byte, TLS, recent checks. */
  websiteSummary(id: number, priority: Priority = 'normal'): Promise<Decoded<WebsiteSummary>> {
    return this.call(priority, '/websites/{id}', () => `/websites/${websiteId(id)}`, monitoringDecoders.websiteSummary);
  }

  /**
   * `/websites/{id}/checks`. Without a query: the newest 100, newest first. With `since`:
   * the checks inside the window, oldest first.
   */
  checks(id: number, query: ChecksQuery = {}, priority: Priority = 'bulk'): Promise<Decoded<WebsiteCheckList>> {
    return this.call(
      priority,
      '/websites/{id}/checks',
      () => {
        const params: string[] = [];
        if (query.since !== undefined) params.push(`since=${relativeWindow('since', query.since)}`);
        if (query.limit !== undefined) params.push(`limit=${positiveInteger('limit', query.limit, MAX_CHECKS_LIMIT)}`);
        return `/websites/${websiteId(id)}/checks${params.length > 0 ? `?${params.join('&')}` : ''}`;
      },
      monitoringDecoders.checks,
    );
  }

  /**
   * `/hosts/{uuid}/metrics/series` for any number of names: as many requests as it takes
   * to keep each URL under `maxUrlLength`, merged into one result. Repeated names are
   * asked once. No names, no request.
   */
  async series(uuid: string, names: readonly string[], since = '1h', priority: Priority = 'bulk'): Promise<Decoded<SeriesResult>> {
    const window = relativeWindow('since', since);
    const unique = [...new Set(names)];
    for (const name of unique) {
      if (name === '' || name.includes(',')) {
        throw new TypeError(`metric name ${JSON.stringify(name)} cannot be sent: names must be non-empty and contain no comma`);
      }
    }
    if (unique.length === 0) {
      return { value: { hostUuid: uuid, series: {}, window: undefined, batches: 0 }, dropped: [] };
    }
    const prefix = `${this.baseUrl}/hosts/${segment('uuid', uuid)}/metrics/series?since=${window}&names=`;
    const batches = planSeriesBatches(prefix.length, unique, this.maxUrlLength);
    const answers = await Promise.all(
      batches.map((batch) =>
        this.call(
          priority,
          '/hosts/{uuid}/metrics/series',
          () => prefix.slice(this.baseUrl.length) + batch.map(encodeURIComponent).join(','),
          monitoringDecoders.series,
        ),
      ),
    );

    const series: Record<string, MetricSeries> = {};
    const dropped: DroppedItem[] = [];
    const intervals = new Set<number>();
    let earliest: string | undefined;
    let hostUuid = uuid;
    for (const answer of answers) {
      const { value } = answer;
      hostUuid = value.host_uuid ?? hostUuid;
      intervals.add(value.interval);
      const since = value.since ?? firstPointTime(value.series);
      if (since !== undefined && (earliest === undefined || Date.parse(since) < Date.parse(earliest))) earliest = since;
      for (const [name, points] of Object.entries(value.series)) {
        series[name] = { since: since ?? points[0]?.timestamp ?? '', intervalSeconds: value.interval, points };
      }
      dropped.push(...answer.dropped);
    }
    const [interval] = intervals;
    const uniform = intervals.size === 1 && interval !== undefined && earliest !== undefined ? { since: earliest, intervalSeconds: interval } : undefined;
    return { value: { hostUuid, series, window: uniform, batches: batches.length }, dropped };
  }

  /** One request: decoded inside the attempt, its dropped items counted and logged once. */
  private async call<T>(
    priority: Priority,
    endpoint: string,
    /** Builds the path; a thunk so that bad arguments reject instead of throwing. */
    pathAndQuery: () => string,
    decoder: JsonDecoder<T>,
  ): Promise<Decoded<T>> {
    const decoded = await this.caller.send(priority, endpoint, pathAndQuery(), {}, (response, context) =>
      decodeBody(decoder, response.body, context, response.headers['content-type']),
    );
    return { value: decoded.value, dropped: this.caller.report(endpoint, decoded.dropped, decoded.notes) };
  }
}

function firstPointTime(series: Readonly<Record<string, readonly SeriesPoint[]>>): string | undefined {
  let first: string | undefined;
  for (const points of Object.values(series)) {
    const t = points[0]?.timestamp;
    if (t !== undefined && (first === undefined || Date.parse(t) < Date.parse(first))) first = t;
  }
  return first;
}

/**
 * Splits metric names into batches so that `baseUrlLength` plus each batch's encoded,
 * comma-joined names stays within `maxUrlLength`. Order is kept; batches are filled
 * greedily, which is optimal for items that must stay in order.
 * @throws RangeError naming the metric when one name alone would exceed the limit
 * @example planSeriesBatches(60, ['a.b', 'c.d'], 64) // [['a.b'], ['c.d']]
 */
export function planSeriesBatches(baseUrlLength: number, names: readonly string[], maxUrlLength: number): string[][] {
  const room = maxUrlLength - baseUrlLength;
  const batches: string[][] = [];
  let current: string[] = [];
  let used = 0;
  for (const name of names) {
    const size = encodeURIComponent(name).length;
    if (size > room) {
      const shown = name.length > 60 ? `${name.slice(0, 60)}…` : name;
      throw new RangeError(
        `metric name '${shown}' is too long to request: with it the series URL would be ${baseUrlLength + size} bytes, over maxUrlLength ${maxUrlLength}`,
      );
    }
    const extra = current.length === 0 ? size : size + 1;
    if (used + extra > room) {
      batches.push(current);
      current = [name];
      used = size;
    } else {
      current.push(name);
      used += extra;
    }
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

function checkMonitoringBaseUrl(raw: string): string {
  const trimmed = checkBaseUrl(raw, 'monitoring baseUrl').text;
  if (!trimmed.endsWith('/api/v2')) {
    throw new TypeError(`monitoring baseUrl must end in /api/v2, got '${trimmed}'`);
  }
  return trimmed;
}

function segment(what: string, value: string): string {
  if (value === '') throw new TypeError(`${what} must not be empty`);
  return encodeURIComponent(value);
}

function websiteId(id: number): string {
  if (!Number.isSafeInteger(id)) throw new TypeError(`website id must be an integer, got ${String(id)}`);
  return String(id);
}

function positiveInteger(what: string, value: number, max?: number): string {
  if (!Number.isSafeInteger(value) || value < 1 || (max !== undefined && value > max)) {
    const range = max === undefined ? 'a positive integer' : `an integer from 1 to ${max}`;
    throw new RangeError(`${what} must be ${range}, got ${String(value)}`);
  }
  return String(value);
}

function relativeWindow(what: string, value: string): string {
  if (!RELATIVE_WINDOW.test(value)) {
    throw new RangeError(`${what} must be a relative window such as 15m, 1h, 7d or 2w, got '${value}'`);
  }
  return value;
}
