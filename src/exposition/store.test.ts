import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { crc32, gunzipSync } from 'node:zlib';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../lib/clock.js';
import { everyType } from '../../test/exposition/fixtures.js';
import { compressTail, gzipMember, joinBody } from './gzip.js';
import type { FamilySamples, FamilySpec } from './model.js';
import { renderOpenMetrics } from './render-openmetrics.js';
import { renderText } from './render-text.js';
import type { BuilderNotice, ChunksMessage } from './builder.js';
import { layoutOf, SnapshotInbox } from '../server/snapshot-inbox.js';
import { negotiate } from './negotiate.js';
import { buildScrapeBody } from './scrape.js';
import { MetricStore, type MetricStoreOptions } from './store.js';

const cpu: FamilySpec = { name: 'demo_cpu_ratio', type: 'gauge', help: 'CPU use.' };
const mem: FamilySpec = { name: 'demo_memory_bytes', type: 'gauge', help: 'Memory.', unit: 'bytes' };

function gauge(spec: FamilySpec, values: Record<string, number>, label = 'host'): FamilySamples {
  return {
    spec: { ...spec, type: 'gauge' },
    samples: Object.entries(values).map(([value, v]) => ({ labels: { [label]: value }, value: v })),
  };
}

function newStore(options: MetricStoreOptions = {}): { store: MetricStore; clock: FakeClock } {
  const clock = new FakeClock();
  return { store: new MetricStore({ clock, ...options }), clock };
}

function text(store: MetricStore): string {
  return joinBody(store.snapshot().text).toString('utf8');
}

function openMetrics(store: MetricStore): string {
  return joinBody(store.snapshot().openMetrics).toString('utf8');
}

describe('MetricStore publish, replace, retract', () => {
  it('serves nothing until the first rebuild, then what was published', async () => {
    const { store } = newStore();
    store.publish('host/a', [gauge(cpu, { a: 0.5 })]);
    expect(store.generation).toBe(0);
    expect(text(store)).toBe('');
    await store.flush();
    expect(store.generation).toBe(1);
    expect(text(store)).toBe('# HELP demo_cpu_ratio CPU use.\n# TYPE demo_cpu_ratio gauge\ndemo_cpu_ratio{host="a"} 0.5\n');
  });

  it('renders the same bytes as the pure renderers for a single group', async () => {
    const { store } = newStore();
    store.publish('all', everyType);
    await store.flush();
    const sorted = [...everyType].sort((a, b) => (a.spec.name < b.spec.name ? -1 : 1));
    expect(text(store)).toBe(renderText(sorted));
    expect(openMetrics(store)).toBe(renderOpenMetrics(sorted, { eof: false }));
    expect(store.snapshot().families).toBe(everyType.length);
  });

  it('replaces a group as a whole: series it no longer publishes disappear', async () => {
    const { store } = newStore();
    store.publish('g', [gauge(cpu, { a: 1, b: 2 }), gauge(mem, { a: 10 })]);
    await store.flush();
    expect(store.snapshot().series).toBe(3);
    store.publish('g', [gauge(cpu, { a: 3 })]);
    await store.flush();
    expect(text(store)).toBe('# HELP demo_cpu_ratio CPU use.\n# TYPE demo_cpu_ratio gauge\ndemo_cpu_ratio{host="a"} 3\n');
    expect(store.snapshot().series).toBe(1);
  });

  it('retract removes the series and a family nobody else holds', async () => {
    const { store } = newStore();
    store.publish('host/a', [gauge(cpu, { a: 1 }), gauge(mem, { a: 5 })]);
    store.publish('host/b', [gauge(cpu, { b: 2 })]);
    await store.flush();
    expect(store.snapshot().series).toBe(3);
    store.retract('host/a');
    await store.flush();
    expect(text(store)).toBe('# HELP demo_cpu_ratio CPU use.\n# TYPE demo_cpu_ratio gauge\ndemo_cpu_ratio{host="b"} 2\n');
    expect(store.groups('host/')).toEqual(['host/b']);
    expect(store.snapshot().series).toBe(1);
  });

  it('retracting an unknown group changes nothing', async () => {
    const { store } = newStore();
    store.publish('g', [gauge(cpu, { a: 1 })]);
    await store.flush();
    store.retract('nope');
    await store.flush();
    expect(store.generation).toBe(1);
  });

  it('lists groups by prefix in order', () => {
    const { store } = newStore();
    for (const group of ['monitoring/host/b', 'releases/x', 'monitoring/host/a', 'monitoring/account']) store.publish(group, []);
    expect(store.groups('monitoring/host/')).toEqual(['monitoring/host/a', 'monitoring/host/b']);
    expect(store.groups('')).toHaveLength(4);
  });

  it.each(['', undefined as unknown as string])('rejects the group name %j', (group) => {
    const { store } = newStore();
    expect(() => store.publish(group, [])).toThrow(/group must be a non-empty string/);
  });
});

describe('MetricStore memory accounting', () => {
  it("reports the builder thread's heap, with or without a collection first", async () => {
    const store = new MetricStore();
    store.publish('g', [gauge(cpu, { a: 0.5 })]);
    await store.flush();
    // The collection runs where the process has --expose-gc (the scale bench); the answer comes either way.
    expect(await store.builderHeapUsed()).toBeGreaterThan(0);
    expect(await store.builderHeapUsed(true)).toBeGreaterThan(0);
  });
});

describe("MetricStore and the builder thread's notices", () => {
  it('hears how the builder thread runs, also when it started before the store', async () => {
    const first = new MetricStore();
    first.publish('g', [gauge(cpu, { a: 0.5 })]);
    await first.flush();
    const notices: BuilderNotice[] = [];
    const store = new MetricStore({ onBuilderNotice: (notice) => notices.push(notice) });
    await vi.waitFor(() => expect(notices.length).toBeGreaterThan(0));
    // On Linux the thread lowers its own priority (src/lib/thread-priority.ts); elsewhere it says it cannot.
    if (process.platform === 'linux') expect(notices.some((notice) => notice.level === 'debug' && notice.message.includes('nice steps below'))).toBe(true);
    else expect(notices[0]?.level).toBe('info');
    await store.close();
    await first.close();
  });
});

describe('MetricStore merging and order', () => {
  it('merges one family from several groups under one header, families by name, groups by name', async () => {
    const { store } = newStore();
    store.publish('host/b', [gauge(mem, { b: 20 }), gauge(cpu, { b: 0.2 })]);
    store.publish('host/a', [gauge(cpu, { a: 0.1 }), gauge(mem, { a: 10 })]);
    await store.flush();
    expect(text(store)).toBe(
      [
        '# HELP demo_cpu_ratio CPU use.',
        '# TYPE demo_cpu_ratio gauge',
        'demo_cpu_ratio{host="a"} 0.1',
        'demo_cpu_ratio{host="b"} 0.2',
        '# HELP demo_memory_bytes Memory.',
        '# TYPE demo_memory_bytes gauge',
        'demo_memory_bytes{host="a"} 10',
        'demo_memory_bytes{host="b"} 20',
        '',
      ].join('\n'),
    );
    expect(openMetrics(store)).toContain('# TYPE demo_memory_bytes gauge\n# UNIT demo_memory_bytes bytes\ndemo_memory_bytes{host="a"} 10\n');
  });

  it('gives the same bytes whatever order groups were published in', async () => {
    const groups = Array.from({ length: 20 }, (_, i) => `g${String(i).padStart(2, '0')}`);
    const publishAll = async (order: string[]): Promise<string> => {
      const { store } = newStore();
      for (const g of order) store.publish(g, [gauge(cpu, { [g]: 1 }), gauge(mem, { [g]: 2 })]);
      await store.flush();
      return text(store);
    };
    const forward = await publishAll(groups);
    const backward = await publishAll([...groups].reverse());
    expect(backward).toBe(forward);
    expect(forward.indexOf('host="g00"')).toBeLessThan(forward.indexOf('host="g19"'));
  });

  it('keeps the sample order a source gave within a group', async () => {
    const { store } = newStore();
    store.publish('g', [gauge(cpu, { z: 1, a: 2, m: 3 })]);
    await store.flush();
    const hosts = [...text(store).matchAll(/host="(\w)"/g)].map((m) => m[1]);
    expect(hosts).toEqual(['z', 'a', 'm']);
  });

  it('counts series, with a histogram sample as its buckets, +Inf, _sum and _count', async () => {
    const { store } = newStore();
    store.publish('g', everyType);
    await store.flush();
    // 4 gauge + 2 counter + 1 info + 2 * (3 buckets + 3) histogram + 1 gauge
    expect(store.snapshot().series).toBe(4 + 2 + 1 + 12 + 4 + 1);
  });
});

describe('MetricStore conflicts, duplicates and invalid families', () => {
  it('keeps the first of two families with one name but different help, counts the other, reports it once', async () => {
    const onConflict = vi.fn();
    const registry = new Registry();
    const { store } = newStore({ onConflict, registry });
    store.publish('a', [gauge(cpu, { a: 1 })]);
    store.publish('b', [gauge({ ...cpu, help: 'Other help.' }, { b: 2 }), gauge(mem, { b: 3 })]);
    store.publish('b', [gauge({ ...cpu, help: 'Other help.' }, { b: 2 }), gauge(mem, { b: 3 })]);
    await store.flush();
    expect(text(store)).toContain('# HELP demo_cpu_ratio CPU use.\n# TYPE demo_cpu_ratio gauge\ndemo_cpu_ratio{host="a"} 1\n# HELP demo_memory');
    expect(text(store)).not.toContain('host="b"} 2');
    expect(text(store)).toContain('demo_memory_bytes{host="b"} 3');
    expect(store.stats().familyConflicts).toBe(2);
    expect(onConflict).toHaveBeenCalledTimes(1);
    expect(onConflict).toHaveBeenCalledWith(expect.objectContaining({ family: 'demo_cpu_ratio', group: 'b' }));
    expect(await registry.metrics()).toContain('monapi_exporter_family_conflicts_total 2');
  });

  it('treats a different type as a conflict', async () => {
    const { store } = newStore();
    store.publish('a', [gauge({ name: 'x_total', type: 'gauge', help: 'h' }, { a: 1 })]);
    store.publish('b', [{ spec: { name: 'x_total', type: 'counter', help: 'h' }, samples: [{ labels: {}, value: 1 }] }]);
    await store.flush();
    expect(text(store)).toBe('# HELP x_total h\n# TYPE x_total gauge\nx_total{host="a"} 1\n');
    expect(store.stats().familyConflicts).toBe(1);
  });

  it('accepts the other definition once the first holder is gone, and lets a sole holder change its help', async () => {
    const { store } = newStore();
    store.publish('a', [gauge(cpu, { a: 1 })]);
    store.publish('b', [gauge({ ...cpu, help: 'New.' }, { b: 2 })]);
    store.retract('a');
    store.publish('b', [gauge({ ...cpu, help: 'New.' }, { b: 2 })]);
    store.publish('b', [gauge({ ...cpu, help: 'Newer.' }, { b: 2 })]);
    await store.flush();
    expect(text(store)).toBe('# HELP demo_cpu_ratio Newer.\n# TYPE demo_cpu_ratio gauge\ndemo_cpu_ratio{host="b"} 2\n');
    expect(store.stats().familyConflicts).toBe(1);
  });

  it('keeps the first of two identical series from different groups and counts the duplicate', async () => {
    const onDuplicateSeries = vi.fn();
    const registry = new Registry();
    const { store } = newStore({ onDuplicateSeries, registry });
    store.publish('a', [gauge(cpu, { x: 1 })]);
    store.publish('b', [gauge(cpu, { x: 2, y: 3 })]);
    await store.flush();
    expect(text(store)).toContain('demo_cpu_ratio{host="x"} 1\ndemo_cpu_ratio{host="y"} 3\n');
    expect(text(store)).not.toContain('host="x"} 2');
    expect(store.stats().duplicateSeries).toBe(1);
    expect(onDuplicateSeries).toHaveBeenCalledWith({ family: 'demo_cpu_ratio', group: 'b', owner: 'a', labels: 'host="x"' });
    expect(await registry.metrics()).toContain('monapi_exporter_duplicate_series_total 1');
  });

  it('detects duplicates whatever the label order, also within one group', async () => {
    const { store } = newStore();
    store.publish('a', [
      {
        spec: { ...cpu, type: 'gauge' },
        samples: [
          { labels: { host: 'h', mode: 'm' }, value: 1 },
          { labels: { mode: 'm', host: 'h' }, value: 2 },
        ],
      },
    ]);
    await store.flush();
    expect(text(store).match(/demo_cpu_ratio\{/g)).toHaveLength(1);
    expect(store.stats().duplicateSeries).toBe(1);
  });

  it('renders each sample with its own labels when families share label objects, interleaved', async () => {
    const { store } = newStore();
    const a = { account: 'x', host_uuid: 'a' };
    const b = { account: 'x', host_uuid: 'b', device: 'sda' };
    store.publish('hosts', [
      { spec: { ...cpu, type: 'gauge' }, samples: [{ labels: a, value: 1 }, { labels: b, value: 2 }, { labels: { host_uuid: 'a', account: 'x' }, value: 3 }] },
      { spec: { ...mem, type: 'gauge' }, samples: [{ labels: b, value: 4 }, { labels: a, value: 5 }] },
    ]);
    await store.flush();
    expect(text(store).split('\n').filter((line) => !line.startsWith('#'))).toEqual([
      'demo_cpu_ratio{account="x",host_uuid="a"} 1',
      'demo_cpu_ratio{account="x",host_uuid="b",device="sda"} 2',
      'demo_memory_bytes{account="x",host_uuid="b",device="sda"} 4',
      'demo_memory_bytes{account="x",host_uuid="a"} 5',
      '',
    ]);
    // The third cpu sample repeats the first one's series in another object and order: a duplicate.
    expect(store.stats().duplicateSeries).toBe(1);
    // A labels object changed between two publishes is read again.
    Object.assign(a, { host_uuid: 'c' });
    store.publish('hosts', [{ spec: { ...cpu, type: 'gauge' }, samples: [{ labels: a, value: 6 }] }]);
    await store.flush();
    expect(text(store)).toContain('demo_cpu_ratio{account="x",host_uuid="c"} 6');
  });

  it('lets a series move to another group once its first holder no longer publishes it', async () => {
    const { store } = newStore();
    store.publish('a', [gauge(cpu, { x: 1 })]);
    store.publish('a', [gauge(cpu, {})]);
    store.publish('b', [gauge(cpu, { x: 2 })]);
    await store.flush();
    expect(text(store)).toContain('demo_cpu_ratio{host="x"} 2\n');
    expect(store.stats().duplicateSeries).toBe(0);
  });

  it.each<[string, FamilySamples, string]>([
    ['an invalid metric name', gauge({ name: 'demo-bad', type: 'gauge', help: '' }, { a: 1 }), 'invalid metric name'],
    ['a reserved label name', gauge(cpu, { a: 1 }, '__reserved'), 'invalid label name'],
    ['an invalid label name', gauge(cpu, { a: 1 }, 'bad.label'), 'invalid label name'],
  ])('rejects a family with %s, keeps the rest, counts it', async (_what, bad, reason) => {
    const onInvalidFamily = vi.fn();
    const registry = new Registry();
    const { store } = newStore({ onInvalidFamily, registry });
    store.publish('g', [bad, gauge(mem, { a: 1 })]);
    await store.flush();
    expect(text(store)).toBe('# HELP demo_memory_bytes Memory.\n# TYPE demo_memory_bytes gauge\ndemo_memory_bytes{host="a"} 1\n');
    expect(store.stats().invalidFamilies).toBe(1);
    expect(onInvalidFamily).toHaveBeenCalledWith(expect.objectContaining({ group: 'g', reason: expect.stringContaining(reason) as string }));
    expect(await registry.metrics()).toContain('monapi_exporter_invalid_families_total 1');
  });
});

describe('MetricStore rebuild scheduling', () => {
  it('rebuilds once after the debounce, not before', async () => {
    const { store, clock } = newStore({ debounceMs: 200, maxDelayMs: 1000 });
    store.publish('a', [gauge(cpu, { a: 1 })]);
    clock.advance(100);
    store.publish('b', [gauge(cpu, { b: 1 })]);
    clock.advance(199);
    await store.whenIdle();
    expect(store.generation).toBe(0);
    clock.advance(1);
    await store.whenIdle();
    expect(store.generation).toBe(1);
    expect(text(store)).toContain('host="b"');
    expect(clock.pending()).toBe(0);
  });

  it('rebuilds within maxDelayMs even when changes never pause', async () => {
    const { store, clock } = newStore({ debounceMs: 200, maxDelayMs: 1000 });
    for (let t = 0; t < 1000; t += 100) {
      store.publish('a', [gauge(cpu, { a: t })]);
      clock.advance(100);
    }
    await store.whenIdle();
    expect(store.generation).toBe(1);
    expect(text(store)).toContain('demo_cpu_ratio{host="a"} 900');
  });

  it('by default starts a rebuild at most 250 ms after the first change, however often changes come', async () => {
    const { store, clock } = newStore();
    for (let t = 0; t < 240; t += 40) {
      store.publish('a', [gauge(cpu, { a: t })]);
      clock.advance(40);
    }
    await store.whenIdle();
    expect(store.generation).toBe(0);
    clock.advance(10);
    await store.whenIdle();
    expect(store.generation).toBe(1);
  });

  it('flush rebuilds at once and cancels the pending timer; without changes it does nothing', async () => {
    const { store, clock } = newStore();
    store.publish('a', [gauge(cpu, { a: 1 })]);
    expect(clock.pending()).toBe(1);
    await store.flush();
    expect(clock.pending()).toBe(0);
    expect(store.generation).toBe(1);
    await store.flush();
    expect(store.generation).toBe(1);
  });

  it('picks up a publish made while a rebuild is running with a following rebuild', async () => {
    const { store, clock } = newStore();
    store.publish('a', [gauge(cpu, Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`h${i}`, i])))]);
    const first = store.flush();
    store.publish('b', [gauge(mem, { late: 1 })]);
    await first;
    expect(store.generation).toBe(1);
    expect(text(store)).not.toContain('late');
    expect(clock.pending()).toBe(1);
    clock.advance(200);
    await store.whenIdle();
    expect(store.generation).toBe(2);
    expect(text(store)).toContain('demo_memory_bytes{host="late"} 1');
  });

  it('builds on another thread: the event loop keeps turning during a large rebuild', async () => {
    const { store } = newStore();
    const turnsPerRebuild: number[] = [];
    // A rebuild on this thread would run in one go, the loop turning once at most meanwhile,
    // every time. On the builder thread the loop turns freely, unless a busy machine gives it no
    // core until the builder is done (as on two loaded cores once): a few tries, one must show it.
    for (let round = 0; round < 5 && !((turnsPerRebuild.at(-1) ?? 0) > 10); round++) {
      store.publish('a', [gauge(cpu, Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`h${i}`, i + round])))]);
      turnsPerRebuild.push(await loopTurnsWhile(store.flush()));
    }
    expect(store.generation).toBe(turnsPerRebuild.length);
    expect(store.snapshot().series).toBe(200_000);
    expect(Math.max(...turnsPerRebuild)).toBeGreaterThan(10);
  });

  it('stops scheduling after close', async () => {
    const { store, clock } = newStore();
    await store.close();
    store.publish('a', [gauge(cpu, { a: 1 })]);
    expect(clock.pending()).toBe(0);
    await store.flush();
    expect(store.generation).toBe(1);
  });

  it.each([
    [{ debounceMs: -1 }, /debounceMs must be a finite number >= 0/],
    [{ maxDelayMs: NaN }, /maxDelayMs must be a finite number >= 0/],
  ])('rejects bad options %o', (options, message) => {
    expect(() => new MetricStore(options)).toThrow(message);
  });
});

describe('MetricStore snapshot', () => {
  it('keeps a compressed data part that decodes to the raw part, for both formats', async () => {
    const { store } = newStore();
    store.publish('g', everyType);
    await store.flush();
    for (const part of [store.snapshot().text, store.snapshot().openMetrics]) {
      const body = gunzipSync(Buffer.concat(gzipMember(part, await compressTail(Buffer.from('# EOF\n')))));
      expect(body.toString()).toBe(`${joinBody(part).toString()}# EOF\n`);
    }
  });

  // With a timestamped sample in a group, its families' lines differ between the formats and
  // are laid out in group order; without, large families are laid out as runs of groups.
  it.each([true, false])('keeps both bodies and their compressed data right through incremental rebuilds of large families (timestamps: %s)', async (stamped) => {
    const hosts = (salt: number, from: number, to: number): FamilySamples[] => [
      gauge(cpu, Object.fromEntries(Array.from({ length: to - from }, (_, i) => [`host-${from + i}.example.com`, (from + i) * salt]))),
      { spec: { name: 'demo_requests_total', type: 'counter', help: 'Requests.' }, samples: [{ labels: { part: String(from) }, value: salt }] },
      {
        spec: { ...mem, type: 'gauge' },
        samples: Array.from({ length: 200 }, (_, i) => ({ labels: { host: `m${from}-${i}` }, value: i, ...(stamped && i % 50 === 0 ? { timestampMs: 1_795_000_000_000 + salt } : {}) })),
      },
    ];
    const unchanging = gauge({ name: 'demo_static_bytes', type: 'gauge', help: 'Never changes.' }, Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`static-${i}`, i])));
    const { store } = newStore();
    store.publish('static', [unchanging]);
    for (let g = 0; g < 20; g++) store.publish(`g${String(g).padStart(2, '0')}`, hosts(1, g * 1000, g * 1000 + 1000));
    await store.flush();
    const check = async (): Promise<void> => {
      for (const part of [store.snapshot().text, store.snapshot().openMetrics]) {
        expect(part.deflated.length).toBeGreaterThan(0);
        const body = gunzipSync(Buffer.concat(gzipMember(part, await compressTail(Buffer.from('tail 1\n')))));
        expect(body.toString()).toBe(`${joinBody(part).toString()}tail 1\n`);
      }
    };
    await check();
    expect(store.snapshot().text.length).toBeGreaterThan(1_000_000);
    store.publish('g07', hosts(3, 7000, 7500));
    store.retract('g13');
    await store.flush();
    await check();
    // The same content published into a fresh store gives the same bytes.
    const { store: fresh } = newStore();
    fresh.publish('static', [unchanging]);
    for (let g = 0; g < 20; g++) if (g !== 13) fresh.publish(`g${String(g).padStart(2, '0')}`, g === 7 ? hosts(3, 7000, 7500) : hosts(1, g * 1000, g * 1000 + 1000));
    await fresh.flush();
    if (stamped) {
      expect(text(store)).toBe(text(fresh));
      expect(openMetrics(store)).toBe(openMetrics(fresh));
      expect(openMetrics(store)).toContain(`demo_memory_bytes{host="m7000-0"} 0 1795000000.003\n`);
    } else {
      // Runs follow the history of changes: the same lines, family by family, not the same order.
      const families = (body: string): string[][] => body.split(/(?=# HELP )/).map((family) => family.split('\n').sort());
      expect(families(text(store))).toEqual(families(text(fresh)));
      expect(families(openMetrics(store))).toEqual(families(openMetrics(fresh)));
      expect(text(store)).not.toBe(text(fresh));
    }
  });

  it('builds nothing when a republish changes no byte, and says the snapshot holds it', async () => {
    const { store, clock } = newStore();
    const seen: [number, number][] = [];
    store.onSnapshot((snapshot) => seen.push([snapshot.generation, snapshot.capturedAtMs]));
    store.publish('a', [gauge(cpu, { a: 1 })]);
    await store.flush();
    clock.advance(5_000);
    store.publish('a', [gauge(cpu, { a: 1 })]);
    await store.flush();
    expect(store.generation).toBe(1);
    expect(seen).toEqual([
      [1, clock.now() - 5_000],
      [1, clock.now()],
    ]);
    store.publish('a', [gauge(cpu, { a: 2 })]);
    await store.flush();
    expect(store.generation).toBe(2);
  });

  it('records render time, series and body sizes in its registry', async () => {
    const registry = new Registry();
    const { store } = newStore({ registry });
    store.publish('g', [gauge(cpu, { a: 1, b: 2 })]);
    await store.flush();
    const metrics = await registry.metrics();
    expect(metrics).toContain('monapi_exporter_series 2');
    expect(metrics).toMatch(/monapi_exporter_render_duration_seconds \d/);
    expect(metrics).toContain(`monapi_exporter_exposition_size_bytes{format="text",encoding="identity"} ${store.snapshot().text.length}`);
  });

  it('hands its chunks to the serving threads\' ports once asked, and then holds no bytes of the bodies itself', async () => {
    const { store } = newStore();
    store.publish('a', [gauge(cpu, { a: 1, b: 2 }), gauge(mem, { a: 10 })]);
    await store.flush();
    const held = store.snapshot();
    expect(held.bodiesHeld).toBe(true);
    const listen = (): { inbox: SnapshotInbox; port: MessagePort } => {
      const channel = new MessageChannel();
      const inbox = new SnapshotInbox();
      channel.port2.on('message', (message: ChunksMessage) => inbox.chunksArrived(message.build, message.chunks));
      store.deliverChunksTo(channel.port1);
      return { inbox, port: channel.port2 };
    };
    const first = listen();
    try {
      const moved = store.snapshot();
      expect([moved.bodiesHeld, moved.text.pieces.length, moved.text.length, moved.text.crc32]).toEqual([false, 0, held.text.length, held.text.crc32]);
      await expect(buildScrapeBody(store, new Registry(), negotiate('text/plain', undefined))).rejects.toThrow('held by the serving threads');
      // Every chunk of the last build came to the port: the snapshot it shows can be served.
      first.inbox.snapshotArrived(layoutOf(moved));
      await vi.waitFor(() => expect(first.inbox.current?.generation).toBe(moved.generation));

      store.publish('a', [gauge(cpu, { a: 3, b: 2 }), gauge(mem, { a: 10 })]);
      store.publish('b', [gauge(cpu, { c: 4 })]);
      await store.flush();
      const next = store.snapshot();
      expect([next.generation, next.bodiesHeld, next.text.pieces.length, next.openMetrics.deflated.length]).toEqual([moved.generation + 1, false, 0, 0]);
      first.inbox.snapshotArrived(layoutOf(next));
      const second = listen();
      try {
        second.inbox.snapshotArrived(layoutOf(next));
        const { store: fresh } = newStore();
        fresh.publish('a', [gauge(cpu, { a: 3, b: 2 }), gauge(mem, { a: 10 })]);
        fresh.publish('b', [gauge(cpu, { c: 4 })]);
        await fresh.flush();
        for (const { inbox } of [first, second]) {
          await vi.waitFor(() => expect(inbox.current?.generation).toBe(next.generation));
          const served = inbox.current!;
          expect(joinBody(served.text).toString()).toBe(text(fresh));
          expect(joinBody(served.openMetrics).toString()).toBe(openMetrics(fresh));
          expect(crc32(joinBody(served.text))).toBe(next.text.crc32);
          const body = gunzipSync(Buffer.concat(gzipMember(served.text, await compressTail(Buffer.from('tail\n')))));
          expect(body.toString()).toBe(`${text(fresh)}tail\n`);
        }
      } finally {
        second.port.close();
      }
    } finally {
      first.port.close();
    }
  });

  it('hands a port opened while a build is on its way every chunk of that build', async () => {
    const { store } = newStore();
    store.publish('a', [gauge(cpu, { a: 1, b: 2 })]);
    await store.flush();
    store.publish('a', [gauge(cpu, { a: 5, b: 2 })]);
    const building = store.flush();
    // The build request went to the builder first: its reply still carries the chunks, which this thread no longer keeps.
    const channel = new MessageChannel();
    const inbox = new SnapshotInbox();
    channel.port2.on('message', (message: ChunksMessage) => inbox.chunksArrived(message.build, message.chunks));
    store.deliverChunksTo(channel.port1);
    try {
      await building;
      const snapshot = store.snapshot();
      expect([snapshot.generation, snapshot.bodiesHeld, snapshot.text.pieces.length]).toEqual([2, false, 0]);
      inbox.snapshotArrived(layoutOf(snapshot));
      await vi.waitFor(() => expect(inbox.current?.generation).toBe(2));
      expect(joinBody(inbox.current!.text).toString()).toBe('# HELP demo_cpu_ratio CPU use.\n# TYPE demo_cpu_ratio gauge\ndemo_cpu_ratio{host="a"} 5\ndemo_cpu_ratio{host="b"} 2\n');
    } finally {
      channel.port2.close();
    }
  });

  it('reports whether it holds a family', () => {
    const { store } = newStore();
    store.publish('g', [gauge(cpu, { a: 1 })]);
    expect(store.hasFamily('demo_cpu_ratio')).toBe(true);
    expect(store.hasFamily('demo_memory_bytes')).toBe(false);
  });
});

describe('MetricStore with opt-in sample timestamps', () => {
  it('writes milliseconds in the text format and seconds in OpenMetrics, and nothing when absent', async () => {
    const { store } = newStore();
    store.publish('a', [
      {
        spec: { ...cpu, type: 'gauge' },
        samples: [
          { labels: { host: 'plain' }, value: 0.5 },
          { labels: { host: 'stamped' }, value: 0.25, timestampMs: 1_795_000_000_123 },
        ],
      },
    ]);
    store.publish('b', [gauge(mem, { other: 7 })]);
    await store.flush();
    expect(text(store)).toContain('demo_cpu_ratio{host="plain"} 0.5\n');
    expect(text(store)).toContain('demo_cpu_ratio{host="stamped"} 0.25 1795000000123\n');
    expect(openMetrics(store)).toContain('demo_cpu_ratio{host="plain"} 0.5\n');
    expect(openMetrics(store)).toContain('demo_cpu_ratio{host="stamped"} 0.25 1795000000.123\n');
    expect(openMetrics(store)).toContain('demo_memory_bytes{host="other"} 7\n');
    expect(renderText([{ spec: { ...cpu, type: 'gauge' }, samples: [{ labels: {}, value: 1, timestampMs: 2000 }] }])).toContain('demo_cpu_ratio 1 2000\n');
    expect(renderOpenMetrics([{ spec: { ...cpu, type: 'gauge' }, samples: [{ labels: {}, value: 1, timestampMs: 2000 }] }])).toContain('demo_cpu_ratio 1 2\n');
  });
});

/** How many turns the event loop made while `work` was pending. */
async function loopTurnsWhile(work: Promise<void>): Promise<number> {
  let turns = 0;
  let turning = true;
  const turn = (): void => {
    turns++;
    if (turning) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    await work;
  } finally {
    turning = false;
  }
  return turns;
}
