import express from 'express';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import type { Clock } from '../../src/lib/clock.js';
import { buildMonitoringOpenApi } from '../openapi.js';
import {
  altAccount,
  altAlertRules,
  altCheck,
  altComponents,
  altLatest,
  altMetricCatalogue,
  altWebsites,
  altWebsiteSummary,
} from '../shapes/monitoring-alt.js';
import {
  nestedAccount,
  nestedAlertRules,
  nestedCheck,
  nestedComponents,
  nestedLatest,
  nestedMetricCatalogue,
  nestedWebsites,
  nestedWebsiteSummary,
} from '../shapes/monitoring-nested.js';
import { STANDARD_SHAPES, type ShapeEndpoint, type ShapeSet, type ShapeSource } from '../shapes/shapes.js';
import { envelopeList, envelopeObject, halList, halObject, JSONAPI_MEDIA_TYPE, jsonApiList, jsonApiObject, type ListAnswer } from '../layouts/bodies.js';
import { PLAIN_NEXT, type LayoutController, type LayoutSettings, type PagedList } from '../layouts/layout.js';
import { encodeCursor, pageOf, parsePageRequest, wholeList, type Page } from '../layouts/paging.js';
import {
  accountResource,
  alertRuleList,
  componentList,
  hostList,
  hostSingle,
  metricGroupList,
  websiteList,
  websiteResource,
  type ListResources,
  type SingleResource,
} from '../layouts/resources.js';
import type { TokenBucketLimiter } from '../rate-limit.js';
import { AGENT_METRICS } from './catalogue.js';
import { presentedKey } from './http/auth.js';
import {
  parseMetricNames,
  parsePositiveInteger,
  parseWebsiteId,
  parseWindow,
  rfc3339Seconds,
  seriesIntervalSeconds,
  singleValue,
  type Parsed,
} from './http/params.js';
import type {
  SimAccountBody as Account,
  SimAlertRuleList as AlertRuleList,
  SimComponentList as ComponentList,
  SimErrorBody as ErrorBody,
  SeedErrorCode as ErrorCode,
  SimHostList as HostList,
  SimLatestValue as LatestValue,
  SimMetricCatalogue as MetricCatalogue,
  SimRecentAlerts as RecentAlerts,
  SimSeriesPoint as SeriesPoint,
  SimSeriesResponse as SeriesResponse,
  SimWebsiteCheck as WebsiteCheck,
  SimWebsiteCheckList as WebsiteCheckList,
  SimWebsiteList as WebsiteList,
} from './schemas.js';
import type { MonitoringWorld, SimAccount } from './world-types.js';

export const API_PREFIX = '/api/v2';
export const DEFAULT_UPGRADE_URL = 'https://monitoring.example.com/account/upgrade';
export const SERIES_DEFAULT_WINDOW = '1h';
export const CHECKS_DEFAULT_COUNT = 100;
export const CHECKS_DEFAULT_LIMIT_WITH_SINCE = 500;
export const CHECKS_MAX_LIMIT = 500;
export const RECENT_ALERTS_DEFAULT_LIMIT = 50;
export const RECENT_ALERTS_MAX_LIMIT = 500;
const DAY_MS = 86_400_000;

export interface MonitoringApiOptions {
  world: MonitoringWorld;
  clock: Clock;
  /** Per-key limiter; its figures also go into the 429 message and `/account`. */
  limiter: TokenBucketLimiter;
  /** Send `Retry-After` (whole seconds until a token returns) on 429. Default true. */
  retryAfter?: boolean;
  upgradeUrl?: string;
  /** Which shape each "not shown" body takes; all standard when absent. */
  shapes?: ShapeSource;
  /** List layout and paging (and the page counts); off when absent. */
  layout?: LayoutController;
}

export interface MonitoringAppOptions extends MonitoringApiOptions {
  /** Mounted at `/_sim`, in front of everything else and outside stats and faults. */
  control?: Router;
  /** Run before the API on every other request (stats, faults), in order. */
  middleware?: RequestHandler[];
}

/** The monitoring listener: `/_sim` control, then the given middleware, then `/api/v2`. */
export function createMonitoringApp(options: MonitoringAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  if (options.control) app.use('/_sim', options.control);
  for (const handler of options.middleware ?? []) app.use(handler);
  app.use(API_PREFIX, createMonitoringApi(options));
  app.use((req, res) => sendError(res, 404, 'not_found', `No resource at ${req.path}: this API's paths start with ${API_PREFIX}`));
  return app;
}

interface Locals {
  account: SimAccount;
  now: number;
}

const localsOf = (res: Response): Locals => res.locals as Locals;

/**
 * The Monitoring REST API, to be mounted at `/api/v2`. Order of checks on every request:
 * method (404 for anything but GET), the public OpenAPI document, key (401), rate limit (429), plan (403),
 * then the route: unknown path or resource (404), parameters (400).
 */
export function createMonitoringApi(options: MonitoringApiOptions): Router {
  const { world, clock, limiter } = options;
  const retryAfter = options.retryAfter ?? true;
  const upgradeUrl = options.upgradeUrl ?? DEFAULT_UPGRADE_URL;
  const shapes = options.shapes ?? { of: () => STANDARD_SHAPES.default };
  const shape = (endpoint: ShapeEndpoint): ShapeSet => shapes.of(endpoint);
  const checkBody = (check: WebsiteCheck): unknown => {
    const set = shape('checks');
    return set === 'alt' ? altCheck(check) : set === 'nested' ? nestedCheck(check) : check;
  };
  const layout = options.layout;
  /** The layout when it changes anything; with none, every body is byte for byte what it was before layouts. */
  const layoutOn = (): LayoutSettings | undefined => {
    const settings = layout?.settings();
    return settings && (settings.envelope !== 'none' || settings.paged) ? settings : undefined;
  };
  /** Sends a single resource in the envelope layout; false when no envelope is selected. */
  const sentSingle = (res: Response, single: () => SingleResource): boolean => {
    const settings = layoutOn();
    if (!settings || settings.envelope === 'none') return false;
    sendSingle(res, settings, single());
    return true;
  };
  /** Sends a list in the layout; false when the layout is off (the answer then counts as page 1). */
  const sentList = (req: Request, res: Response, list: PagedList, build: () => ListResources): boolean => {
    const settings = layoutOn();
    if (!settings) {
      layout?.countPage(localsOf(res).account.plan, list, 1, 'served');
      return false;
    }
    sendList(req, res, settings, build());
    return true;
  };
  const router = express.Router({ caseSensitive: true, strict: true });

  // The seed's error table has no 405: a resource that does not exist for this method is not_found.
  router.use((req, res, next) => {
    if (req.method === 'GET') return next();
    res.setHeader('Allow', 'GET');
    sendError(res, 404, 'not_found', `No endpoint for ${req.method} ${API_PREFIX}${req.path}: this API is read-only and every endpoint uses GET`);
  });

  router.get('/openapi.json', (_req, res) => {
    res.json(buildMonitoringOpenApi({ rateLimitPerMinute: limiter.perMinute, burst: limiter.burst, shapes, ...(layout ? { layout } : {}) }));
  });

  router.use((req, res, next) => {
    const presented = presentedKey(req);
    if (!presented.ok) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="api"');
      return sendError(res, 401, 'unauthorized', presented.message);
    }
    const account = world.accountByKey(presented.key);
    if (!account) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="api", error="invalid_token"');
      return sendError(res, 401, 'unauthorized', 'Invalid API key');
    }
    const taken = limiter.take(account.key);
    if (!taken.allowed) {
      if (retryAfter) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(taken.retryAfterMs / 1000))));
      return sendError(res, 429, 'rate_limited', rateLimitMessage(limiter));
    }
    res.setHeader('X-RateLimit-Limit', String(limiter.perMinute));
    res.setHeader('X-RateLimit-Remaining', String(taken.remaining));
    if (account.plan === 'starter') {
      return sendError(res, 403, 'plan_required', 'API access requires the Pro plan or higher; this account is on Starter', { upgrade_url: upgradeUrl });
    }
    Object.assign(res.locals, { account, now: clock.now() } satisfies Locals);
    next();
  });

  router.get('/account', (_req, res) => {
    const { account, now } = localsOf(res);
    const body: Account = {
      ...account.account(now),
      rate_limit: { requests_per_minute: limiter.perMinute, burst: limiter.burst, remaining: limiter.remaining(account.key) },
    };
    const set = shape('account');
    if (sentSingle(res, () => accountResource(API_PREFIX, body, set))) return;
    res.json(set === 'alt' ? altAccount(body) : set === 'nested' ? nestedAccount(body) : body);
  });

  router.get('/hosts', (req, res) => {
    const { account, now } = localsOf(res);
    const hosts = account.hosts(now);
    if (sentList(req, res, 'hosts', () => hostList(API_PREFIX, hosts))) return;
    res.json({ hosts, total: hosts.length } satisfies HostList);
  });

  router.get('/hosts/:uuid', (req, res) => {
    const { account, now } = localsOf(res);
    const host = account.host(param(req, 'uuid'), now);
    if (!host) return hostNotFound(res);
    if (sentSingle(res, () => hostSingle(API_PREFIX, host))) return;
    res.json(host);
  });

  router.get('/hosts/:uuid/metrics', (req, res) => {
    const { account } = localsOf(res);
    const uuid = param(req, 'uuid');
    const metrics = account.metricCatalogue(uuid);
    if (!metrics) return hostNotFound(res);
    const set = shape('metrics');
    if (sentList(req, res, 'metrics', () => metricGroupList(API_PREFIX, uuid, metrics, set))) return;
    if (set === 'alt') return res.json(altMetricCatalogue(metrics));
    if (set === 'nested') return res.json(nestedMetricCatalogue(uuid, metrics));
    res.json({ host_uuid: uuid, metrics } satisfies MetricCatalogue);
  });

  router.get('/hosts/:uuid/metrics/series', (req, res) => {
    const { account, now } = localsOf(res);
    const uuid = param(req, 'uuid');
    const host = account.host(uuid, now);
    if (!host) return hostNotFound(res);
    const known = knownMetricNames(account, uuid, host.allowed);

    const namesValue = singleValue('names', req.query.names);
    if (!namesValue.ok) return badRequest(res, namesValue);
    const names = parseMetricNames(namesValue.value, known);
    if (!names.ok) return badRequest(res, names);
    const window = windowParam(req, 'since', account, SERIES_DEFAULT_WINDOW);
    if (!window.ok) return badRequest(res, window);

    const windowMs = window.value;
    const intervalS = seriesIntervalSeconds(windowMs);
    const intervalMs = intervalS * 1000;
    const sinceMs = now - windowMs;
    const times: number[] = [];
    for (let t = Math.ceil(sinceMs / intervalMs) * intervalMs; t <= now; t += intervalMs) times.push(t);

    // Every name has the same timestamps: formatted once a request, not once a name.
    const stamps = times.map(rfc3339Seconds);
    const series: Record<string, SeriesPoint[]> = {};
    for (const name of names.value) {
      series[name] = times.map((t, i) => ({
        timestamp: stamps[i]!,
        // A host beyond the plan's limit has no metrics collected: its points exist, all null.
        value: host.allowed ? account.pointValue(uuid, name, t, intervalS, now) : null,
      }));
    }
    res.json({ host_uuid: uuid, since: rfc3339Seconds(sinceMs), interval: intervalS, series } satisfies SeriesResponse);
  });

  router.get('/hosts/:uuid/metrics/:name/latest', (req, res) => {
    const { account, now } = localsOf(res);
    const uuid = param(req, 'uuid');
    const host = account.host(uuid, now);
    if (!host) return hostNotFound(res);
    const name = param(req, 'name');
    if (!knownMetricNames(account, uuid, host.allowed).has(name)) {
      return sendError(res, 404, 'not_found', 'No metric of that name on this host');
    }
    const latest = host.allowed ? account.latest(uuid, name, now) : { timestampMs: null, value: null };
    const body: LatestValue = {
      host_uuid: uuid,
      name,
      timestamp: latest.timestampMs === null ? null : rfc3339Seconds(latest.timestampMs),
      value: latest.value,
    };
    const set = shape('latest');
    res.json(set === 'alt' ? altLatest(body) : set === 'nested' ? nestedLatest(body) : body);
  });

  router.get('/hosts/:uuid/components', (req, res) => {
    const { account } = localsOf(res);
    const uuid = param(req, 'uuid');
    const components = account.components(uuid);
    if (!components) return hostNotFound(res);
    const set = shape('components');
    if (sentList(req, res, 'components', () => componentList(API_PREFIX, uuid, components, account.componentRecords(uuid) ?? [], set))) return;
    if (set === 'alt') return res.json(altComponents(account.componentRecords(uuid) ?? []));
    if (set === 'nested') return res.json(nestedComponents(uuid, components));
    res.json({ host_uuid: uuid, components } satisfies ComponentList);
  });

  router.get('/alerts', (req, res) => {
    const { account, now } = localsOf(res);
    const rules = account.alertRules();
    const set = shape('alert-rules');
    if (sentList(req, res, 'alert-rules', () => alertRuleList(API_PREFIX, rules, set, account.hosts(now)))) return;
    if (set === 'alt') return res.json(altAlertRules(rules));
    if (set === 'nested') return res.json(nestedAlertRules(rules));
    res.json({ rules } satisfies AlertRuleList);
  });

  router.get('/alerts/recent', (req, res) => {
    const { account, now } = localsOf(res);
    const raw = singleValue('limit', req.query.limit);
    if (!raw.ok) return badRequest(res, raw);
    let limit = RECENT_ALERTS_DEFAULT_LIMIT;
    if (raw.value !== undefined) {
      const parsed = parsePositiveInteger('limit', raw.value);
      if (!parsed.ok) return badRequest(res, parsed);
      limit = Math.min(parsed.value, RECENT_ALERTS_MAX_LIMIT);
    }
    res.json({ alerts: account.recentAlerts(now, limit) } satisfies RecentAlerts);
  });

  router.get('/websites', (req, res) => {
    const { account, now } = localsOf(res);
    const websites = account.websites(now);
    const set = shape('websites');
    if (sentList(req, res, 'websites', () => websiteList(API_PREFIX, websites, set))) return;
    if (set === 'alt') return res.json(altWebsites(websites));
    if (set === 'nested') return res.json(nestedWebsites(websites));
    res.json({ websites, total: websites.length } satisfies WebsiteList);
  });

  router.get('/websites/:id', (req, res) => {
    const { account, now } = localsOf(res);
    const id = parseWebsiteId(param(req, 'id'));
    if (!id.ok) return badRequest(res, id);
    const summary = account.websiteSummary(id.value, now);
    if (!summary) return websiteNotFound(res);
    const set = shape('website');
    if (sentSingle(res, () => websiteResource(API_PREFIX, summary, set, shape('checks'), checkBody))) return;
    if (set === 'alt') return res.json(altWebsiteSummary(summary, checkBody));
    if (set === 'nested') return res.json(nestedWebsiteSummary(summary, checkBody));
    res.json(shape('checks') !== 'standard' && summary.recent_checks ? { ...summary, recent_checks: summary.recent_checks.map(checkBody) } : summary);
  });

  router.get('/websites/:id/checks', (req, res) => {
    const { account, now } = localsOf(res);
    const id = parseWebsiteId(param(req, 'id'));
    if (!id.ok) return badRequest(res, id);
    if (!account.hasWebsite(id.value)) return websiteNotFound(res);

    const sinceRaw = singleValue('since', req.query.since);
    if (!sinceRaw.ok) return badRequest(res, sinceRaw);
    const limitRaw = singleValue('limit', req.query.limit);
    if (!limitRaw.ok) return badRequest(res, limitRaw);
    let limit: number | undefined;
    if (limitRaw.value !== undefined) {
      const parsed = parsePositiveInteger('limit', limitRaw.value, CHECKS_MAX_LIMIT);
      if (!parsed.ok) return badRequest(res, parsed);
      limit = parsed.value;
    }
    const earliest = now - account.retentionDays * DAY_MS;

    if (sinceRaw.value !== undefined) {
      const window = windowParam(req, 'since', account, SERIES_DEFAULT_WINDOW);
      if (!window.ok) return badRequest(res, window);
      const from = now - window.value;
      const checks = oldestChecks(account, id.value, from, now, limit ?? CHECKS_DEFAULT_LIMIT_WITH_SINCE);
      const total = account.checkCount(id.value, from, now);
      return res.json(checkList({ website_id: id.value, total, checks }));
    }
    const checks = newestChecks(account, id.value, earliest, now, limit ?? CHECKS_DEFAULT_COUNT);
    const total = account.checkCount(id.value, earliest, now);
    res.json(checkList({ website_id: id.value, total, checks }));
  });

  router.use((req, res) => sendError(res, 404, 'not_found', `No endpoint at ${API_PREFIX}${req.path}`));

  /**
   * A list in the layout: the page the request asks for (when paged), in the layout's
   * envelope, or in the shape set's own with the next page announced as this list does.
   */
  function sendList(req: Request, res: Response, settings: LayoutSettings, list: ListResources): void {
    const { account } = localsOf(res);
    const total = list.resources.length;
    let page: Page = wholeList(total);
    let perPage: number | undefined;
    if (settings.paged) {
      const request = parsePageRequest(list.list, req.query, settings.pageSize);
      if (!request.ok) return badRequest(res, request);
      const paged = pageOf(request.value, total);
      if (!paged.ok) return badRequest(res, paged);
      page = paged.value;
      perPage = request.value.perPage;
      if (settings.pageFailAfter !== null && page.number > settings.pageFailAfter) {
        layout?.countPage(account.plan, list.list, page.number, 'failed');
        res.status(503).json({
          error: 'service_unavailable',
          message: `The service is temporarily unavailable (simulated: pages after ${settings.pageFailAfter} fail, this is page ${page.number})`,
        });
        return;
      }
    }
    const items = list.resources.slice(page.offset, page.offset + page.size);
    const origin = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
    const link = (query: Record<string, string>, absolute: boolean): string =>
      `${absolute ? origin : ''}${API_PREFIX}${req.path}?${new URLSearchParams(query).toString()}`;
    const byCursor = (offset: number, absolute: boolean): string =>
      link({ cursor: encodeCursor(list.list, offset), ...(perPage === undefined ? {} : { per_page: String(perPage) }) }, absolute);
    const next = page.nextOffset;
    const answer = (nextLink: string | undefined): ListAnswer => ({
      kind: list.kind,
      items,
      page,
      self: { path: req.originalUrl, url: `${origin}${req.originalUrl}` },
      next: nextLink,
      ...(list.related ? { related: list.related } : {}),
    });

    layout?.countPage(account.plan, list.list, page.number, 'served');
    switch (settings.envelope) {
      case 'hal': {
        // Page numbers where they reach the next item exactly; a cursor after a change of per_page.
        const nextLink = next === null ? undefined : next % page.size === 0 ? link({ page: String(next / page.size + 1), per_page: String(page.size) }, false) : byCursor(next, false);
        res.json(halList(answer(nextLink)));
        return;
      }
      case 'jsonapi':
        res.type(JSONAPI_MEDIA_TYPE).json(jsonApiList(answer(next === null ? undefined : byCursor(next, true))));
        return;
      case 'envelope':
        res.json(envelopeList(answer(undefined)));
        return;
      case 'none': {
        const inBody = PLAIN_NEXT[list.list] === 'next-cursor';
        // The metrics list gives a relative reference, which RFC 8288 allows; the others an absolute URL.
        if (!inBody && next !== null) res.setHeader('Link', `<${byCursor(next, list.list !== 'metrics')}>; rel="next"`);
        res.json(
          list.plain(page.offset, page.offset + items.length, {
            inBody,
            nextCursor: next === null ? null : encodeCursor(list.list, next),
            nextUrl: next === null ? null : byCursor(next, true),
            prevUrl: page.prevOffset === null ? null : byCursor(page.prevOffset, true),
          }),
        );
        return;
      }
    }
  }

  /** The seed shows this envelope, so only the check items vary. */
  function checkList(body: WebsiteCheckList): unknown {
    return shape('checks') === 'standard' ? body : { ...body, checks: body.checks.map(checkBody) };
  }

  // Express calls a four-argument handler for errors thrown by routes.
  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    const message = error instanceof Error ? error.message : String(error);
    res.status(500).json({ error: 'internal_error', message: `Simulator error: ${message}` });
  });

  return router;
}

export function rateLimitMessage(limiter: Pick<TokenBucketLimiter, 'perMinute' | 'burst'>): string {
  return `Rate limit exceeded: ${limiter.perMinute} requests per minute per API key (burst ${limiter.burst}). Back off and retry.`;
}

export function sendError(res: Response, status: number, error: ErrorCode, message: string, extra?: { upgrade_url: string }): void {
  const body: ErrorBody = { error, message, ...extra };
  res.status(status).json(body);
}

/** One resource in an envelope layout (HAL, JSON:API or the result wrapper). */
function sendSingle(res: Response, settings: LayoutSettings, single: SingleResource): void {
  if (settings.envelope === 'hal') res.json(halObject(single.resource));
  else if (settings.envelope === 'jsonapi') res.type(JSONAPI_MEDIA_TYPE).json(jsonApiObject(single.kind, single.resource, single.related));
  else res.json(envelopeObject(single.envelopeValue));
}

function badRequest(res: Response, parsed: Extract<Parsed<unknown>, { ok: false }>): void {
  sendError(res, 400, 'bad_request', parsed.message);
}

function hostNotFound(res: Response): void {
  sendError(res, 404, 'not_found', 'No host with that uuid in this account');
}

function websiteNotFound(res: Response): void {
  sendError(res, 404, 'not_found', 'No website with that id in this account');
}

function param(req: Request, name: string): string {
  const value: unknown = req.params[name];
  return typeof value === 'string' ? value : '';
}

/** A relative window parameter, clamped to the account's retention. */
function windowParam(req: Request, name: string, account: SimAccount, fallback: string): Parsed<number> {
  const raw = singleValue(name, req.query[name]);
  if (!raw.ok) return raw;
  const window = parseWindow(name, raw.value ?? fallback);
  if (!window.ok) return window;
  return { ok: true, value: Math.min(window.value, account.retentionDays * DAY_MS) };
}

const ALL_METRIC_NAMES: ReadonlySet<string> = new Set(AGENT_METRICS.map((entry) => entry.name));

/**
 * Names a host answers for. A host beyond the plan's limit lists none, but a series or
 * latest request for an agent metric still answers (with nulls) rather than 400/404.
 */
function knownMetricNames(account: SimAccount, uuid: string, allowed: boolean): ReadonlySet<string> {
  if (!allowed) return ALL_METRIC_NAMES;
  return new Set(Object.values(account.metricCatalogue(uuid) ?? {}).flat());
}

/** The newest `limit` checks within [earliest, now], newest first, widening the search window as needed. */
function newestChecks(account: SimAccount, id: number, earliest: number, now: number, limit: number): WebsiteCheck[] {
  let span = (limit + 1) * Math.max(1000, account.checkIntervalMs(id));
  let from = Math.max(earliest, now - span);
  while (from > earliest && account.checkCount(id, from, now) < limit) {
    span *= 2;
    from = Math.max(earliest, now - span);
  }
  return account.checks(id, from, now).slice(-limit).reverse();
}

/** The oldest `limit` checks within [from, now], oldest first, so a client can page forward. */
function oldestChecks(account: SimAccount, id: number, from: number, now: number, limit: number): WebsiteCheck[] {
  let span = (limit + 1) * Math.max(1000, account.checkIntervalMs(id));
  let to = Math.min(now, from + span);
  while (to < now && account.checkCount(id, from, to) < limit) {
    span *= 2;
    to = Math.min(now, from + span);
  }
  return account.checks(id, from, to).slice(0, limit);
}
