import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

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

export function withLifecycle(app: RequestListener, lifecycle: Lifecycle, enabled: boolean): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== RELOAD_PATH) {
      app(req, res);
      return;
    }
    const send = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
      res.end(body);
    };
    if (req.method !== 'POST' && req.method !== 'PUT') {
      send(405, 'Method Not Allowed: use POST\n', { allow: 'POST, PUT' });
      return;
    }
    if (!enabled) {
      send(403, 'Lifecycle API is not enabled: start the exporter with --web.enable-lifecycle (SIGHUP reloads without it)\n');
      return;
    }
    // The body is not used; drain it so the connection can be reused.
    req.resume();
    const result = lifecycle.reload();
    if (result.ok) send(200, `configuration reloaded${result.changed.length > 0 ? `; restarted: ${result.changed.join(', ')}` : '; nothing changed'}\n`);
    else send(500, `configuration reload failed, the previous configuration stays in force:\n${result.error}\n`);
  };
}
