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
  const router = express.Router({ caseSensitive: true, strict: true });

  // The seed's error table has no 405: a resource that does not exist for this method is not_found.
  router.use((req, res, next) => {
    if (req.method === 'GET') return next();
    res.setHeader('Allow', 'GET');
    sendError(res, 404, 'not_found', `No endpoint for ${req.method} ${API_PREFIX}${req.path}: this API is read-only and every endpoint uses GET`);
  });

  router.get('/openapi.json', (_req, res) => {
    res.json(buildMonitoringOpenApi({ rateLimitPerMinute: limiter.perMinute, burst: limiter.burst, shapes }));
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
    res.json(set === 'alt' ? altAccount(body) : set === 'nested' ? nestedAccount(body) : body);
  });

  router.get('/hosts', (_req, res) => {
    const { account, now } = localsOf(res);
    const hosts = account.hosts(now);
    res.json({ hosts, total: hosts.length } satisfies HostList);
  });

  router.get('/hosts/:uuid', (req, res) => {
    const { account, now } = localsOf(res);
    const host = account.host(param(req, 'uuid'), now);
    if (!host) return hostNotFound(res);
    res.json(host);
  });

  router.get('/hosts/:uuid/metrics', (req, res) => {
    const { account } = localsOf(res);
    const uuid = param(req, 'uuid');
    const metrics = account.metricCatalogue(uuid);
    if (!metrics) return hostNotFound(res);
    const set = shape('metrics');
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

    const series: Record<string, SeriesPoint[]> = {};
    for (const name of names.value) {
      series[name] = times.map((t) => ({
        timestamp: rfc3339Seconds(t),
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
    if (set === 'alt') return res.json(altComponents(account.componentRecords(uuid) ?? []));
    if (set === 'nested') return res.json(nestedComponents(uuid, components));
    res.json({ host_uuid: uuid, components } satisfies ComponentList);
  });

  router.get('/alerts', (_req, res) => {
    const { account } = localsOf(res);
    const rules = account.alertRules();
    const set = shape('alert-rules');
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

  router.get('/websites', (_req, res) => {
    const { account, now } = localsOf(res);
    const websites = account.websites(now);
    const set = shape('websites');
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
