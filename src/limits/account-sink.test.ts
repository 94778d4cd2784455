import { describe, expect, it } from 'vitest';
import { MemorySink } from '../../test/support/sim-harness.js';
import type { FamilySamples } from '../exposition/model.js';
import { LimitedAccountSink, type LimitReason } from './account-sink.js';

const gauge = (name: string, n: number, labels: Record<string, string> = {}): FamilySamples => ({
  spec: { name, type: 'gauge', help: 'h' },
  samples: Array.from({ length: n }, (_, i) => ({ labels: { account: 'a', i: String(i), ...labels }, value: i })),
});

function sinkWith(limits: Partial<{ series: number; metricNameLength: number; labelNameLength: number; labelValueLength: number }>) {
  const store = new MemorySink();
  const dropped: [LimitReason, number][] = [];
  const first: LimitReason[] = [];
  const sink = new LimitedAccountSink(store, { series: 0, metricNameLength: 0, labelNameLength: 0, labelValueLength: 0, ...limits }, {
    dropped: (reason, n) => dropped.push([reason, n]),
    firstDrop: (reason) => first.push(reason),
  });
  const names = (group: string) => (store.published.get(group) ?? []).map((f) => `${f.spec.name}:${f.samples.length}`);
  return { store, sink, dropped, first, names };
}

describe('LimitedAccountSink', () => {
  it('keeps the account within its series limit by dropping whole families, across groups', () => {
    const { sink, dropped, first, names } = sinkWith({ series: 10 });
    sink.publish('g1', [gauge('monapi_a', 4), gauge('monapi_b', 4)]);
    sink.publish('g2', [gauge('monapi_c', 3), gauge('monapi_d', 2)]);
    expect(names('g2')).toEqual(['monapi_d:2']);
    expect(sink.series).toBe(10);
    expect(dropped).toEqual([['series_limit', 3]]);
    // Republishing a group counts its own series once, not twice.
    sink.publish('g1', [gauge('monapi_a', 4), gauge('monapi_b', 4)]);
    expect(names('g1')).toEqual(['monapi_a:4', 'monapi_b:4']);
    sink.publish('g2', [gauge('monapi_c', 3)]);
    expect(first).toEqual(['series_limit']);
    // Retracting frees the room; the next episode is logged again.
    sink.retract('g1');
    sink.publish('g2', [gauge('monapi_c', 3), gauge('monapi_d', 2)]);
    expect(names('g2')).toEqual(['monapi_c:3', 'monapi_d:2']);
    sink.publish('g3', [gauge('monapi_e', 6)]);
    expect(first).toEqual(['series_limit', 'series_limit']);
  });

  it.each([
    ['metric_name_length', { metricNameLength: 10 }, [gauge('monapi_long_name', 2), gauge('monapi_ok', 2)], ['monapi_ok:2'], 2],
    ['label_name_length', { labelNameLength: 8 }, [gauge('monapi_a', 1), gauge('monapi_b', 2, { much_too_long: 'x' })], ['monapi_a:1'], 2],
    ['label_value_length', { labelValueLength: 1 }, [{ ...gauge('monapi_a', 12) }], ['monapi_a:10'], 2],
  ] as const)('drops samples over the %s, counted, logged once', (reason, limits, families, kept, n) => {
    const { sink, dropped, first, names } = sinkWith(limits);
    sink.publish('g', families);
    sink.publish('g', families);
    expect(names('g')).toEqual(kept);
    expect(dropped).toEqual([[reason, n], [reason, n]]);
    expect(first).toEqual([reason]);
  });

  it('passes families within every limit on as they are, without copying their samples', () => {
    const { store, sink, dropped } = sinkWith({ labelNameLength: 8, labelValueLength: 2 });
    const families = [gauge('monapi_a', 12), gauge('monapi_b', 3, { device: 'sd' })];
    for (const family of families) {
      const copyRefused = () => {
        throw new Error('the samples of a family within the limits were copied');
      };
      Object.assign(family.samples, { slice: copyRefused, filter: copyRefused });
    }
    sink.publish('g', families);
    const published = store.published.get('g') ?? [];
    expect(published).toHaveLength(2);
    published.forEach((family, i) => expect(family).toBe(families[i]));
    expect(dropped).toEqual([]);
  });

  it('keeps the samples after one over a label limit', () => {
    const { sink, store, dropped } = sinkWith({ labelValueLength: 1 });
    const family: FamilySamples = {
      spec: { name: 'monapi_a', type: 'gauge', help: 'h' },
      samples: [
        { labels: { i: '1' }, value: 1 },
        { labels: { i: '22' }, value: 2 },
        { labels: { i: '3' }, value: 3 },
      ],
    };
    sink.publish('g', [family]);
    expect(store.published.get('g')?.[0]?.samples.map((sample) => sample.labels.i)).toEqual(['1', '3']);
    expect(dropped).toEqual([['label_value_length', 1]]);
  });

  it('retractAll removes every group the account published, and nothing else', () => {
    const { store, sink } = sinkWith({});
    store.publish('other/x', [gauge('monapi_z', 1)]);
    sink.publish('series/a/1', [gauge('monapi_a', 1)]);
    sink.publish('checks/a/2', [gauge('monapi_b', 1)]);
    sink.retractAll();
    expect([...store.published.keys()]).toEqual(['other/x']);
    expect(sink.series).toBe(0);
  });
});
