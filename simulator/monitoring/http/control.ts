import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { z } from 'zod';
import type { Clock } from '../../../src/lib/clock.js';
import { describeIssues, FAULT_TARGETS, parseFaultUpdate, type FaultController } from '../../faults.js';
import type { TokenBucketLimiter } from '../../rate-limit.js';
import { parseShapeOverrides, parseShapeSet, ShapeUpdate, type Parsed, type ShapeController } from '../../shapes/shapes.js';
import { parseLayoutRequest, type LayoutController } from '../../layouts/layout.js';
import { listTotals } from '../../layouts/totals.js';
import type { DeltaTruth, LateDataSettings } from '../late-data.js';
import type { MonitoringWorld, SimAccount } from '../world-types.js';
import type { StatsRecorder } from './stats.js';

export interface ControlOptions {
  world: MonitoringWorld;
  clock: Clock;
  faults: FaultController;
  stats: StatsRecorder;
  limiter: TokenBucketLimiter;
  shapes: ShapeController;
  layout: LayoutController;
  lateData?: LateDataSettings | undefined;
}

const HostChange = z.strictObject({
  account: z.string().min(1),
  add: z.number().int().min(0).max(1000).optional(),
  remove: z.number().int().min(0).max(1000).optional(),
});

const ClearTarget = z.enum([...FAULT_TARGETS, 'all']);

/**
 * The `/_sim` control surface (no auth): request counts, fault switches, and hosts that
 * appear or disappear. Mounted on the monitoring listener only; it controls all three.
 */
export function createControlRouter(options: ControlOptions): Router {
  const { world, clock, faults, stats, limiter, shapes, layout, lateData } = options;
  const router = express.Router();
  router.use(express.json({ limit: '64kb' }));

  router.get('/', (_req, res) => {
    res.json({
      endpoints: [
        'GET /_sim/stats',
        'POST /_sim/stats/reset',
        'GET /_sim/faults',
        'POST /_sim/faults',
        'DELETE /_sim/faults[?target=monitoring|releases|marketplace|all]',
        'POST /_sim/hosts {account, add?, remove?}',
        'POST /_sim/rate-limit/reset',
        'GET /_sim/shapes',
        'POST /_sim/shapes {default?, endpoints?: {<endpoint>: standard|alt|nested}} or ?default=nested&websites=standard',
        'DELETE /_sim/shapes',
        'GET /_sim/layout',
        'POST /_sim/layout {envelope?: none|hal|jsonapi|envelope, paged?, pageSize?, pageFailAfter?: N|null} or ?envelope=hal&paged=true',
        'DELETE /_sim/layout',
        'GET /_sim/list-totals?account=pro (or key=<API key>)',
        'GET /_sim/late-data',
        'GET /_sim/truth?account=pro&host=<uuid>&metric=<delta metric>&from=<ISO 8601 or ms>&to=<ISO 8601 or ms>[&as_of=<instant>][&detail=minutes]',
      ],
    });
  });

  router.get('/stats', (_req, res) => {
    const now = clock.now();
    res.json({ now_ms: now, now: new Date(now).toISOString(), ...stats.snapshot() });
  });

  router.post('/stats/reset', (_req, res) => {
    stats.reset();
    layout.resetPages();
    res.json({ reset: true });
  });

  router.post('/rate-limit/reset', (_req, res) => {
    limiter.reset();
    res.json({ reset: true });
  });

  router.get('/faults', (_req, res) => {
    res.json(faults.view());
  });

  router.post('/faults', (req, res) => {
    const parsed = parseFaultUpdate(req.query, req.body);
    if (!parsed.ok) return badRequest(res, parsed.message);
    try {
      faults.apply(parsed.update);
    } catch (error) {
      return badRequest(res, error instanceof Error ? error.message : String(error));
    }
    res.json(faults.view());
  });

  router.delete('/faults', (req, res) => {
    const raw: unknown = req.query.target ?? 'all';
    const target = ClearTarget.safeParse(raw);
    if (!target.success) {
      return badRequest(res, `'target' must be one of ${[...FAULT_TARGETS, 'all'].join(', ')}`);
    }
    faults.clear(target.data);
    res.json(faults.view());
  });

  router.get('/shapes', (_req, res) => {
    res.json(shapes.view());
  });

  router.post('/shapes', (req, res) => {
    const parsed = parseShapeRequest(req.query, req.body);
    if (!parsed.ok) return badRequest(res, parsed.message);
    shapes.set(parsed.value);
    res.json(shapes.view());
  });

  router.delete('/shapes', (_req, res) => {
    shapes.reset();
    res.json(shapes.view());
  });

  router.get('/layout', (_req, res) => {
    res.json(layout.view());
  });

  router.post('/layout', (req, res) => {
    const parsed = parseLayoutRequest(req.query, req.body);
    if (!parsed.ok) return badRequest(res, parsed.message);
    layout.set(parsed.value);
    res.json(layout.view());
  });

  router.delete('/layout', (_req, res) => {
    layout.reset();
    res.json(layout.view());
  });

  router.get('/list-totals', (req, res) => {
    const key = typeof req.query.key === 'string' ? req.query.key : undefined;
    const name = typeof req.query.account === 'string' ? req.query.account : undefined;
    const accounts = world.accounts();
    const account = key !== undefined ? world.accountByKey(key) : accounts.find((a) => a.plan === name);
    if (!account) return badRequest(res, `name the account: account=${accounts.map((a) => a.plan).join('|')}, or key=<API key>`);
    res.json({ account: account.plan, ...listTotals(account, clock.now()) });
  });

  router.get('/late-data', (_req, res) => {
    res.json(
      lateData
        ? { enabled: true, late_share: lateData.lateShare, max_lateness_minutes: lateData.maxLatenessMinutes, never_share: lateData.neverShare }
        : { enabled: false },
    );
  });

  router.get('/truth', (req, res) => {
    const query = parseTruthQuery(req.query, world);
    if (!query.ok) return badRequest(res, query.message);
    const { account, hostUuid, metric, fromMs, toMs, asOfMs, detail } = query.value;
    let truth: DeltaTruth;
    try {
      truth = account.deltaTruth({ hostUuid, metric, fromMs, toMs, detail, ...(asOfMs === undefined ? {} : { asOfMs }) });
    } catch (error) {
      return badRequest(res, error instanceof Error ? error.message : String(error));
    }
    const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
    res.json({
      account: account.plan,
      host_uuid: hostUuid,
      metric,
      from: iso(fromMs),
      to: iso(toMs),
      ...(asOfMs === undefined ? {} : { as_of: iso(asOfMs) }),
      sum: truth.sum,
      points: truth.points,
      missing: truth.missing,
      pending: truth.pending,
      complete_at: iso(truth.completeAtMs),
      complete_at_ms: truth.completeAtMs,
      ...(truth.minutes
        ? { minutes: truth.minutes.map((m) => ({ minute: iso(m.minuteMs), value: m.value, arrives_at: iso(m.arrivesAtMs) })) }
        : {}),
    });
  });

  router.post('/hosts', (req, res) => {
    const input: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(req.query)) {
      input[key] = key === 'account' || typeof value !== 'string' ? value : /^[0-9]+$/.test(value) ? Number(value) : value;
    }
    if (req.body && typeof req.body === 'object') Object.assign(input, req.body);
    const parsed = HostChange.safeParse(input);
    if (!parsed.success) return badRequest(res, `invalid host change: ${describeIssues(parsed.error)}`);
    const names = world.accounts().map((a) => a.plan);
    const account = world.accounts().find((a) => a.plan === parsed.data.account);
    if (!account) return badRequest(res, `'account' must be one of ${names.join(', ')}; got '${parsed.data.account.slice(0, 40)}'`);
    const now = clock.now();
    if (parsed.data.add) account.addHosts(parsed.data.add, now);
    if (parsed.data.remove) account.removeHosts(parsed.data.remove, now);
    res.json({ account: account.plan, hosts: account.hosts(now).length });
  });

  router.use((req, res) => {
    res.status(404).json({ error: 'not_found', message: `No control endpoint ${req.method} /_sim${req.path}` });
  });

  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: unknown }).status;
    if (status === 400 || (error as { type?: unknown }).type === 'entity.parse.failed') {
      return badRequest(res, 'request body is not valid JSON');
    }
    res.status(500).json({ error: 'internal_error', message: error instanceof Error ? error.message : String(error) });
  });

  return router;
}

/**
 * A shape change from a JSON body (`{default, endpoints}`) or a query string (`default=alt`,
 * `<endpoint>=<set>`); the body wins where both name something.
 */
function parseShapeRequest(query: Record<string, unknown>, body: unknown): Parsed<ShapeUpdate> {
  const update: { default?: ShapeUpdate['default']; endpoints: NonNullable<ShapeUpdate['endpoints']> } = { endpoints: {} };
  for (const [key, raw] of Object.entries(query)) {
    if (typeof raw !== 'string') return { ok: false, message: `shape field '${key}' must be given once` };
    if (key === 'default') {
      const set = parseShapeSet("'default'", raw);
      if (!set.ok) return set;
      update.default = set.value;
    } else {
      const override = parseShapeOverrides([`${key}=${raw}`]);
      if (!override.ok) return override;
      Object.assign(update.endpoints, override.value);
    }
  }
  if (body !== undefined && body !== null && !(typeof body === 'object' && Object.keys(body).length === 0)) {
    const parsed = ShapeUpdate.safeParse(body);
    if (!parsed.success) return { ok: false, message: `invalid shape settings: ${describeIssues(parsed.error)}` };
    if (parsed.data.default) update.default = parsed.data.default;
    Object.assign(update.endpoints, parsed.data.endpoints);
  }
  return { ok: true, value: update };
}

interface TruthParameters {
  account: SimAccount;
  hostUuid: string;
  metric: string;
  fromMs: number;
  toMs: number;
  asOfMs: number | undefined;
  detail: boolean;
}

/** The `/_sim/truth` query: the account by name (`account=pro`) or by key, host, metric, and an instant range. */
function parseTruthQuery(query: Record<string, unknown>, world: MonitoringWorld): Parsed<TruthParameters> {
  const text: Record<string, string> = {};
  for (const [key, raw] of Object.entries(query)) {
    if (typeof raw !== 'string') return { ok: false, message: `truth parameter '${key}' must be given once` };
    text[key] = raw;
  }
  const accounts = world.accounts();
  const account = text.key !== undefined ? world.accountByKey(text.key) : accounts.find((a) => a.plan === text.account);
  if (!account) return { ok: false, message: `name the account: account=${accounts.map((a) => a.plan).join('|')}, or key=<API key>` };
  for (const name of ['host', 'metric', 'from', 'to'] as const) {
    if (!text[name]) return { ok: false, message: `truth parameter '${name}' is required` };
  }
  const instant = (name: 'from' | 'to' | 'as_of'): number => {
    const raw = text[name] ?? '';
    return /^\d+$/.test(raw) ? Number(raw) : /^\d{4}-\d{2}-\d{2}T/.test(raw) ? Date.parse(raw) : NaN;
  };
  const fromMs = instant('from');
  const toMs = instant('to');
  const asOfMs = text.as_of === undefined ? undefined : instant('as_of');
  for (const [name, value] of [['from', fromMs], ['to', toMs], ['as_of', asOfMs ?? 0]] as const) {
    if (!Number.isFinite(value)) return { ok: false, message: `truth parameter '${name}' must be an ISO 8601 instant or epoch milliseconds; got '${(text[name] ?? '').slice(0, 40)}'` };
  }
  if (text.detail !== undefined && text.detail !== 'minutes') return { ok: false, message: "truth parameter 'detail' can only be 'minutes'" };
  return { ok: true, value: { account, hostUuid: text.host ?? '', metric: text.metric ?? '', fromMs, toMs, asOfMs, detail: text.detail === 'minutes' } };
}

function badRequest(res: Response, message: string): void {
  res.status(400).json({ error: 'bad_request', message });
}
