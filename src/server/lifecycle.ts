import type { Express, Request, Response } from 'express';

/**
 * `POST /-/reload`, as Prometheus has it: re-reads the configuration. Behind
 * `--web.enable-lifecycle`, because anyone who can reach the port could otherwise make the
 * exporter re-read its files; without the flag it answers 403 and says which flag.
 */
export const RELOAD_PATH = '/-/reload';

export type ReloadResult = { readonly ok: true; readonly changed: string[] } | { readonly ok: false; readonly error: string };

/** What the HTTP layer may ask of the exporter beyond serving data. */
export interface Lifecycle {
  reload(): ReloadResult;
}

export interface LifecycleRoutes extends Lifecycle {
  /** `--web.enable-lifecycle`. */
  readonly enabled: boolean;
}

/** Adds the lifecycle routes to `app`; `scrub` cleans what the answer quotes (a failed reload's error). */
export function mountLifecycle(app: Express, lifecycle: LifecycleRoutes, scrub: (text: string) => string): void {
  const send = (res: Response, status: number, body: string) => {
    res.status(status).set({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' }).send(scrub(body));
  };
  const reload = (req: Request, res: Response) => {
    if (!lifecycle.enabled) {
      send(res, 403, 'Lifecycle API is not enabled: start the exporter with --web.enable-lifecycle (SIGHUP reloads without it)\n');
      return;
    }
    // The body is not used; drain it so the connection can be reused.
    req.resume();
    const result = lifecycle.reload();
    if (result.ok) send(res, 200, `configuration reloaded${result.changed.length > 0 ? `; restarted: ${result.changed.join(', ')}` : '; nothing changed'}\n`);
    else send(res, 500, `configuration reload failed, the previous configuration stays in force:\n${result.error}\n`);
  };
  app.post(RELOAD_PATH, reload);
  app.put(RELOAD_PATH, reload);
  app.all(RELOAD_PATH, (_req: Request, res: Response) => {
    res.setHeader('Allow', 'POST, PUT');
    send(res, 405, 'Method Not Allowed: use POST\n');
  });
}
