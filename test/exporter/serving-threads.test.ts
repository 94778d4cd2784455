import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import bcrypt from 'bcryptjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SelfMetricsCache } from '../../src/exposition/scrape.js';
import { defaultServingThreads, movableBuffers, TailDemand } from '../../src/server/serving-threads.js';
import { drive, type Driven } from '../support/drive.js';
import { sampleValue } from '../support/exposition-text.js';
import { until } from '../support/until.js';
import { makeTestPki, type TestPki } from '../support/tls.js';

/**
 * Issue 30: /metrics served by worker threads listening on one port, from the chunks the
 * builder made; the other paths answered by the main thread through them; TLS and basic
 * auth in every thread; what the threads count reaches the main thread's self-metrics.
 */

const CONFIG = `accounts:\n  - name: acme\n    base_url: \${monitoring}\n    api_key_env: KEY\n`;

let driven: Driven | undefined;
afterEach(async () => {
  await driven?.stop();
  driven = undefined;
});

async function scrapeRaw(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const response = await fetch(url, { headers });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

/**
 * Scrapes until the threads serve the main thread's snapshot (its layout reaches them from the
 * main thread, its chunks from the builder thread). The main thread holds no bytes of the
 * bodies, only their sizes and CRC-32s: the data part served must have both.
 */
async function scrapeCurrent(d: Driven, headers: Record<string, string>, format: 'text' | 'openMetrics'): Promise<string> {
  await d.exporter.store.flush();
  const snapshot = d.exporter.store.snapshot();
  expect(snapshot.bodiesHeld).toBe(false);
  const expected = snapshot[format];
  expect(expected.length).toBeGreaterThan(0);
  let body: Buffer = Buffer.alloc(0);
  for (let i = 0; i < 50; i++) {
    const answer = await scrapeRaw(`${d.exporter.url}/metrics`, headers);
    expect(answer.status).toBe(200);
    // fetch undoes the gzip encoding itself (and checks its CRC and length).
    body = answer.body;
    if (body.length > expected.length && crc32(body.subarray(0, expected.length)) === expected.crc32) return body.toString('utf8');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the serving threads never served the current snapshot; got ${body.length} bytes, expected a data part of ${expected.length} with CRC-32 ${expected.crc32}`);
}

describe('serving threads', () => {
  it.each([
    { what: 'a format scraped just now', wanted: [0], at: 5_000, due: ['text'] },
    { what: 'a format last scraped a minute ago', wanted: [0], at: 60_001, due: [] },
    { what: 'a format scraped every 15 s, long after its first scrape', wanted: [0, 15_000, 30_000, 45_000, 60_000, 75_000], at: 80_000, due: ['text'] },
  ])('renders self-metrics ahead for $what: $due', ({ wanted, at, due }) => {
    const demand = new TailDemand(60_000);
    for (const time of wanted) demand.want('text', time);
    expect(demand.due(at)).toEqual(due);
  });

  it('forgets a format once it is idle, and renders it again when it is scraped again', () => {
    const demand = new TailDemand(60_000);
    demand.want('text', 0);
    demand.want('openmetrics', 50_000);
    expect(demand.due(70_000)).toEqual(['openmetrics']);
    expect(demand.due(80_000)).toEqual(['openmetrics']);
    demand.want('text', 90_000);
    expect(demand.due(95_000).sort()).toEqual(['openmetrics', 'text']);
  });

  it('moves only the buffers that own their memory whole, never a piece of the shared pool', () => {
    const own = Buffer.from(new ArrayBuffer(10_000));
    const pooled = Buffer.from('small');
    const part = own.subarray(10);
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length);
    expect(movableBuffers(own, pooled, part)).toEqual([own.buffer]);
    expect(movableBuffers()).toEqual([]);
  });

  it('defaults to one thread per core beyond one, at least one, at most four', () => {
    expect([1, 2, 3, 4, 8, 64].map((cores) => defaultServingThreads(cores))).toEqual([1, 1, 2, 3, 4, 4]);
  });

  it('serve /metrics in every format and encoding, the current snapshot byte for byte, and the pages of the main thread', async () => {
    driven = await drive({ simulator: { hosts: 3, websites: 1 }, config: CONFIG, env: (sim) => ({ KEY: sim.keys.pro }), servingThreads: 2, enableLifecycle: true });
    await driven.advance(60_000);
    await driven.exporter.store.flush();
    expect(driven.exporter.store.snapshot().text.length).toBeGreaterThan(1000);
    const text = await scrapeCurrent(driven, { accept: 'text/plain', 'accept-encoding': 'gzip' }, 'text');
    expect(sampleValue(text, 'monapi_up{account="acme"}')).toBe(1);
    expect(text).toMatch(/^# TYPE monapi_exporter_scrapes_total counter$/m);
    expect(await scrapeCurrent(driven, { accept: 'text/plain' }, 'text')).toContain('# TYPE monapi_up gauge');
    const openMetrics = await scrapeCurrent(driven, { accept: 'application/openmetrics-text;version=1.0.0', 'accept-encoding': 'gzip' }, 'openMetrics');
    expect(openMetrics.endsWith('# EOF\n')).toBe(true);

    const head = await fetch(`${driven.exporter.url}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1000);
    expect((await fetch(`${driven.exporter.url}/metrics`, { method: 'POST' })).status).toBe(405);

    // The main thread's pages, through the threads.
    const status = await fetch(`${driven.exporter.url}/status?format=json`);
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ accounts: [{ account: 'acme', up: true }] });
    expect((await fetch(`${driven.exporter.url}/-/ready`)).status).toBe(200);
    expect(await (await fetch(`${driven.exporter.url}/`)).text()).toContain('monapi-exporter');
    expect((await fetch(`${driven.exporter.url}/nowhere`)).status).toBe(404);
    // Without a file to re-read, the main thread's reload answers that it failed: the answer is its, not the thread's.
    const reload = await fetch(`${driven.exporter.url}/-/reload`, { method: 'POST' });
    expect([reload.status, await reload.text()]).toEqual([500, expect.stringContaining('configuration reload failed, the previous configuration stays in force') as unknown]);

    // What the threads counted reaches the main thread's registry: three GETs (at least) and a
    // HEAD; the POST was refused before counting.
    const exporter = driven.exporter;
    await until('the threads\' scrape counts in the main registry', async () => {
      const scrapes = await exporter.registry.getSingleMetric('monapi_exporter_scrapes_total')?.get();
      const total = scrapes?.values.reduce((sum, value) => sum + value.value, 0) ?? 0;
      return total >= 4 ? total : undefined;
    });
    const loops = await driven.exporter.servingLoopDelays();
    expect(loops.map((loop) => loop.thread).sort()).toEqual(['serving-0', 'serving-1']);
    for (const loop of loops) expect(loop.samples).toBeGreaterThan(0);
  });

  it('ask the main thread for the self-metrics every 5 s, not for every burst of scrapes: a rendering reads every job of every account', async () => {
    driven = await drive({ simulator: { hosts: 2, websites: 0 }, config: CONFIG, env: (sim) => ({ KEY: sim.keys.pro }), servingThreads: 1 });
    await driven.advance(30_000);
    await scrapeCurrent(driven, { accept: 'text/plain' }, 'text');
    const renderings = vi.spyOn(SelfMetricsCache.prototype, 'render');
    const wanted = vi.spyOn(TailDemand.prototype, 'want');
    // Scraped for 5.5 s without a pause: a rendering ahead of the scrapes every 5 s and one a
    // thread asked for (once a second, as it was, 5 or more).
    try {
      const started = Date.now();
      let scrapes = 0;
      for (; Date.now() < started + 5500; scrapes++) expect((await scrapeRaw(`${driven.exporter.url}/metrics`, { accept: 'text/plain' })).status).toBe(200);
      // One a 5 s tick ahead, and one a thread asked for; a slow scrape that stretches the loop allows another tick.
      expect(renderings.mock.calls.length).toBeLessThanOrEqual(1 + Math.ceil((Date.now() - started) / 5000));
      expect(renderings.mock.calls.length).toBeGreaterThanOrEqual(1);
      // Every scrape keeps the renderings ahead going, not only a thread's rare requests (reported every 100 ms).
      await until(`a want for each of ${scrapes} scrapes`, () => (wanted.mock.calls.filter(([format]) => format === 'text').length >= scrapes ? true : undefined), 10_000, 50);
    } finally {
      renderings.mockRestore();
      wanted.mockRestore();
    }
  });

  it('follow every new snapshot: a host gone upstream leaves /metrics in every thread', async () => {
    driven = await drive({ simulator: { hosts: 3, websites: 1 }, config: CONFIG, env: (sim) => ({ KEY: sim.keys.pro }), servingThreads: 3 });
    await driven.advance(120_000);
    const account = driven.simulator.world.accountByKey(driven.simulator.keys.pro)!;
    const gone = account.hosts(driven.clock.now()).filter((h) => h.allowed).at(-1)!;
    expect(await scrapeCurrent(driven, { accept: 'text/plain' }, 'text')).toContain(gone.uuid);
    account.removeHosts(1, driven.clock.now());
    await driven.advance(61_000);
    // Fresh connections land on any of the threads: each must have the new snapshot.
    for (let i = 0; i < 12; i++) {
      const body = await scrapeCurrent(driven, { accept: 'text/plain', connection: 'close' }, 'text');
      expect(body.split('\n').filter((line) => line.includes(gone.uuid) && !line.startsWith('monapi_alert_rule_host_info'))).toEqual([]);
      // The self-metrics too, in every thread: the last one is given the rendered bytes, the others copies.
      expect(body).toMatch(/^# TYPE monapi_exporter_scrapes_total counter$/m);
    }
  });
});

describe('serving threads behind TLS and basic auth', () => {
  let pki: TestPki;
  let dir: string;
  beforeAll(() => {
    pki = makeTestPki();
    dir = mkdtempSync(join(tmpdir(), 'monapi-threads-'));
  });
  afterAll(() => {
    pki.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  function get(url: string, path: string, authorization?: string): Promise<{ status: number; body: string }> {
    const { port } = new URL(url);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port, path, ca: pki.caCert, servername: 'localhost', agent: false, headers: authorization ? { authorization } : {} },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it('ask every client for the password, on /metrics and on the pages; the health probes stay open', async () => {
    const file = join(pki.dir, 'threads-web.yml');
    writeFileSync(file, `tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prometheus: ${bcrypt.hashSync('s3cret-pass', 4)}\n`);
    driven = await drive({ simulator: { hosts: 2, websites: 1 }, config: CONFIG, env: (sim) => ({ KEY: sim.keys.pro }), servingThreads: 2, webConfigFile: file });
    await driven.advance(60_000);
    await driven.exporter.store.flush();
    expect(driven.exporter.url.startsWith('https://')).toBe(true);
    const auth = `Basic ${Buffer.from('prometheus:s3cret-pass').toString('base64')}`;
    for (let i = 0; i < 6; i++) {
      expect((await get(driven.exporter.url, '/metrics')).status).toBe(401);
      expect((await get(driven.exporter.url, '/status')).status).toBe(401);
      expect((await get(driven.exporter.url, '/-/healthy')).status).toBe(200);
      const metrics = await get(driven.exporter.url, '/metrics', auth);
      expect(metrics.status).toBe(200);
      expect(metrics.body).toContain('monapi_up{account="acme"}');
      expect((await get(driven.exporter.url, '/status?format=json', auth)).status).toBe(200);
    }
    expect(JSON.stringify(await driven.exporter.registry.getMetricsAsJSON())).not.toContain('s3cret-pass');
  });

  it('meet one throttle for wrong passwords, whichever thread each connection lands on', async () => {
    const file = join(dir, 'flood-web.yml');
    writeFileSync(file, `basic_auth_users:\n  prometheus: ${bcrypt.hashSync('s3cret-pass', 4)}\n`);
    driven = await drive({ simulator: { hosts: 1, websites: 0 }, config: CONFIG, env: (sim) => ({ KEY: sim.keys.pro }), servingThreads: 3, webConfigFile: file });
    const { port } = new URL(driven.exporter.url);
    const wrong = `Basic ${Buffer.from('prometheus:not-the-password').toString('base64')}`;
    // A new connection each time: SO_REUSEPORT hands each to one of the three threads (all twelve to one: about 1 in 60,000).
    const status = (): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/metrics', agent: false, headers: { authorization: wrong } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    let refusedBeforeThrottled = 0;
    for (let i = 0; i < 12; i++) {
      const answer = await status();
      if (answer === 429) break;
      expect(answer).toBe(401);
      refusedBeforeThrottled++;
    }
    // The burst of one address (5), and one more for each 2 s the checks took on a slow machine; a throttle per thread would have let all twelve through.
    expect(refusedBeforeThrottled).toBeGreaterThanOrEqual(5);
    expect(refusedBeforeThrottled).toBeLessThanOrEqual(8);
  });
});
