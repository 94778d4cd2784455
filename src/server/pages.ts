import type { Request, Response } from 'express';
import type { MetricStore } from '../exposition/store.js';
import type { Clock } from '../lib/clock.js';
import type { Redactor } from '../lib/redact.js';
import { HTML_HEADERS } from './html.js';
import { landingPage } from './landing.js';
import { healthOf, statusPage } from './status-page.js';
import { readStatus } from './status-view.js';
import type { StatusProvider } from './status.js';

/**
 * The pages for people, `/` and `/status` (HTML for a browser, JSON for everyone else), and
 * how `/status` decides between the two. What a page quotes is scrubbed before it is escaped
 * and cut, and the page once more as a whole.
 */

export interface PageContext {
  readonly store: MetricStore;
  readonly status: StatusProvider;
  readonly version: string;
  readonly telemetryPath: string;
  readonly redactor: Redactor;
  readonly clock: Clock;
  /** When the server was made: the uptime the status page shows. */
  readonly startedMs: number;
  readonly notReadyReason: () => string;
  /** Series the self-metrics add to a scrape. */
  readonly selfSeries: () => Promise<number>;
}

/**
 * What `/status` answers: `?format=json` or `?format=html` decide; otherwise HTML only for a
 * client that prefers it to JSON (a browser: `text/html` first), JSON for everyone else (no
 * Accept, `*\/*`, `application/json`, anything unknown), as before HTML existed. Undefined for
 * another `format`.
 */
export function statusFormat(req: Request): 'json' | 'html' | undefined {
  const format = req.query.format;
  if (format === 'json' || format === 'html') return format;
  if (format !== undefined) return undefined;
  return req.accepts(['application/json', 'text/html']) === 'text/html' ? 'html' : 'json';
}

/** An HTML page with the headers every one gets (a strict Content-Security-Policy first). */
function sendHtml(res: Response, body: string): void {
  res.set(HTML_HEADERS).status(200).type('text/html; charset=utf-8').send(body);
}

export function pageRoutes(ctx: PageContext): { landing: (req: Request, res: Response) => Promise<void>; status: (req: Request, res: Response) => Promise<void> } {
  const { store, status, redactor } = ctx;
  const scrub = (text: string) => redactor.scrub(text);
  /** A page without the count beats no page: the error is the scrape's to report. */
  const selfSeries = () => ctx.selfSeries().catch(() => undefined);
  const view = () => readStatus(redactor.scrubValue(status.status()));
  const notReady = (ready: boolean) => (ready ? undefined : scrub(ctx.notReadyReason()));

  return {
    async landing(_req, res) {
      const ready = status.ready();
      const page = landingPage({
        version: ctx.version,
        telemetryPath: ctx.telemetryPath,
        ready,
        notReadyReason: notReady(ready),
        generation: store.generation,
        series: store.snapshot().series,
        selfSeries: await selfSeries(),
        health: healthOf(view()),
        failing: redactor.scrubValue(status.failingSources?.() ?? []),
        missingFields: redactor.scrubValue(status.missingFields?.() ?? []),
      });
      sendHtml(res, scrub(page));
    },
    async status(req, res) {
      res.setHeader('Vary', 'Accept');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      const format = statusFormat(req);
      if (format === undefined) {
        res.status(400).type('text/plain; charset=utf-8').send('Bad Request: format must be json or html\n');
        return;
      }
      if (format === 'json') {
        // Each string scrubbed before JSON escapes it, then the text as a whole.
        res.status(200).type('application/json; charset=utf-8').send(scrub(JSON.stringify(redactor.scrubValue(status.status())) ?? 'null'));
        return;
      }
      const ready = status.ready();
      const page = statusPage({
        status: view(),
        ready,
        notReadyReason: notReady(ready),
        missing: redactor.scrubValue(status.missingFields?.() ?? []),
        version: ctx.version,
        telemetryPath: ctx.telemetryPath,
        nowMs: ctx.clock.now(),
        startedMs: ctx.startedMs,
        selfSeries: await selfSeries(),
      });
      sendHtml(res, scrub(page));
    },
  };
}
