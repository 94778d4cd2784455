import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/exporter/config.js';
import { startExporter, type RunningExporter } from '../../src/exporter/index.js';
import { FakeClock } from '../../src/lib/clock.js';
import { CONTENT_SECURITY_POLICY } from '../../src/server/html.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { launchChromium, type Browser, type Page } from '../support/chromium.js';
import { startTroubleProxy, type TroubleProxy, type TroubleTexts } from '../support/trouble-proxy.js';

/**
 * The status page and the landing page in a real browser (Debian's headless Chromium; the
 * test fails when it is missing), served by a running exporter polling the simulator: one
 * account straight, one through a proxy that makes trouble (a failing source, a list read
 * short, a field no answer carries, an odd version), one whose plan has no API access. Once
 * with hostile upstream text everywhere an upstream can put text, which must show as text and
 * never become an element, an attribute or a script; once with plain words, for the pictures
 * in docs/troubleshooting.md (UPDATE_SCREENSHOTS=1 writes them to docs/images/, through
 * pngquant when it is installed).
 */

const UPDATE = process.env.UPDATE_SCREENSHOTS === '1';
const PICTURES = { desktop: new URL('../../docs/images/status-page-desktop.png', import.meta.url), phone: new URL('../../docs/images/status-page-phone.png', import.meta.url) };
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844, mobile: true, scale: 2 };
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** Each text sets `window.__xss` if it ever runs. */
const xss = (name: string) => `<img src=x onerror="window.__xss='${name}'">`;
const HOSTILE = {
  plan: `${xss('plan')}<script>window.__xss='plan script'</script>"Gold" & 'Co' ${'W'.repeat(2000)}`,
  component: `${xss('component')} web <b>bold</b> ${'C'.repeat(300)}`,
  version: `dev"><svg onload="window.__xss='version'">`,
  error: `${xss('error')} the alert store is down ${'A'.repeat(150)}`,
  pageError: `<script>window.__xss='page'</script> page two is gone`,
  upgradeMessage: `${xss('upgrade')} upgrade now`,
  upgradeUrl: `javascript:window.__xss='upgrade url'`,
} as const satisfies TroubleTexts;
const PLAIN: TroubleTexts = {
  error: 'the alert store is unavailable, try again later',
  pageError: 'Service Unavailable',
};

interface Running {
  readonly exporter: RunningExporter;
  stop(): Promise<void>;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** The exporter on a fake clock, `minutes` of simulated time after start (as test/support/drive.ts moves it). */
async function start(texts: TroubleTexts, minutes: number): Promise<Running> {
  const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const simulator: RunningSimulator = await startSimulator({ clock, monitoringPort: 0, releasesPort: 0, marketplacePort: 0, random: () => 0.5, hosts: 4, websites: 3 });
  const proxy: TroubleProxy = await startTroubleProxy(simulator.monitoringBaseUrl, { troubled: simulator.keys.pro, refused: simulator.keys.starter }, texts);
  const config = parseConfig(
    `accounts:
  - {name: agency, base_url: ${proxy.baseUrl}, api_key_env: AGENCY}
  - {name: shop, base_url: ${simulator.monitoringBaseUrl}, api_key_env: SHOP}
  - {name: legacy, base_url: ${proxy.baseUrl}, api_key_env: LEGACY}
releases:
  mode: marketplace
  marketplace_base_url: ${simulator.marketplaceBaseUrl}
  marketplace_key_env: MARKET
  schedule: "*/5 * * * *"
  projects: [nginx, {id: php/php-src, major: 8}]
`,
    { env: { SHOP: simulator.keys.business, AGENCY: simulator.keys.pro, LEGACY: simulator.keys.starter, MARKET: simulator.keys.marketplace } },
  );
  const exporter = await startExporter({ config, clock, listenAddress: '127.0.0.1:0', telemetryPath: '/metrics', log: pino({ level: 'silent' }), processMetrics: false });
  const settle = async () => {
    for (let i = 0, quiet = 0; i < 2000 && quiet < 5; i++) {
      await tick();
      quiet = exporter.quiet() ? quiet + 1 : 0;
    }
  };
  for (let s = 0; s < minutes * 60; s++) {
    await settle();
    clock.advance(1000);
  }
  await settle();
  await exporter.store.flush();
  return {
    exporter,
    async stop() {
      await exporter.stop();
      await proxy.close();
      await simulator.close();
    },
  };
}

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

describe('the status page with hostile upstream text', () => {
  let running: Running;
  let page: Page;
  beforeAll(async () => {
    running = await start(HOSTILE, 3);
    page = await browser.page();
  }, 240_000);
  afterAll(async () => {
    await running?.stop();
  });

  it('is HTML for the browser under the strict Content-Security-Policy, JSON for programs and ?format=json', async () => {
    const url = running.exporter.url;
    const html = await page.open(`${url}/status`, DESKTOP);
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toMatch(/^default-src 'none'; style-src 'sha256-[^']+'; .*frame-ancestors 'none'$/);
    expect(await page.evaluate('document.contentType')).toBe('text/html');
    // The one style sheet applies under the policy (its hash is right), and nothing was refused.
    expect(await page.evaluate(`getComputedStyle(document.querySelector('header')).backgroundColor`)).toBe('rgb(36, 41, 47)');
    expect(await page.violations()).toEqual([]);
    // A style sheet slipped into the page would not apply: the policy is enforced, not only sent.
    const injected = await page.evaluate(`(() => { const s = document.createElement('style'); s.textContent = 'body { background: rgb(1, 2, 3) }'; document.head.append(s); return getComputedStyle(document.body).backgroundColor; })()`);
    expect(injected).toBe('rgb(255, 255, 255)');
    expect((await page.violations()).some((v) => v.startsWith('style-src'))).toBe(true);

    const json = await page.open(`${url}/status?format=json`, DESKTOP);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    for (const accept of [undefined, '*/*', 'application/json']) {
      const res = await fetch(`${url}/status`, { headers: accept === undefined ? {} : { accept } });
      expect(res.headers.get('content-type'), String(accept)).toBe('application/json; charset=utf-8');
      expect((await res.json()) as { accounts: { account: string }[] }).toMatchObject({ accounts: [{ account: 'agency' }, { account: 'shop' }, { account: 'legacy' }] });
    }
    expect((await fetch(`${url}/status`, { headers: { accept: BROWSER_ACCEPT } })).headers.get('content-type')).toBe('text/html; charset=utf-8');
  }, 60_000);

  it('shows every hostile text as text, and none becomes an element, an attribute or a script', async () => {
    await page.open(`${running.exporter.url}/status`, DESKTOP);
    const dom = await page.evaluate<{ tags: string[]; handlers: string[]; xss: unknown; links: string[]; text: string; sections: string[] }>(`({
      tags: [...document.querySelectorAll('script, img, svg, b, iframe, object, embed, form, base')].map((e) => e.tagName),
      handlers: [...document.querySelectorAll('*')].flatMap((e) => [...e.attributes].map((a) => a.name)).filter((n) => n.startsWith('on')),
      xss: window.__xss,
      links: [...document.links].map((a) => a.protocol),
      text: document.body.textContent,
      sections: [...document.querySelectorAll('section > h2')].map((h) => h.textContent.trim()),
    })`);
    expect(dom.tags).toEqual([]);
    expect(dom.handlers).toEqual([]);
    expect(dom.xss).toBeUndefined();
    expect(new Set(dom.links)).toEqual(new Set(['http:']));
    expect(dom.sections).toEqual(['Account agency 1 failing', 'Account shop up', 'Account legacy plan_required', 'Release lookups up']);
    // Each text where the page puts it, as the upstream wrote it (long ones cut, and said so).
    expect(dom.text).toContain(HOSTILE.plan.slice(0, 120));
    expect(dom.text).toMatch(/W… \(\d+ more characters in \/status\?format=json\)/);
    expect(dom.text).toContain(`server error (HTTP 500): ${HOSTILE.error}`);
    expect(dom.text).toContain(HOSTILE.pageError);
    expect(dom.text).toContain(HOSTILE.component.slice(0, 120));
    expect(dom.text).toContain(HOSTILE.version);
    expect(dom.text).toContain(`Upgrade: ${HOSTILE.upgradeUrl}`);
    // The troubles themselves: the failing source, the short list, the missing field with its fields: lines.
    expect(dom.text).toMatch(/alert_rules\s*http_5xx/);
    expect(dom.text).toContain('Incomplete lists.');
    expect(dom.text).toContain('websites.up');
    expect(dom.text).toContain('  - name: agency\n    fields:\n      websites:\n        up: <dotted path>');
  }, 60_000);

  it('fits a phone: no sideways scrolling even with very long words, tables as blocks', async () => {
    await page.open(`${running.exporter.url}/status`, PHONE);
    const layout = await page.evaluate<{ viewport: string | null; width: number; scrollWidth: number; td: string; thead: string }>(`({
      viewport: document.querySelector('meta[name=viewport]')?.getAttribute('content') ?? null,
      width: window.innerWidth,
      scrollWidth: document.documentElement.scrollWidth,
      td: getComputedStyle(document.querySelector('td')).display,
      thead: getComputedStyle(document.querySelector('thead')).display,
    })`);
    expect(layout.viewport).toBe('width=device-width, initial-scale=1');
    expect(layout.width).toBe(PHONE.width);
    expect(layout.scrollWidth).toBeLessThanOrEqual(PHONE.width);
    expect(layout.td).toBe('block');
    expect(layout.thead).toBe('none');
  }, 60_000);

  it('has a landing page that says one thing about readiness, counts every series it serves and links to the status page', async () => {
    const url = running.exporter.url;
    const metrics = await (await fetch(`${url}/metrics`, { headers: { accept: 'text/plain' } })).text();
    const samples = metrics.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
    const landing = await page.open(`${url}/`, DESKTOP);
    expect(landing.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    const dom = await page.evaluate<{ text: string; status: string[]; tags: string[]; xss: unknown }>(`({
      text: document.body.textContent.replace(/\\s+/g, ' '),
      status: [...document.links].filter((a) => a.pathname === '/status' && a.search === '').map((a) => a.textContent),
      tags: [...document.querySelectorAll('script, img, svg')].map((e) => e.tagName),
      xss: window.__xss,
    })`);
    expect(dom.status).toContain('Status page');
    expect(dom.tags).toEqual([]);
    expect(dom.xss).toBeUndefined();
    expect(dom.text).toContain('Ready, ');
    expect(dom.text).not.toMatch(/not ready|Every source works/);
    const said = /([\d,]+) series on \/metrics: ([\d,]+) from the upstream APIs and ([\d,]+) about the exporter itself/.exec(dom.text);
    const [total, store, self] = (said?.slice(1) ?? []).map((n) => Number(n.replaceAll(',', '')));
    expect(total).toBe(samples);
    expect(store).toBe(running.exporter.store.snapshot().series);
    expect(self).toBe(samples - (store ?? 0));
    expect(dom.text).toContain(HOSTILE.error.slice(0, 100));
  }, 60_000);
});

describe('the status page in plain words', () => {
  let running: Running;
  beforeAll(async () => {
    running = await start(PLAIN, 6);
  }, 240_000);
  afterAll(async () => {
    await running?.stop();
  });

  it(`is pictured at a desktop's and a phone's width${UPDATE ? ' (writing docs/images/status-page-*.png)' : ''}`, async () => {
    const page = await browser.page();
    await page.open(`${running.exporter.url}/status`, DESKTOP);
    const text = await page.evaluate<string>('document.body.textContent');
    expect(text).toContain('Up 6 min');
    expect(text).toContain('Configuration loaded');
    expect(text).toContain('the alert store is unavailable');
    const desktop = await page.screenshot(1500);
    await page.open(`${running.exporter.url}/status`, PHONE);
    const phone = await page.screenshot(1600);
    expect(pngSize(desktop).width).toBe(DESKTOP.width);
    expect(pngSize(phone).width).toBe(PHONE.width * PHONE.scale);
    if (UPDATE) {
      for (const [file, png] of [[PICTURES.desktop, desktop], [PICTURES.phone, phone]] as const) {
        writeFileSync(file, png);
        // Smaller for the repository when pngquant is there (apt-get install -y pngquant), as the dashboards' pictures.
        spawnSync('pngquant', ['--force', '--skip-if-larger', '--quality=70-95', '--output', fileURLToPath(file), fileURLToPath(file)]);
      }
    }
    // The pictures in the docs are of this page at these widths (made again with UPDATE_SCREENSHOTS=1).
    expect(pngSize(readFileSync(PICTURES.desktop)).width).toBe(DESKTOP.width);
    expect(pngSize(readFileSync(PICTURES.phone)).width).toBe(PHONE.width * PHONE.scale);
  }, 60_000);
});
