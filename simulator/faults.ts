import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { Clock, TimerHandle } from '../src/lib/clock.js';
import * as monitoringSchemas from './monitoring/schemas.js';
import * as releaseSchemas from './releases/schemas.js';

/**
 * Run-time fault injection shared by the three simulator listeners. One controller holds
 * a fault set per target; each listener mounts `controller.middleware(target)` in front
 * of its routes. Every decision is drawn from the injected `random` at request arrival,
 * so a test that sets a share to 0 or 1 gets exactly that.
 */

export const FAULT_TARGETS = ['monitoring', 'releases', 'marketplace'] as const;
export type FaultTarget = (typeof FAULT_TARGETS)[number];

export interface FaultSet {
  latencyMs: number;
  jitterMs: number;
  error500: number;
  error502: number;
  error503: number;
  hang: number;
  malformedJson: number;
  truncatedJson: number;
  driftExtraFields: number;
  driftMissingOptional: number;
  driftWrongType: number;
  /** A 429 storm: every request answered 429 until `untilMs`. */
  storm: { untilMs: number; retryAfter: string | undefined } | undefined;
}

/** The wire form of a fault set, as `GET /_sim/faults` shows it and POST accepts it. */
export interface FaultSetView {
  latency_ms: number;
  jitter_ms: number;
  error_500: number;
  error_502: number;
  error_503: number;
  hang: number;
  malformed_json: number;
  truncated_json: number;
  drift_extra_fields: number;
  drift_missing_optional: number;
  drift_wrong_type: number;
  storm_remaining_ms: number;
  storm_retry_after: string | null;
}

const emptyFaultSet = (): FaultSet => ({
  latencyMs: 0,
  jitterMs: 0,
  error500: 0,
  error502: 0,
  error503: 0,
  hang: 0,
  malformedJson: 0,
  truncatedJson: 0,
  driftExtraFields: 0,
  driftMissingOptional: 0,
  driftWrongType: 0,
  storm: undefined,
});

const share = z.number().min(0, 'must be a share between 0 and 1').max(1, 'must be a share between 0 and 1');
const milliseconds = z.number().int('must be a whole number of milliseconds').min(0).max(600_000);

/** What `POST /_sim/faults` accepts, from a JSON body or the query string (same names). */
export const FaultUpdate = z.strictObject({
  target: z.enum([...FAULT_TARGETS, 'all']).optional(),
  latency_ms: milliseconds.optional(),
  jitter_ms: milliseconds.optional(),
  error_500: share.optional(),
  error_502: share.optional(),
  error_503: share.optional(),
  hang: share.optional(),
  malformed_json: share.optional(),
  truncated_json: share.optional(),
  drift_extra_fields: share.optional(),
  drift_missing_optional: share.optional(),
  drift_wrong_type: share.optional(),
  /** Seconds the storm lasts from now; 0 ends a storm. */
  storm_seconds: z.number().min(0).max(86_400).optional(),
  /** Retry-After sent during the storm, verbatim (may be huge or garbage on purpose); null for none. */
  storm_retry_after: z.union([z.string().max(200), z.number().int().min(0), z.null()]).optional(),
});
export type FaultUpdate = z.infer<typeof FaultUpdate>;

const NUMERIC_FIELDS = new Set(Object.keys(FaultUpdate.shape).filter((k) => k !== 'target' && k !== 'storm_retry_after'));

export type FaultParse = { ok: true; update: FaultUpdate } | { ok: false; message: string };

/**
 * Reads a fault update from a query string and a JSON body (the body wins where both name a
 * field). Query values are text, so numeric fields are converted from strict decimal text.
 */
export function parseFaultUpdate(query: Record<string, unknown>, body: unknown): FaultParse {
  const merged: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(query)) {
    if (Array.isArray(raw)) return { ok: false, message: `fault field '${key}' is given more than once` };
    if (typeof raw === 'string' && NUMERIC_FIELDS.has(key)) {
      if (!/^[0-9]+(\.[0-9]+)?$/.test(raw)) return { ok: false, message: `fault field '${key}' must be a number; got '${raw.slice(0, 40)}'` };
      merged[key] = Number(raw);
    } else {
      merged[key] = raw;
    }
  }
  if (body !== undefined && body !== null && !(typeof body === 'object' && Object.keys(body).length === 0)) {
    if (typeof body !== 'object' || Array.isArray(body)) return { ok: false, message: 'fault body must be a JSON object' };
    Object.assign(merged, body);
  }
  const parsed = FaultUpdate.safeParse(merged);
  if (!parsed.success) return { ok: false, message: `invalid fault settings: ${describeIssues(parsed.error)}` };
  if (parsed.data.storm_retry_after !== undefined && parsed.data.storm_seconds === undefined) {
    return { ok: false, message: "fault field 'storm_retry_after' needs 'storm_seconds' (how long the 429 storm lasts)" };
  }
  return { ok: true, update: parsed.data };
}

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      return path ? `'${path}' ${issue.message}` : issue.message;
    })
    .join('; ');
}

export interface FaultControllerOptions {
  clock: Clock;
  /** Uniform in [0, 1); tests pass a deterministic source. */
  random?: () => number;
}

export interface FaultMiddlewareOptions {
  /** Body of a storm 429; defaults to `{error: 'rate_limited', message}`. */
  stormBody?: () => unknown;
}

interface HungRequest {
  target: FaultTarget;
  release: () => void;
}

export class FaultController {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly sets = new Map<FaultTarget, FaultSet>(FAULT_TARGETS.map((t) => [t, emptyFaultSet()]));
  private readonly hung = new Set<HungRequest>();
  private readonly delays = new Set<TimerHandle>();

  constructor(options: FaultControllerOptions) {
    this.clock = options.clock;
    this.random = options.random ?? Math.random;
  }

  /** The current fault set of one target (a copy). */
  get(target: FaultTarget): FaultSet {
    const set = this.sets.get(target) ?? emptyFaultSet();
    return { ...set, storm: set.storm && { ...set.storm } };
  }

  /**
   * Applies a validated update to its target(s): named fields change, others stay. Throws
   * a RangeError when the result would have error shares adding up to more than 1.
   */
  apply(update: FaultUpdate): void {
    const targets = update.target === undefined || update.target === 'all' ? FAULT_TARGETS : [update.target];
    const next = targets.map((target) => [target, this.updated(this.get(target), update)] as const);
    for (const [target, set] of next) {
      const errorShare = set.error500 + set.error502 + set.error503;
      if (errorShare > 1 + 1e-9) {
        throw new RangeError(`error_500 + error_502 + error_503 for ${target} would be ${errorShare}; their sum must be at most 1`);
      }
    }
    for (const [target, set] of next) this.sets.set(target, set);
  }

  /** Clears every fault of the target(s) and lets hung requests of those targets proceed. */
  clear(target: FaultTarget | 'all' = 'all'): void {
    const targets = target === 'all' ? FAULT_TARGETS : [target];
    for (const t of targets) this.sets.set(t, emptyFaultSet());
    for (const request of [...this.hung]) {
      if (targets.includes(request.target)) {
        this.hung.delete(request);
        request.release();
      }
    }
  }

  /** Requests held by the hang fault right now. */
  hungCount(): number {
    return this.hung.size;
  }

  view(): Record<FaultTarget, FaultSetView> & { hung_requests: number } {
    const now = this.clock.now();
    const views = Object.fromEntries(FAULT_TARGETS.map((t) => [t, toView(this.get(t), now)])) as Record<FaultTarget, FaultSetView>;
    return { ...views, hung_requests: this.hung.size };
  }

  /** Drops hung requests and pending delays without answering them (the server is closing). */
  shutdown(): void {
    this.hung.clear();
    for (const handle of this.delays) this.clock.clearTimeout(handle);
    this.delays.clear();
  }

  middleware(target: FaultTarget, options: FaultMiddlewareOptions = {}): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      const set = this.sets.get(target) ?? emptyFaultSet();
      const now = this.clock.now();
      if (set.storm && now < set.storm.untilMs) {
        if (set.storm.retryAfter !== undefined) res.setHeader('Retry-After', set.storm.retryAfter);
        res.status(429).json(options.stormBody?.() ?? { error: 'rate_limited', message: 'Rate limit exceeded (simulated 429 storm)' });
        return;
      }
      // Every share is rolled now, in a fixed order, so the outcome depends only on the random source.
      const rolls = {
        hang: this.random() < set.hang,
        error: this.random(),
        malformed: this.random() < set.malformedJson,
        truncated: this.random() < set.truncatedJson,
        extra: this.random() < set.driftExtraFields,
        missing: this.random() < set.driftMissingOptional,
        wrongType: this.random() < set.driftWrongType,
        jitter: this.random(),
      };
      const proceed = (): void => {
        if (rolls.hang) {
          this.hold(target, res, next);
          return;
        }
        const errorStatus = pickErrorStatus(set, rolls.error);
        if (errorStatus !== undefined) {
          sendServerError(res, errorStatus);
          return;
        }
        if (rolls.malformed || rolls.truncated || rolls.extra || rolls.missing || rolls.wrongType) {
          corruptJsonBodies(res, { ...rolls });
        }
        next();
      };
      const delay = set.latencyMs + Math.floor(rolls.jitter * set.jitterMs);
      if (delay > 0) {
        const handle = this.clock.setTimeout(() => {
          this.delays.delete(handle);
          proceed();
        }, delay);
        this.delays.add(handle);
      } else {
        proceed();
      }
    };
  }

  private hold(target: FaultTarget, res: Response, next: NextFunction): void {
    const entry: HungRequest = { target, release: () => next() };
    this.hung.add(entry);
    // The client giving up ends the hang; nothing is ever written to that socket.
    res.on('close', () => this.hung.delete(entry));
  }

  private updated(current: FaultSet, u: FaultUpdate): FaultSet {
    const set = { ...current };
    if (u.latency_ms !== undefined) set.latencyMs = u.latency_ms;
    if (u.jitter_ms !== undefined) set.jitterMs = u.jitter_ms;
    if (u.error_500 !== undefined) set.error500 = u.error_500;
    if (u.error_502 !== undefined) set.error502 = u.error_502;
    if (u.error_503 !== undefined) set.error503 = u.error_503;
    if (u.hang !== undefined) set.hang = u.hang;
    if (u.malformed_json !== undefined) set.malformedJson = u.malformed_json;
    if (u.truncated_json !== undefined) set.truncatedJson = u.truncated_json;
    if (u.drift_extra_fields !== undefined) set.driftExtraFields = u.drift_extra_fields;
    if (u.drift_missing_optional !== undefined) set.driftMissingOptional = u.drift_missing_optional;
    if (u.drift_wrong_type !== undefined) set.driftWrongType = u.drift_wrong_type;
    if (u.storm_seconds !== undefined) {
      const retryAfter = u.storm_retry_after === undefined || u.storm_retry_after === null ? undefined : String(u.storm_retry_after);
      set.storm = u.storm_seconds > 0 ? { untilMs: this.clock.now() + u.storm_seconds * 1000, retryAfter } : undefined;
    }
    return set;
  }
}

function toView(set: FaultSet, now: number): FaultSetView {
  const stormRemaining = set.storm ? Math.max(0, set.storm.untilMs - now) : 0;
  return {
    latency_ms: set.latencyMs,
    jitter_ms: set.jitterMs,
    error_500: set.error500,
    error_502: set.error502,
    error_503: set.error503,
    hang: set.hang,
    malformed_json: set.malformedJson,
    truncated_json: set.truncatedJson,
    drift_extra_fields: set.driftExtraFields,
    drift_missing_optional: set.driftMissingOptional,
    drift_wrong_type: set.driftWrongType,
    storm_remaining_ms: stormRemaining,
    storm_retry_after: stormRemaining > 0 ? (set.storm?.retryAfter ?? null) : null,
  };
}

function pickErrorStatus(set: FaultSet, roll: number): 500 | 502 | 503 | undefined {
  if (roll < set.error500) return 500;
  if (roll < set.error500 + set.error502) return 502;
  if (roll < set.error500 + set.error502 + set.error503) return 503;
  return undefined;
}

/** 500 and 503 answer JSON as the application would; 502 is a proxy's HTML page, as in real life. */
function sendServerError(res: Response, status: 500 | 502 | 503): void {
  if (status === 502) {
    res
      .status(502)
      .type('text/html')
      .send('<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n');
    return;
  }
  if (status === 503) {
    res.status(503).json({ error: 'service_unavailable', message: 'The service is temporarily unavailable (simulated)' });
    return;
  }
  res.status(500).json({ error: 'internal_error', message: 'Internal server error (simulated)' });
}

interface BodyFaults {
  malformed: boolean;
  truncated: boolean;
  extra: boolean;
  missing: boolean;
  wrongType: boolean;
}

/**
 * Rewrites the JSON body of a successful answer on its way out. `res.json` ends in
 * `res.send(string)` with a JSON content type, so wrapping `send` catches every JSON body
 * whichever app produced it.
 */
function corruptJsonBodies(res: Response, faults: BodyFaults): void {
  const originalSend = res.send.bind(res);
  res.send = function sendWithFaults(body?: unknown): Response {
    const contentType = String(res.getHeader('Content-Type') ?? '');
    const isJson = /\bjson\b/.test(contentType) && (typeof body === 'string' || Buffer.isBuffer(body));
    if (!isJson || res.statusCode < 200 || res.statusCode >= 300) return originalSend(body);
    res.send = originalSend;
    let text = Buffer.isBuffer(body) ? body.toString('utf8') : String(body);
    if (faults.extra || faults.missing || faults.wrongType) {
      text = JSON.stringify(driftJson(JSON.parse(text) as unknown, faults));
    }
    if (faults.malformed) text = malformJson(text);
    if (faults.truncated) text = truncateJson(text);
    return originalSend(text);
  } as Response['send'];
}

/** Breaks JSON syntax while keeping the body recognisable: the first `"` becomes `'`. */
export function malformJson(text: string): string {
  const quote = text.indexOf('"');
  return quote >= 0 ? `${text.slice(0, quote)}'${text.slice(quote + 1)}` : `${text}}`;
}

/** Cuts a body mid-way; the response stays well framed (Content-Length of the cut body). */
export function truncateJson(text: string): string {
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

export const DRIFT_EXTRA_FIELD = 'x_sim_unexpected';

/**
 * Schema drift as a provider's unannounced change would look: an unknown field on every
 * object, optional fields gone, and one leaf (the first in document order) of the wrong type.
 */
export function driftJson(value: unknown, kinds: { extra: boolean; missing: boolean; wrongType: boolean }): unknown {
  let drifted = value;
  if (kinds.extra || kinds.missing) drifted = mapObjects(drifted, kinds);
  if (kinds.wrongType) drifted = retypeFirstLeaf(drifted).value;
  return drifted;
}

function mapObjects(value: unknown, kinds: { extra: boolean; missing: boolean }): unknown {
  if (Array.isArray(value)) return value.map((v) => mapObjects(v, kinds));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (kinds.missing && OPTIONAL_FIELD_NAMES.has(key)) continue;
    out[key] = mapObjects(inner, kinds);
  }
  if (kinds.extra) out[DRIFT_EXTRA_FIELD] = { note: 'field added by simulated schema drift', level: 1 };
  return out;
}

function retypeFirstLeaf(value: unknown): { value: unknown; done: boolean } {
  if (typeof value === 'string') return { value: value.length, done: true };
  if (typeof value === 'number') return { value: String(value), done: true };
  if (typeof value === 'boolean') return { value: value ? 'yes' : 'no', done: true };
  if (Array.isArray(value)) {
    const copy: unknown[] = (value as unknown[]).slice();
    for (let i = 0; i < copy.length; i++) {
      const inner = retypeFirstLeaf(copy[i]);
      if (inner.done) {
        copy[i] = inner.value;
        return { value: copy, done: true };
      }
    }
    return { value: copy, done: false };
  }
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const key of Object.keys(copy)) {
      const inner = retypeFirstLeaf(copy[key]);
      if (inner.done) {
        copy[key] = inner.value;
        return { value: copy, done: true };
      }
    }
    return { value: copy, done: false };
  }
  return { value, done: false };
}

/**
 * Field names that are optional in every response schema where they occur, so dropping
 * them anywhere is a legal-but-unusual answer, not a broken one. Derived from the
 * simulator's own zod schemas through their JSON Schema form.
 */
export const OPTIONAL_FIELD_NAMES: ReadonlySet<string> = computeOptionalFieldNames();

function computeOptionalFieldNames(): Set<string> {
  const optional = new Set<string>();
  const required = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    const properties = record.properties;
    if (properties && typeof properties === 'object') {
      const requiredHere = new Set(Array.isArray(record.required) ? (record.required as string[]) : []);
      for (const key of Object.keys(properties)) (requiredHere.has(key) ? required : optional).add(key);
    }
    for (const inner of Object.values(record)) visit(inner);
  };
  const modules: Record<string, unknown>[] = [monitoringSchemas, releaseSchemas];
  for (const candidate of modules.flatMap((m) => Object.values(m))) {
    if (candidate instanceof z.ZodType) {
      try {
        visit(z.toJSONSchema(candidate));
      } catch {
        // A schema without a JSON Schema form (none today) simply contributes no names.
      }
    }
  }
  for (const name of required) optional.delete(name);
  return optional;
}
