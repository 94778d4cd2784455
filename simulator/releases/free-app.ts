import express from 'express';
import type { Request, Response } from 'express';
import type { Clock } from '../../src/lib/clock.js';
import type { SimReleaseRecord as ReleaseRecord } from './schemas.js';
import { freeVersionBody, releaseRecordBody } from '../shapes/releases-alt.js';
import { STANDARD_SHAPES, type ShapeSource } from '../shapes/shapes.js';
import type { SimProject } from './catalogue.js';
import { countResponses, jsonErrors, notFoundRoute, rateLimit, readMajor, sendError, truncate } from './http.js';
import { WindowRateLimiter } from './rate-limit.js';
import { fullName, type ReleaseStore, sharedReleaseStore } from './store.js';

export const FREE_CACHE_TTL_MS = 2 * 60 * 60 * 1000;
export const FREE_DEFAULT_RATE_PER_MINUTE = 60;

export interface ReleasesAppOptions {
  clock: Clock;
  /** Requests per minute per client IP (default 60). */
  ratePerMinute?: number;
  /**
   * Shapes of the bodies the seed does not show (`free-version`: a bare JSON string by
   * default, `{version}` in the alternative set; `release-record`). All standard when absent.
   */
  shapes?: ShapeSource;
  /** Called once per response with `free` and the status, for the simulator's request counts. */
  stats?: (label: string, status: number) => void;
  /** Defaults to the store shared by every app built on `clock`. */
  store?: ReleaseStore;
}

interface CacheEntry {
  readonly record: ReleaseRecord;
  readonly computedAtMs: number;
}

/** Where the code host's webhook payload names the repository, per `/hooks/<code_host>`. */
const HOOK_REPOSITORY: Readonly<Record<string, { domain: string; read: (body: unknown) => unknown }>> = {
  github: { domain: 'github.com', read: (body) => field(field(body, 'repository'), 'full_name') },
  gitlab: { domain: 'gitlab.com', read: (body) => field(field(body, 'project'), 'path_with_namespace') },
};

/**
 * The free public endpoint: `GET /<owner>/<repository>[?version][&major=N]` and the webhook
 * `POST /hooks/<code_host>`. Each (project, major) answer is computed once and served
 * unchanged for 2 hours on `clock`; a webhook for the project drops its cached answers.
 */
export function createReleasesApp(options: ReleasesAppOptions): express.Express {
  const { clock } = options;
  const store = options.store ?? sharedReleaseStore(clock);
  const shapes = options.shapes ?? { of: () => STANDARD_SHAPES.default };
  const limiter = new WindowRateLimiter(clock, options.ratePerMinute ?? FREE_DEFAULT_RATE_PER_MINUTE);
  const cache = new Map<string, CacheEntry>();

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(countResponses(options.stats, () => 'free'));
  app.use(rateLimit(limiter, (req) => req.ip ?? req.socket.remoteAddress ?? 'unknown', 'X-RateLimit-'));

  app.post(
    '/hooks/:codeHost',
    express.json({ limit: '1mb' }),
    express.urlencoded({ extended: false, limit: '1mb' }),
    (req: Request<{ codeHost: string }>, res: Response) => {
      const hook = HOOK_REPOSITORY[req.params.codeHost];
      if (!hook) {
        sendError(res, 'not_found', `no hook for code host '${truncate(req.params.codeHost)}'; known: github, gitlab`);
        return;
      }
      const repository = hook.read(webhookPayload(req.body));
      if (typeof repository !== 'string' || !/^[^/\s]+\/[^/\s]+$/.test(repository)) {
        const where = req.params.codeHost === 'github' ? 'repository.full_name' : 'project.path_with_namespace';
        sendError(res, 'bad_request', `webhook payload must be JSON naming the repository in ${where} as 'owner/repo'`);
        return;
      }
      const project = store.resolve(`https://${hook.domain}/${repository}`);
      if (!project) {
        sendError(res, 'not_found', `unknown repository '${truncate(repository)}' on ${hook.domain}`);
        return;
      }
      for (const key of cache.keys()) if (key.startsWith(`${fullName(project)}|`)) cache.delete(key);
      res.status(202).json({ status: 'accepted', project: fullName(project) });
    },
  );

  app.all('/hooks/:codeHost', (_req: Request, res: Response) => {
    res.set('Allow', 'POST');
    sendError(res, 'method_not_allowed', 'a hook takes POST: the code host delivers its webhook payload in the request body');
  });

  app.get('/:owner/:repository', (req: Request<{ owner: string; repository: string }>, res: Response) => {
    const major = readMajor(req);
    if ('error' in major) {
      sendError(res, 'bad_request', major.error);
      return;
    }
    const id = `${req.params.owner}/${req.params.repository}`;
    const project = store.resolve(id);
    if (!project) {
      sendError(res, 'not_found', `unknown project '${truncate(id)}'`);
      return;
    }
    const entry = cached(project, major.major);
    if (!entry) {
      const line = major.major === undefined ? '' : ` with major version ${major.major}`;
      sendError(res, 'not_found', `${fullName(project)} has no release${line}`);
      return;
    }
    const ageSeconds = Math.floor((clock.now() - entry.computedAtMs) / 1000);
    res.set({
      'Cache-Control': `public, max-age=${FREE_CACHE_TTL_MS / 1000 - ageSeconds}`,
      Age: String(ageSeconds),
    });
    if ('version' in req.query) res.json(freeVersionBody(entry.record, shapes.of('free-version')));
    else res.json(releaseRecordBody(entry.record, shapes.of('release-record')));
  });

  app.all('/:owner/:repository', (req: Request, res: Response) => {
    res.set('Allow', 'GET, HEAD');
    sendError(res, 'method_not_allowed', `${req.method} is not allowed; the free endpoint answers GET`);
  });

  app.use(notFoundRoute);
  app.use(jsonErrors);
  return app;

  function cached(project: SimProject, major: string | undefined): CacheEntry | undefined {
    const key = `${fullName(project)}|${major ?? ''}`;
    const now = clock.now();
    const hit = cache.get(key);
    if (hit && now < hit.computedAtMs + FREE_CACHE_TTL_MS) return hit;
    const record = store.latest(project, major);
    if (!record) {
      cache.delete(key);
      return undefined;
    }
    const entry = { record, computedAtMs: now };
    cache.set(key, entry);
    return entry;
  }
}

/** GitHub may send the JSON as a form field `payload` (content type x-www-form-urlencoded). */
function webhookPayload(body: unknown): unknown {
  const form = field(body, 'payload');
  if (typeof form !== 'string') return body;
  try {
    return JSON.parse(form) as unknown;
  } catch {
    return undefined;
  }
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}
