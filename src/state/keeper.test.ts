import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { MemorySink } from '../../test/support/sim-harness.js';
import type { FamilySamples } from '../exposition/model.js';
import { FakeClock } from '../lib/clock.js';
import { StateKeeper } from './keeper.js';

const dir = mkdtempSync(join(tmpdir(), 'monapi-keeper-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const family = (value: number): FamilySamples[] => [{ spec: { name: 'monapi_x_total', type: 'counter', help: 'x' }, samples: [{ labels: { account: 'a' }, value }] }];

function keeperFor(path: string, total: { value: number }) {
  const clock = new FakeClock();
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const registry = new Registry();
  const keeper = new StateKeeper({ path, clock, log, registry, collect: () => ({ a: { baseUrl: 'u', sources: { x: total.value } } }) });
  const store = new MemorySink();
  return { clock, keeper, store, sink: keeper.gate(store), lines, registry };
}

describe('StateKeeper', () => {
  it('publishes only after a save that holds the state behind the publication', async () => {
    const path = join(dir, 'gate.json');
    const total = { value: 5 };
    const { keeper, store, sink } = keeperFor(path, total);
    sink.publish('x/a', family(5));
    expect(store.published.size).toBe(0);
    expect(sink.groups('x/')).toEqual(['x/a']);
    await keeper.saveNow();
    expect(store.lines('x/a')).toEqual(['monapi_x_total{account="a"} 5']);
    expect((JSON.parse(readFileSync(path, 'utf8')) as { accounts: { a: { sources: { x: number } } } }).accounts.a.sources.x).toBe(5);
    // A retraction waits too, and replaces the publication before it.
    sink.publish('x/a', family(6));
    sink.retract('x/a');
    expect(sink.groups('x/')).toEqual([]);
    expect(store.lines('x/a')).toHaveLength(1);
    await keeper.saveNow();
    expect(store.published.has('x/a')).toBe(false);
  });

  it('saves on its interval only when something waits, and once more on stop', async () => {
    const path = join(dir, 'interval.json');
    const { clock, keeper, sink, registry } = keeperFor(path, { value: 1 });
    const saves = async () => (await registry.getSingleMetric('monapi_exporter_state_saves_total')?.get())?.values[0]?.value ?? 0;
    keeper.start();
    clock.advance(20_000);
    expect(await saves()).toBe(0);
    sink.publish('x/a', family(1));
    clock.advance(5_000);
    await new Promise((r) => setTimeout(r, 100));
    while (keeper.busy()) await new Promise((r) => setTimeout(r, 10));
    expect(await saves()).toBe(1);
    await keeper.stop();
    expect(await saves()).toBe(2);
  });

  it('a save that fails releases what waited anyway, counts the failure and logs it once', async () => {
    const { keeper, store, sink, lines, registry } = keeperFor(join(dir, 'no-such-folder', 'state.json'), { value: 1 });
    sink.publish('x/a', family(1));
    await keeper.saveNow();
    sink.publish('x/a', family(2));
    await keeper.saveNow();
    expect(store.lines('x/a')).toEqual(['monapi_x_total{account="a"} 2']);
    expect((await registry.getSingleMetric('monapi_exporter_state_save_failures_total')?.get())?.values[0]?.value).toBe(2);
    expect(lines.filter((l) => l.includes('cannot write the state file'))).toHaveLength(1);
  });

  it('saves at once when a budget asks for a lease, and at the next interval after a budget spent; tells the budgets after each save, written or failed', async () => {
    const path = join(dir, 'lease.json');
    const { clock, keeper, registry } = keeperFor(path, { value: 1 });
    const saves = async () => (await registry.getSingleMetric('monapi_exporter_state_saves_total')?.get())?.values[0]?.value ?? 0;
    let told = 0;
    keeper.lease.onSaved(() => told++);
    keeper.lease.request();
    keeper.lease.request();
    while (told === 0) await new Promise((r) => setTimeout(r, 10));
    expect(await saves()).toBe(1);
    // A spent token makes the next regular save happen even with nothing else to save.
    keeper.start();
    keeper.lease.touch();
    clock.advance(5_000);
    while (told < 2) await new Promise((r) => setTimeout(r, 10));
    expect(await saves()).toBe(2);
    clock.advance(5_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(await saves()).toBe(2);
    await keeper.stop();
  });

  it('a failing save still tells the budgets: a full disk must not stop polling', async () => {
    const { keeper } = keeperFor(join(dir, 'no-such-folder', 'lease.json'), { value: 1 });
    const told = new Promise<void>((resolve) => keeper.lease.onSaved(resolve));
    keeper.lease.request();
    await told;
  });

  it('writes what the budgets report while the lease being granted is known to them', async () => {
    const path = join(dir, 'lease-collect.json');
    const clock = new FakeClock();
    let seen: number | undefined;
    const keeper: StateKeeper = new StateKeeper({ path, clock, log: pino({ level: 'silent' }), collect: () => ((seen = keeper.lease.writing()), {}) });
    await keeper.saveNow();
    expect(seen).toBe(clock.now() + 15_000);
    expect(keeper.lease.writing()).toBeUndefined();
  });
});
