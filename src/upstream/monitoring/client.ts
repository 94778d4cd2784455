import type { Priority, RequestGate } from '../http/gate.js';
import type { Clock } from '../../lib/clock.js';
import { decodeBody, parseJsonBody, type DecodeOptions, type Decoded, type JsonDecoder } from '../decode.js';
import { withoutSecrets, type UpstreamLogger } from '../http/exchange.js';
import { followPages } from '../lists/follow.js';
import type { PageView } from '../lists/pages.js';
import { NEXT_PAGE_KEY } from '../fields/resolve.js';
import { UpstreamCaller } from '../http/caller.js';
import { checkBaseUrl } from '../http/base-url.js';
import { FieldsMissingError, InvalidResponseError, UpstreamError, type RequestContext } from '../http/errors.js';
import type { FieldReport } from '../fields/resolve.js';
import type { Transport, TransportResponse } from '../http/transport.js';
import type { UpstreamMetrics } from '../metrics.js';

/**
 * Client of the Monitoring REST API. It knows how to reach the API (base URL, key, request
 * budget) and how to send one request to an endpoint; the endpoints themselves (path, query
 * rules, decoder) are declared by the sources that poll them (src/sources/<name>/). Every
 * request goes through the request gate, which decides when it starts and retries what may
 * be retried; the client itself never retries. `get` resolves with the decoded value and the
 * list items the decoder dropped, and rejects with an `UpstreamError`.
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
  /** The most pages of one list followed; a list with more is read that far and said to be incomplete. Default 50. */
  maxPagesPerList?: number;
}

export const DEFAULT_MAX_PAGES_PER_LIST = 50;

/** How a query parameter is checked and written. */
export type QueryRule =
  /** A relative window such as `15m`, `1h`, `7d` or `2w`. */
  | { readonly kind: 'window' }
  /** A whole number from 1, up to `max`. */
  | { readonly kind: 'count'; readonly max?: number }
  /** A list of names, comma-separated: none empty, none with a comma. */
  | { readonly kind: 'names' };

/** One endpoint of the API, as the source that polls it declares it. */
export interface Endpoint<T> {
  /** The route template, relative to the base URL; also the `endpoint` label of the self-metrics. */
  readonly path: string;
  readonly query: Readonly<Record<string, QueryRule>>;
  readonly decode: JsonDecoder<T>;
}

/** `endpoint('/websites/{id}/checks', decodeChecks, {since: {kind: 'window'}, limit: {kind: 'count', max: 500}})` */
export function endpoint<T>(path: string, decode: JsonDecoder<T>, query: Readonly<Record<string, QueryRule>> = {}): Endpoint<T> {
  return { path, decode, query };
}

export type PathParams = Readonly<Record<string, string | number>>;
export type QueryValues = Readonly<Record<string, string | number | readonly string[] | undefined>>;

/** What a source needs of the client: its base URL, and one request to an endpoint. */
export interface MonitoringApi {
  readonly url: string;
  get<T>(target: Endpoint<T>, params?: PathParams, query?: QueryValues, priority?: Priority, options?: DecodeOptions): Promise<Decoded<T>>;
}

/** The path of one request, its parameters filled in (`/websites/7`): one target's answers. */
export function requestPath(target: Endpoint<unknown>, params: PathParams = {}): string {
  const parts = routeParts(target.path);
  let path = parts[0] as string;
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i] as string;
    path += String(params[name] ?? `{${name}}`) + (parts[i + 1] as string);
  }
  return path;
}

const ROUTE_PARAMETER = /\{(\w+)\}/;
const routes = new Map<string, readonly string[]>();

/**
 * A route template split once, not per request: its text around the parameters, with each
 * parameter's name between (`/hosts/{uuid}/metrics` is `['/hosts/', 'uuid', '/metrics']`).
 */
function routeParts(template: string): readonly string[] {
  let parts = routes.get(template);
  if (parts === undefined) routes.set(template, (parts = template.split(ROUTE_PARAMETER)));
  return parts;
}

/**
 * The client as one source uses it: the field paths the operator named for the source go to
 * every decoder, and every answer's field report (a refused one's too) is handed to `record`.
 */
export function sourceApi(client: MonitoringApi, fieldPaths: Readonly<Record<string, string>>, record: (target: string, report: FieldReport) => void): MonitoringApi {
  return {
    url: client.url,
    async get(target, params = {}, query = {}, priority = 'normal', options) {
      try {
        const decoded = await client.get(target, params, query, priority, { fieldPaths, ...options });
        if (decoded.fields !== undefined) record(requestPath(target, params), decoded.fields);
        return decoded;
      } catch (error) {
        if (error instanceof FieldsMissingError) record(requestPath(target, params), error.report);
        throw error;
      }
    },
  };
}

export class MonitoringClient implements MonitoringApi {
  private readonly baseUrl: string;
  /** The base URL's origin, the only one next pages are followed on. */
  private readonly origin: string;
  private readonly caller: UpstreamCaller;
  private readonly maxPagesPerList: number;
  private readonly secrets: readonly string[];

  constructor(options: MonitoringClientOptions) {
    this.baseUrl = checkMonitoringBaseUrl(options.baseUrl);
    this.origin = new URL(this.baseUrl).origin;
    if (options.apiKey.trim() === '') throw new TypeError('monitoring apiKey must not be empty');
    if (/[\r\n]/.test(options.apiKey)) throw new TypeError('monitoring apiKey must not contain line breaks');
    const scheme = options.authScheme ?? 'bearer';
    if (scheme !== 'bearer' && scheme !== 'x-api-key') {
      throw new TypeError(`monitoring authScheme must be 'bearer' or 'x-api-key', got '${String(scheme)}'`);
    }
    this.secrets = [options.apiKey];
    this.maxPagesPerList = options.maxPagesPerList ?? DEFAULT_MAX_PAGES_PER_LIST;
    if (!Number.isSafeInteger(this.maxPagesPerList) || this.maxPagesPerList < 1) throw new RangeError(`maxPagesPerList must be a whole number from 1, got ${String(options.maxPagesPerList)}`);
    this.caller = new UpstreamCaller({
      api: 'monitoring',
      baseUrl: this.baseUrl,
      headers: scheme === 'bearer' ? { authorization: `Bearer ${options.apiKey}` } : { 'x-api-key': options.apiKey },
      secrets: this.secrets,
      transport: options.transport,
      gate: options.gate,
      metrics: options.metrics,
      logger: options.logger,
      account: options.account,
      clock: options.clock,
    });
  }

  /** The base URL, without a trailing slash. */
  get url(): string {
    return this.baseUrl;
  }

  /**
   * One request to an endpoint: path parameters filled in (`{uuid}` from `params.uuid`),
   * the query checked against the endpoint's rules, the body decoded by its decoder.
   * Bad arguments reject with a TypeError or RangeError naming them.
   */
  get<T>(target: Endpoint<T>, params: PathParams = {}, query: QueryValues = {}, priority: Priority = 'normal', options?: DecodeOptions): Promise<Decoded<T>> {
    return this.call(priority, target.path, () => pathOf(target, params) + queryOf(target, query), target.decode, options);
  }

  /**
   * One request: decoded inside the attempt, its dropped items counted and logged once. A
   * list is read to its last page first (upstream/lists/follow.ts), every page a request of
   * its own through the gate, and the pages' report rides on the decoded fields.
   */
  private async call<T>(
    priority: Priority,
    endpoint: string,
    /** Builds the path; a thunk so that bad arguments reject instead of throwing. */
    pathAndQuery: () => string,
    decoder: JsonDecoder<T>,
    options: DecodeOptions | undefined,
  ): Promise<Decoded<T>> {
    const path = pathAndQuery();
    const list = decoder.list;
    const decoded =
      list === undefined
        ? await this.caller.send(priority, endpoint, path, {}, (response, context) => decodeBody(decoder, response.body, context, response.headers['content-type'], options))
        : await this.readList(priority, endpoint, path, decoder, list.locate, options);
    return { value: decoded.value, dropped: this.caller.report(endpoint, decoded.dropped, decoded.notes), ...(decoded.fields && { fields: decoded.fields }) };
  }

  private async readList<T>(
    priority: Priority,
    endpoint: string,
    path: string,
    decoder: JsonDecoder<T>,
    locate: NonNullable<JsonDecoder<T>['list']>['locate'],
    options: DecodeOptions | undefined,
  ): Promise<Decoded<T>> {
    const page = (response: TransportResponse, context: RequestContext, url: string): PageView => ({
      body: decoder.fromBytes?.(response.body) ?? parseJsonBody(response.body, context, response.headers['content-type']),
      headers: response.headers,
      url,
    });
    const firstUrl = `${this.baseUrl}${path}`;
    const first = await this.caller.send(priority, endpoint, path, {}, (response, context) => page(response, context, firstUrl));
    const read = await followPages(first, {
      locate: (body) => locate(body, options),
      fetch: (url) => this.caller.sendUrl(priority, endpoint, url, {}, (response, context) => page(response, context, url)),
      origin: this.origin,
      maxPages: this.maxPagesPerList,
      placedNext: options?.fieldPaths?.[NEXT_PAGE_KEY],
      // A page the budget gave up on is a list read short; an abort (a stop, a reload) ends the request.
      failure: (error) => (error instanceof UpstreamError ? error.message : undefined),
    });
    const context: RequestContext = { api: 'monitoring', endpoint };
    const paging = {
      ...(read.pages > 1 && { pages: read.pages }),
      ...(read.via !== undefined && { via: read.via }),
      ...(read.announced !== undefined && { announced: read.announced }),
      ...(read.incomplete !== undefined && { incomplete: read.incomplete }),
    };
    const withPaging = (report: FieldReport): FieldReport => ({ ...report, list: { path: report.list?.path ?? (read.path === undefined || read.path === '' ? '(the body)' : read.path), length: read.items ?? report.list?.length ?? 0, ...report.list, ...paging } });
    try {
      const decoded = withoutSecrets(context, this.secrets, () => decoder(read.body, context, options));
      return { ...decoded, fields: withPaging(decoded.fields ?? { found: {}, missing: [], essentialMissing: [], items: read.items ?? 0, paths: [] }) };
    } catch (error) {
      // Items read before the whole list was refused still count as dropped, as in an attempt.
      if (error instanceof InvalidResponseError && error.dropped.length > 0) this.caller.report(endpoint, error.dropped);
      throw error;
    }
  }
}

function checkMonitoringBaseUrl(raw: string): string {
  const trimmed = checkBaseUrl(raw, 'monitoring baseUrl').text;
  if (!trimmed.endsWith('/api/v2')) {
    throw new TypeError(`monitoring baseUrl must end in /api/v2, got '${trimmed}'`);
  }
  return trimmed;
}

/** The path with its parameters filled in: a string must not be empty, a number must be an integer. */
function pathOf(target: Endpoint<unknown>, params: PathParams): string {
  const parts = routeParts(target.path);
  let path = parts[0] as string;
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i] as string;
    const value = params[name];
    if (value === undefined) throw new TypeError(`${target.path}: path parameter ${name} is missing`);
    let text: string;
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) throw new TypeError(`${name} must be an integer, got ${String(value)}`);
      text = String(value);
    } else {
      if (value === '') throw new TypeError(`${name} must not be empty`);
      text = encodeURIComponent(value);
    }
    path += text + (parts[i + 1] as string);
  }
  return path;
}

/** The query string, in the endpoint's order of parameters; undefined values are left out. */
function queryOf(target: Endpoint<unknown>, values: QueryValues): string {
  const parts: string[] = [];
  for (const name of Object.keys(values)) {
    if (!(name in target.query)) throw new TypeError(`${target.path} takes no query parameter ${name}`);
  }
  for (const [name, rule] of Object.entries(target.query)) {
    const value = values[name];
    if (value === undefined) continue;
    parts.push(`${name}=${queryValue(name, rule, value)}`);
  }
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

function queryValue(name: string, rule: QueryRule, value: string | number | readonly string[]): string {
  switch (rule.kind) {
    case 'window':
      return relativeWindow(name, String(value));
    case 'count':
      return positiveInteger(name, Number(value), rule.max);
    case 'names': {
      if (typeof value === 'object' && Object.isFrozen(value)) {
        // A frozen list (the series source's planned batches) is asked with again and again.
        let encoded = encodedNameLists.get(value);
        if (encoded === undefined) encodedNameLists.set(value, (encoded = encodeNames(value)));
        return encoded;
      }
      return encodeNames(typeof value === 'object' ? value : [String(value)]);
    }
  }
}

const encodedNameLists = new WeakMap<readonly string[], string>();

function encodeNames(names: readonly string[]): string {
  for (const item of names) {
    if (item === '' || item.includes(',')) throw new TypeError(`metric name ${JSON.stringify(item)} cannot be sent: names must be non-empty and contain no comma`);
  }
  return names.map(encodeURIComponent).join(',');
}

const RELATIVE_WINDOW = /^[1-9][0-9]*[mhdw]$/;

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
