import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as threadModule from '../../src/server/thread.js';
import { SERVING_THREAD_NAME } from '../../src/server/serving-threads.js';
import { drive, type Driven } from '../support/drive.js';
import { until as untilEvery } from '../support/until.js';

/** Serving threads start and stop within tens of milliseconds: look often. */
const until = <T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> => untilEvery(what, probe, 10_000, 50);

/**
 * Issue 30: a serving thread that stops is started again on the same port while the others
 * serve, and the new thread serves the current snapshot from its first scrape: the chunks of
 * the last build reach it from the builder thread, the layout from the main thread. The
 * threads are reached through `startThread`, which this file wraps to keep each one started.
 */

interface Started {
  readonly name: string;
  readonly worker: Worker;
  /** The thread said it listens: it holds a complete snapshot and has joined the port. */
  listening: boolean;
}
const started = vi.hoisted(() => [] as Started[]);
vi.mock('../../src/server/thread.js', async (importOriginal) => {
  const real = await importOriginal<typeof threadModule>();
  return {
    startThread: (caller: string, module: string, name: string, workerData?: unknown): Worker => {
      const worker = real.startThread(caller, module, name, workerData);
      const thread: Started = { name, worker, listening: false };
      worker.on('message', (message: { type?: unknown }) => {
        if (message.type === 'listening') thread.listening = true;
      });
      started.push(thread);
      return worker;
    },
  };
});

const CONFIG = `accounts:\n  - name: acme\n    base_url: \${monitoring}\n    api_key_env: KEY\n`;

let driven: Driven | undefined;
afterEach(async () => {
  await driven?.stop();
  driven = undefined;
  started.length = 0;
});

/** One scrape on a connection of its own: SO_REUSEPORT hands each new connection to one of the threads. */
function scrapeOnce(url: string): Promise<{ status: number; body: Buffer }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/metrics', agent: false, headers: { accept: 'text/plain', connection: 'close' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Whether a body begins with the data part of the main thread's current snapshot (its length and CRC-32). */
function servesCurrent(d: Driven, body: Buffer): boolean {
  const expected = d.exporter.store.snapshot().text;
  return body.length > expected.length && crc32(body.subarray(0, expected.length)) === expected.crc32;
}

/** Long enough for a few scrapes on a loaded machine while a thread is down. */
const RESTART_DELAY_MS = 3_000;

describe('a serving thread that stops', () => {
  it('is started again on the same port, and serves the current snapshot from its first scrape while the other thread serves on', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }));
    driven = await drive({ simulator: { hosts: 3, websites: 1 }, config: CONFIG, env: (sim) => ({ KEY: sim.keys.pro }), servingThreads: 2, servingRestartDelayMs: RESTART_DELAY_MS, log });
    const d = driven;
    await d.advance(60_000);
    await d.exporter.store.flush();
    const serving = (index: number): Started[] => started.filter((thread) => thread.name === `${SERVING_THREAD_NAME}${index}`);
    /** A thread's first start, or the one after it. */
    const startOf = (index: number, which: number): Started | undefined => serving(index)[which];
    expect(serving(0)).toHaveLength(1);
    expect(serving(1)).toHaveLength(1);
    // Linux keeps 15 characters of a thread's name: each thread's whole name is seen in top -H.
    expect(started.every((thread) => thread.name.length <= 15)).toBe(true);
    await until('a thread serving the current snapshot', async () => (servesCurrent(d, (await scrapeOnce(d.exporter.url)).body) ? true : undefined));

    const first = startOf(1, 0)?.worker;
    if (!first) throw new Error('serving thread 1 was not started');
    const exited = new Promise<number>((resolve) => first.once('exit', resolve));
    await first.terminate();
    expect(await exited).toBe(1);
    // Until it is started again the other thread answers every scrape on the port, and its own
    // figures come without waiting for the thread that stopped.
    for (let i = 0; i < 4; i++) expect((await scrapeOnce(d.exporter.url)).status).toBe(200);
    expect((await d.exporter.servingLoopDelays()).map((loop) => loop.thread)).toEqual(['serving-0']);
    expect(serving(1)).toHaveLength(1);
    await until('the thread started again and listening', () => (startOf(1, 1)?.listening ? true : undefined));
    expect(lines.some((line) => line.includes('a serving thread stopped; starting it again'))).toBe(true);
    expect((await d.exporter.servingLoopDelays()).map((loop) => loop.thread).sort()).toEqual(['serving-0', 'serving-1']);

    // With the other thread stopped too, until it is started again only the new one serves: no
    // build since it started, so what it serves came with the last build's chunks.
    const other = startOf(0, 0)?.worker;
    if (!other) throw new Error('serving thread 0 was not started');
    const otherExited = new Promise<number>((resolve) => other.once('exit', resolve));
    await other.terminate();
    await otherExited;
    for (let i = 0; i < 3; i++) {
      const { status, body } = await scrapeOnce(d.exporter.url);
      expect(status).toBe(200);
      expect(servesCurrent(d, body), `the restarted thread served ${body.length} bytes, not the current snapshot`).toBe(true);
    }
    expect(serving(0), 'thread 0 was started again before the scrapes above ended: they may not have reached the restarted thread alone').toHaveLength(1);
    await until('the other thread started again and listening', () => (startOf(0, 1)?.listening ? true : undefined));

    // And it follows the snapshots built after it started.
    const account = d.simulator.world.accountByKey(d.simulator.keys.pro);
    const gone = account?.hosts(d.clock.now()).filter((h) => h.allowed).at(-1);
    if (!account || !gone) throw new Error('the simulated account has no host to remove');
    account.removeHosts(1, d.clock.now());
    await d.advance(61_000);
    await d.exporter.store.flush();
    expect(d.exporter.store.snapshot().text.length).toBeGreaterThan(1000);
    let inARow = 0;
    await until('eight scrapes in a row serving the snapshot without the host', async () => {
      inARow = servesCurrent(d, (await scrapeOnce(d.exporter.url)).body) ? inARow + 1 : 0;
      return inARow >= 8 ? true : undefined;
    });
    // Then every connection gets it, whichever thread takes it (all twelve on one: once in 4,096).
    for (let i = 0; i < 12; i++) {
      const { body } = await scrapeOnce(d.exporter.url);
      expect(servesCurrent(d, body), `scrape ${i} after the host left served ${body.length} bytes, not the current snapshot`).toBe(true);
      expect(body.toString('utf8').split('\n').filter((line) => line.includes(gone.uuid) && !line.startsWith('monapi_alert_rule_host_info'))).toEqual([]);
    }

    // A shutdown while a thread is down ends: it does not wait for that thread, nor start it again.
    const last = startOf(1, 1)?.worker;
    if (!last) throw new Error('serving thread 1 was not started again');
    await last.terminate();
    await d.stop();
    driven = undefined;
    await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS + 500));
    expect(serving(1)).toHaveLength(2);
  }, 90_000);
});
