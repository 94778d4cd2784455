import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A proxy in front of the simulator's Monitoring API that gives the exporter the troubles the
 * status page has to show, in the words it is told (plain ones for the pictures in the docs,
 * hostile ones for the escaping tests), by account key:
 *
 * - `troubled` key: `/account` names the plan `texts.plan`; one component per host is called
 *   `texts.component` with version `texts.version` (a version nobody can read); `/alerts`
 *   answers 500 with `texts.error`; the website list loses its `up` fields (a field no answer
 *   carries) and announces a second page by a Link header, which answers 503 with
 *   `texts.pageError` (a list read short).
 * - `refused` key: the simulator's 403 plan_required, with `texts.upgradeMessage` and
 *   `texts.upgradeUrl` in the body.
 *
 * Every other request passes through untouched.
 */
export interface TroubleTexts {
  readonly plan?: string;
  readonly component?: string;
  readonly version?: string;
  readonly error: string;
  readonly pageError: string;
  readonly upgradeMessage?: string;
  readonly upgradeUrl?: string;
}

export interface TroubleProxy {
  /** Base URL for the exporter's `base_url`, ending in /api/v2. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export async function startTroubleProxy(target: string, keys: { readonly troubled: string; readonly refused: string }, texts: TroubleTexts): Promise<TroubleProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let origin = '';

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
    res.end(text);
  };

  /** Forwards the request; `rewrite` may change a 200 JSON answer and add headers. */
  const forward = (req: IncomingMessage, res: ServerResponse, rewrite?: (body: Json) => { body: unknown; headers?: Record<string, string> }) => {
    // Uncompressed, so a body can be rewritten.
    const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host, 'accept-encoding': 'identity' };
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const raw = Buffer.concat(chunks);
        const status = answer.statusCode ?? 502;
        if (rewrite === undefined || status !== 200) {
          const { 'content-length': _length, 'transfer-encoding': _encoding, ...kept } = answer.headers;
          res.writeHead(status, { ...kept, 'content-length': raw.length });
          res.end(raw);
          return;
        }
        const parsed: unknown = JSON.parse(raw.toString('utf8'));
        const changed = isRecord(parsed) ? rewrite(parsed) : { body: parsed };
        send(res, status, changed.body, changed.headers);
      });
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const auth = String(req.headers.authorization ?? req.headers['x-api-key'] ?? '');
    const path = url.pathname.replace(/^\/api\/v2/, '');
    if (auth.includes(keys.refused)) {
      send(res, 403, { error: 'plan_required', message: texts.upgradeMessage ?? 'API access needs the Pro plan', upgrade_url: texts.upgradeUrl ?? 'https://monitoring.example.com/billing/upgrade' });
      return;
    }
    if (!auth.includes(keys.troubled)) return forward(req, res);
    if (path === '/alerts') return send(res, 500, { error: 'internal', message: texts.error });
    if (path === '/websites' && url.searchParams.get('page') === '2') return send(res, 503, { error: 'unavailable', message: texts.pageError });
    if (path === '/account' && texts.plan !== undefined) {
      const plan = texts.plan;
      return forward(req, res, (body) => ({ body: { ...body, plan } }));
    }
    if (path === '/websites') {
      return forward(req, res, (body) => ({
        body: { ...body, websites: (Array.isArray(body.websites) ? body.websites : []).map((w: unknown) => (isRecord(w) ? Object.fromEntries(Object.entries(w).filter(([k]) => k !== 'up')) : w)) },
        headers: { link: `<${origin}/api/v2/websites?page=2>; rel="next"` },
      }));
    }
    if (/^\/hosts\/[^/]+\/components$/.test(path) && texts.component !== undefined) {
      const [name, version] = [texts.component, texts.version ?? 'dev'];
      return forward(req, res, (body) => ({
        body: { ...body, components: (Array.isArray(body.components) ? body.components : []).map((c: unknown, i) => (isRecord(c) && i === 0 ? { ...c, name, version } : c)) },
      }));
    }
    return forward(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: `${origin}${upstream.pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  };
}
