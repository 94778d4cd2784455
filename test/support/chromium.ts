import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Headless Chromium (Debian's `chromium`, nothing downloaded) driven over the DevTools
 * protocol with Node's own WebSocket: open a page at a viewport, ask the DOM questions,
 * take a picture. No test dependency, and the browser is the one the Debian package ships.
 * Missing, it throws: a test that needs a browser fails, it never skips.
 */

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Chromium as the workplace runs it: no sandbox as root, no network of its own, no first-run noise. */
const FLAGS = [
  '--headless',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--hide-scrollbars',
  '--mute-audio',
  '--font-render-hinting=none',
  '--remote-debugging-port=0',
];

export interface Viewport {
  readonly width: number;
  readonly height: number;
  /** A phone: touch, mobile layout viewport, device pixel ratio `scale`. */
  readonly mobile?: boolean;
  readonly scale?: number;
}

export interface Page {
  /** Loads `url` at `viewport` and waits for its load event; the response's status and headers. */
  open(url: string, viewport: Viewport): Promise<{ status: number; headers: Readonly<Record<string, string>> }>;
  /** The value of a JavaScript expression in the page (JSON-safe). */
  evaluate<T>(expression: string): Promise<T>;
  /** A PNG of the page from its top, `height` CSS pixels at most (default the whole page). */
  screenshot(height?: number): Promise<Buffer>;
  /** What the page was refused under its Content-Security-Policy (`directive blockedURI`). */
  violations(): Promise<string[]>;
}

export interface Browser {
  readonly version: string;
  page(): Promise<Page>;
  close(): Promise<void>;
}

interface Message {
  id?: number;
  method?: string;
  sessionId?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

export function chromiumVersion(): string {
  const run = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8' });
  return run.stdout.trim();
}

/** Starts Chromium; throws, naming the package, when it is not installed. */
export async function launchChromium(): Promise<Browser> {
  try {
    accessSync(CHROMIUM, constants.X_OK);
  } catch {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), or set CHROMIUM to a Chromium binary`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'monapi-chromium-'));
  const root = process.getuid?.() === 0;
  const child = spawn(CHROMIUM, [...FLAGS, ...(root ? ['--no-sandbox'] : []), `--user-data-dir=${profile}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let said = '';
    // Seconds on an idle machine; far more on two cores shared with a test run.
    const timer = setTimeout(() => reject(new Error(`chromium did not start in 90 s: ${said.slice(-2000)}`)), 90_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      said += chunk;
      const found = /DevTools listening on (ws:\/\/\S+)/.exec(said);
      if (found?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`chromium exited (${code}) before it listened: ${said.slice(-2000)}`));
    });
  });
  const cdp = await connect(endpoint);
  const { product } = (await cdp.send('Browser.getVersion')) as { product: string };
  return {
    version: product,
    page: () => openPage(cdp),
    async close() {
      await cdp.send('Browser.close').catch(() => undefined);
      cdp.close();
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(killer);
      }
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

interface Cdp {
  send(method: string, params?: Record<string, unknown>, sessionId?: string): Promise<Record<string, unknown>>;
  /** The next event of `method` in `sessionId` that `accept` takes. */
  next(method: string, sessionId: string, accept?: (params: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  close(): void;
}

async function connect(endpoint: string): Promise<Cdp> {
  const socket = new WebSocket(endpoint);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`cannot connect to ${endpoint}`)), { once: true });
  });
  let lastId = 0;
  const pending = new Map<number, { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void; method: string }>();
  const waiters: { method: string; sessionId: string; accept: (p: Record<string, unknown>) => boolean; resolve: (p: Record<string, unknown>) => void }[] = [];
  socket.addEventListener('message', (event: MessageEvent) => {
    const message = JSON.parse(String(event.data)) as Message;
    if (message.id !== undefined) {
      const call = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) call?.reject(new Error(`${call.method}: ${message.error.message}`));
      else call?.resolve(message.result ?? {});
      return;
    }
    const at = waiters.findIndex((w) => w.method === message.method && w.sessionId === message.sessionId && w.accept(message.params ?? {}));
    if (at >= 0) waiters.splice(at, 1)[0]?.resolve(message.params ?? {});
  });
  return {
    send(method, params = {}, sessionId) {
      const id = ++lastId;
      socket.send(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }));
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
    },
    next(method, sessionId, accept = () => true) {
      return new Promise((resolve) => waiters.push({ method, sessionId, accept, resolve }));
    },
    close: () => socket.close(),
  };
}

/** Records Content-Security-Policy refusals from the first moment of every document. */
const RECORD_VIOLATIONS = `window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(e.effectiveDirective + ' ' + e.blockedURI));`;

async function openPage(cdp: Cdp): Promise<Page> {
  const { targetId } = (await cdp.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
  const { sessionId } = (await cdp.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
  const send = (method: string, params: Record<string, unknown> = {}) => cdp.send(method, params, sessionId);
  await send('Page.enable');
  await send('Network.enable');
  await send('Page.addScriptToEvaluateOnNewDocument', { source: RECORD_VIOLATIONS });
  const evaluate = async <T>(expression: string): Promise<T> => {
    const answer = (await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })) as { result: { value?: T }; exceptionDetails?: { text: string } };
    if (answer.exceptionDetails) throw new Error(`${expression}: ${answer.exceptionDetails.text}`);
    return answer.result.value as T;
  };
  return {
    async open(url, viewport) {
      await send('Emulation.setDeviceMetricsOverride', { width: viewport.width, height: viewport.height, deviceScaleFactor: viewport.scale ?? 1, mobile: viewport.mobile ?? false });
      await send('Emulation.setTouchEmulationEnabled', { enabled: viewport.mobile ?? false });
      const response = cdp.next('Network.responseReceived', sessionId, (p) => (p.type === 'Document' && (p.response as { url?: string } | undefined)?.url === url));
      const loaded = cdp.next('Page.loadEventFired', sessionId);
      const navigated = (await send('Page.navigate', { url })) as { errorText?: string };
      if (navigated.errorText) throw new Error(`${url}: ${navigated.errorText}`);
      const { response: r } = (await response) as { response: { status: number; headers: Record<string, string> } };
      await loaded;
      return { status: r.status, headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), v])) };
    },
    evaluate,
    async screenshot(height) {
      const metrics = (await send('Page.getLayoutMetrics')) as { cssContentSize: { width: number; height: number }; cssLayoutViewport: { clientWidth: number } };
      const width = metrics.cssLayoutViewport.clientWidth;
      const clip = { x: 0, y: 0, width, height: Math.ceil(Math.min(height ?? Infinity, metrics.cssContentSize.height)), scale: 1 };
      const { data } = (await send('Page.captureScreenshot', { format: 'png', clip, captureBeyondViewport: true })) as { data: string };
      return Buffer.from(data, 'base64');
    },
    violations: () => evaluate<string[]>('window.__cspViolations ?? []'),
  };
}
