import pino, { type Logger } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createRequestBudget } from '../budget/index.js';
import { parseConfig } from '../exporter/config.js';
import type { MetricSink } from '../exposition/model.js';
import { FakeClock, flushMicrotasks } from '../lib/clock.js';
import { every, topic, type SourceDefinition, type Topic } from '../sources/source.js';
import { NetworkError } from '../upstream/http/errors.js';
import { createSchedulerMetrics } from './metrics.js';
import { TopicBoard } from './topics.js';
import { UnitRuntime } from './unit-runtime.js';

/**
 * Per-target jobs follow the topics their sources read, and only those: at 8,000 hosts a
 * catalogue poll (one per host, each providing the metric names) re-reading every source's
 * targets held the event loop for a second at a time.
 */

const NAMES = topic<ReadonlyMap<string, number>>('names-provider', 'names', new Map());
const SITES = topic<ReadonlyMap<string, { readonly url: string }>>('sites-provider', 'sites', new Map());

const sink: MetricSink = { publish() {}, retract() {}, groups: () => [] };

/** A target source over one topic's map, counting how often its targets are read and what it polls and forgets. */
function countingSource(name: string, reads: Topic<ReadonlyMap<string, unknown>>) {
  const seen = { targetReads: 0, polled: [] as string[], forgotten: [] as string[] };
  let board: { read: <T>(t: Topic<T>) => T } | undefined;
  const definition: SourceDefinition<unknown, unknown> = {
    name,
    section: 'account',
    priority: 'normal',
    families: [],
    reads: [reads],
    create: (ctx) => {
      board = ctx;
      return {
        scope: 'target',
        targets: () => {
          seen.targetReads++;
          return board?.read(reads) ?? new Map();
        },
        cadence: () => every(60_000),
        requestsPerRun: () => 1,
        poll: (target) => {
          seen.polled.push(JSON.stringify(target));
          return Promise.resolve();
        },
        forget: (key) => seen.forgotten.push(key),
      };
    },
  };
  return { definition, seen };
}

function unitWith(sources: SourceDefinition<unknown, unknown>[], log: Logger = pino({ level: 'silent' })) {
  const clock = new FakeClock(Date.UTC(2026, 10, 26, 12));
  const board = new TopicBoard();
  const config = parseConfig('accounts:\n  - {name: prod, base_url: http://mon.invalid/api/v2, api_key_env: K}\n', { env: { K: 'k' } });
  const runtime = new UnitRuntime({
    unit: { name: 'prod', baseUrl: 'http://mon.invalid/api/v2', counterGraceMs: 0, shard: { ordinal: 0, total: 1 } },
    sources,
    sourceConfig: Object.fromEntries(sources.map((s) => [s.name, { enabled: true, cadenceMs: {}, settings: undefined, fieldPaths: {} }])),
    exporter: config.exporter,
    upstream: undefined,
    budget: createRequestBudget({ name: 'prod', ratePerMinute: 6000, burst: 100, initialTokens: 100, headroom: 0, concurrency: 4, maxRetries: 0, clock }),
    sink,
    clock,
    log,
    metrics: createSchedulerMetrics(new Registry(), clock),
    board,
    concurrency: 4,
    reportsUp: false,
    reservedFamilyNames: [],
  });
  return { runtime, board, clock };
}

describe('per-target jobs', () => {
  it('follow a topic change in the sources that read that topic only', async () => {
    const byName = countingSource('by-name', NAMES);
    const bySite = countingSource('by-site', SITES);
    const { runtime, board } = unitWith([byName.definition, bySite.definition]);
    runtime.start();
    board.provide('prod', SITES, new Map([['a', { url: 'https://a.example' }]]));
    await flushMicrotasks();
    const namesRead = byName.seen.targetReads;
    const sitesRead = bySite.seen.targetReads;
    for (let i = 1; i <= 50; i++) board.provide('prod', NAMES, new Map([['h1', i]]));
    await flushMicrotasks();
    // Fifty provides in one turn: the reader of NAMES reads its targets once more, the other not at all.
    expect(byName.seen.targetReads).toBe(namesRead + 1);
    expect(bySite.seen.targetReads).toBe(sitesRead);
    // Another unit's change is not this unit's.
    board.provide('other', SITES, new Map([['b', { url: 'https://b.example' }]]));
    await flushMicrotasks();
    expect(bySite.seen.targetReads).toBe(sitesRead);
    expect(bySite.seen.polled).toEqual([JSON.stringify({ url: 'https://a.example' })]);
    await runtime.stop();
  });

  it('keep a job whose target comes back as the same object, take a new object, and drop a target that left', async () => {
    const bySite = countingSource('by-site', SITES);
    const { runtime, board, clock } = unitWith([bySite.definition]);
    runtime.start();
    const a = { url: 'https://a.example' };
    board.provide('prod', SITES, new Map([['a', a], ['b', { url: 'https://b.example' }]]));
    await flushMicrotasks();
    expect(bySite.seen.polled.sort()).toEqual([JSON.stringify(a), JSON.stringify({ url: 'https://b.example' })]);
    // a is the same object; b is new and renamed; c is gone from nothing; the next runs poll what is current.
    board.provide('prod', SITES, new Map([['a', a], ['b', { url: 'https://b2.example' }]]));
    await flushMicrotasks();
    board.provide('prod', SITES, new Map([['b', { url: 'https://b3.example' }]]));
    await flushMicrotasks();
    expect(bySite.seen.forgotten).toEqual(['a']);
    bySite.seen.polled.length = 0;
    await clock.advanceAsync(60_000);
    await flushMicrotasks();
    expect(bySite.seen.polled).toEqual([JSON.stringify({ url: 'https://b3.example' })]);
    await runtime.stop();
  });
});

describe('source health and staleness', () => {
  it('follow every run, every new and every removed target, and staleness grows between runs', async () => {
    const upstream = { up: true };
    /** Polls of these sites wait until released. */
    const held = new Map<string, () => void>();
    const bySite: SourceDefinition<unknown, unknown> = {
      name: 'by-site',
      section: 'account',
      priority: 'normal',
      families: [],
      reads: [SITES],
      create: (ctx) => ({
        scope: 'target',
        targets: () => ctx.read(SITES),
        cadence: () => every(60_000),
        requestsPerRun: () => 1,
        poll: (target) => {
          const url = (target as { url: string }).url;
          if (url.includes('held')) return new Promise<void>((resolve) => held.set(url, resolve));
          return upstream.up ? Promise.resolve() : Promise.reject(new NetworkError({ api: 'monitoring', endpoint: '/checks' }, 'ECONNREFUSED'));
        },
        forget: () => {},
      }),
    };
    const { runtime, board, clock } = unitWith([bySite]);
    runtime.start();
    board.provide('prod', SITES, new Map([['a', { url: 'https://a.example' }], ['b', { url: 'https://b.example' }]]));
    await flushMicrotasks();
    const health = () => runtime.sourceHealth().map((h) => ({ up: h.up, reason: h.reason, targets: h.targets, failing: h.failing }));
    expect(health()).toEqual([{ up: true, reason: '', targets: 2, failing: 0 }]);
    expect(runtime.staleness(clock.now()).get('by-site')).toBe(0);
    // No run in between: the same figures, but older.
    await clock.advanceAsync(30_000);
    expect(runtime.staleness(clock.now()).get('by-site')).toBe(30);
    upstream.up = false;
    await clock.advanceAsync(30_000);
    await flushMicrotasks();
    expect(health()).toEqual([{ up: false, reason: 'network', targets: 2, failing: 2 }]);
    expect(runtime.staleness(clock.now()).get('by-site')).toBe(60);
    board.provide('prod', SITES, new Map([['b', { url: 'https://b.example' }], ['c', { url: 'https://c.example' }]]));
    await flushMicrotasks();
    // c is new and ran (and failed); a is gone with its failure.
    expect(health()).toEqual([{ up: false, reason: 'network', targets: 2, failing: 2 }]);
    // A target that comes counts before its first run ends, and one that goes stops counting, with no run in between.
    const c = { url: 'https://c.example' };
    const d = { url: 'https://held.example' };
    board.provide('prod', SITES, new Map([['b', { url: 'https://b.example' }], ['c', c], ['d', d]]));
    await flushMicrotasks();
    expect(held.has('https://held.example')).toBe(true);
    expect(health()).toEqual([{ up: false, reason: 'network', targets: 3, failing: 2 }]);
    board.provide('prod', SITES, new Map([['c', c], ['d', d]]));
    await flushMicrotasks();
    expect(health()).toEqual([{ up: false, reason: 'network', targets: 2, failing: 1 }]);
    held.get('https://held.example')?.();
    await flushMicrotasks();
    upstream.up = true;
    await clock.advanceAsync(60_000);
    await flushMicrotasks();
    held.get('https://held.example')?.();
    await flushMicrotasks();
    expect(health()).toEqual([{ up: true, reason: '', targets: 2, failing: 0 }]);
    expect(runtime.staleness(clock.now()).get('by-site')).toBe(0);
    await runtime.stop();
  });
});

describe('failed polling jobs in the log', () => {
  it('an upstream away for 12 minutes under 300 hosts writes a start, a line a minute and an end, not a line per job', async () => {
    const up = { now: false };
    let polls = 0;
    const hosts: SourceDefinition<unknown, unknown> = {
      name: 'per-host',
      section: 'account',
      priority: 'normal',
      families: [],
      reads: [NAMES],
      create: (ctx) => ({
        scope: 'target',
        targets: () => ctx.read(NAMES),
        cadence: () => every(30_000),
        requestsPerRun: () => 1,
        poll: () => {
          polls++;
          return up.now ? Promise.resolve() : Promise.reject(new NetworkError({ api: 'monitoring', endpoint: '/hosts/{uuid}' }, 'ECONNREFUSED'));
        },
        forget: () => undefined,
      }),
    };
    const lines: { level: string; msg: string; failuresTotal?: number }[] = [];
    const log = pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) });
    const { runtime, board, clock } = unitWith([hosts], log);
    runtime.start();
    board.provide('prod', NAMES, new Map(Array.from({ length: 300 }, (_, i): [string, number] => [`h${i}`, i])));
    await clock.advanceAsync(12 * 60_000, 1_000);
    const failedPolls = polls;
    up.now = true;
    await clock.advanceAsync(4 * 60_000, 1_000);
    await runtime.stop();

    expect(failedPolls).toBeGreaterThan(12 * 300);
    const failures = lines.filter((l) => /polling job/.test(l.msg));
    expect(failures[0]?.msg).toMatch(/^polling job failed/);
    expect(failures.at(-1)).toMatchObject({ level: 'info', msg: 'polling jobs of source per-host no longer fail (network)', failuresTotal: failedPolls });
    // A start, one a minute for the 12 minutes (and the one it ended in), an end.
    expect(failures.length).toBeLessThanOrEqual(1 + 13 + 1);
    expect(failures.length).toBeGreaterThanOrEqual(12);
  });
});
