import { createHash, timingSafeEqual } from 'node:crypto';
import express from 'express';
import type { Request, Response } from 'express';
import type { Clock } from '../../src/lib/clock.js';
import type { SimReleaseRecord as ReleaseRecord } from './schemas.js';
import { marketplaceAssetsBody, marketplaceSourceBody, marketplaceVersionBody, releaseRecordBody } from '../shapes/releases-alt.js';
import { STANDARD_SHAPES, type ShapeSource } from '../shapes/shapes.js';
import { countResponses, jsonErrors, notFoundRoute, rateLimit, readMajor, readSingle, sendError, truncate } from './http.js';
import { WindowRateLimiter } from './rate-limit.js';
import { fullName, type ReleaseStore, sharedReleaseStore } from './store.js';

export const MARKETPLACE_DEFAULT_RATE_PER_MINUTE = 600;
export const MARKETPLACE_KEY_HEADER = 'X-RapidAPI-Key';
export const MARKETPLACE_HOST_HEADER = 'X-RapidAPI-Host';

export interface MarketplaceAppOptions {
  clock: Clock;
  /** The one key the marketplace issued; requests must send it in `X-RapidAPI-Key`. */
  key: string;
  /**
   * A key the marketplace knows whose owner has no subscription to this API: it is 403
   * `not_subscribed`, the marketplace's own answer, before any endpoint is reached.
   */
  unsubscribedKey?: string;
  /** Requests per minute per key (default 600). */
  ratePerMinute?: number;
  /** Shapes of the JSON bodies the seed does not show; all standard when absent. */
  shapes?: ShapeSource;
  /** Called once per response with `marketplace` (valid key) or `invalid-key`, and the status. */
  stats?: (label: string, status: number) => void;
  /** Defaults to the store shared by every app built on `clock`. */
  store?: ReleaseStore;
}

type Answer = (record: ReleaseRecord, res: Response, shapes: ShapeSource) => void;

/** What each endpoint sends for the latest release; JSON layouts are "not shown" in the seed (shapes/releases-alt.ts). */
const ENDPOINTS: Readonly<Record<string, Answer>> = {
  '/version': (r, res, shapes) => res.json(marketplaceVersionBody(r, shapes.of('marketplace-version'))),
  '/source': (r, res, shapes) => res.json(marketplaceSourceBody(r, shapes.of('marketplace-source'))),
  '/assets': (r, res, shapes) => res.json(marketplaceAssetsBody(r, shapes.of('marketplace-assets'))),
  '/release': (r, res, shapes) => res.json(releaseRecordBody(r, shapes.of('release-record'))),
  '/text/version': (r, res) => sendText(res, r.version),
  '/text/source': (r, res) => sendText(res, r.source_url ?? ''),
  '/text/assets': (r, res) => sendText(res, (r.assets ?? []).join('\n')),
};

/**
 * The commercial endpoints, reached through the API marketplace: every request needs the
 * issued key in `X-RapidAPI-Key` (401 otherwise; 403 for a known key without a
 * subscription to this API), is counted against the key's per-minute
 * limit (429 beyond it), and sees the store as it is now: no cache.
 */
export function createMarketplaceApp(options: MarketplaceAppOptions): express.Express {
  const { clock } = options;
  if (options.key === '') throw new Error('createMarketplaceApp: key must not be empty');
  const store = options.store ?? sharedReleaseStore(clock);
  const shapes = options.shapes ?? { of: () => STANDARD_SHAPES.default };
  const limiter = new WindowRateLimiter(clock, options.ratePerMinute ?? MARKETPLACE_DEFAULT_RATE_PER_MINUTE);
  const keyDigest = digest(options.key);
  const unsubscribedDigest = options.unsubscribedKey ? digest(options.unsubscribedKey) : undefined;
  const hasValidKey = (req: Request): boolean => {
    const sent = req.get(MARKETPLACE_KEY_HEADER);
    return sent !== undefined && timingSafeEqual(digest(sent), keyDigest);
  };
  const isUnsubscribed = (req: Request): boolean => {
    const sent = req.get(MARKETPLACE_KEY_HEADER);
    return sent !== undefined && unsubscribedDigest !== undefined && timingSafeEqual(digest(sent), unsubscribedDigest);
  };

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(countResponses(options.stats, (req) => (hasValidKey(req) ? 'marketplace' : isUnsubscribed(req) ? 'unsubscribed' : 'invalid-key')));
  app.use((req, res, next) => {
    if (isUnsubscribed(req)) {
      sendError(res, 'not_subscribed', 'You are not subscribed to this API.');
      return;
    }
    if (!hasValidKey(req)) {
      const problem = req.get(MARKETPLACE_KEY_HEADER) === undefined ? 'missing' : 'invalid';
      sendError(res, 'unauthorized', `${problem} ${MARKETPLACE_KEY_HEADER} header`);
      return;
    }
    next();
  });
  // One key is configured, so the key's window is the app's window.
  app.use(rateLimit(limiter, () => 'key', 'X-RateLimit-Requests-'));

  for (const [path, answer] of Object.entries(ENDPOINTS)) {
    app.get(path, (req, res) => {
      const project = readSingle(req, 'project');
      if ('error' in project) {
        sendError(res, 'bad_request', project.error);
        return;
      }
      if (project.value === undefined || project.value.trim() === '') {
        sendError(res, 'bad_request', 'query parameter project is required (a name, owner/repo or URL)');
        return;
      }
      const major = readMajor(req);
      if ('error' in major) {
        sendError(res, 'bad_request', major.error);
        return;
      }
      const found = store.resolve(project.value);
      if (!found) {
        sendError(res, 'not_found', `unknown project '${truncate(project.value)}'`);
        return;
      }
      const record = store.latest(found, major.major);
      if (!record) {
        const line = major.major === undefined ? '' : ` with major version ${major.major}`;
        sendError(res, 'not_found', `${fullName(found)} has no release${line}`);
        return;
      }
      answer(record, res, shapes);
    });
    app.all(path, (req, res) => {
      res.set('Allow', 'GET, HEAD');
      sendError(res, 'method_not_allowed', `${req.method} is not allowed on ${path}; use GET`);
    });
  }

  app.use(notFoundRoute);
  app.use(jsonErrors);
  return app;
}

function sendText(res: Response, body: string): void {
  res.type('text/plain; charset=utf-8').send(body);
}

/** Comparing fixed-length digests lets timingSafeEqual run whatever the sent key's length. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
