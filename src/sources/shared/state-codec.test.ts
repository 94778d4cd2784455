import { describe, expect, it } from 'vitest';
import { CounterTableUpdate, EMPTY_COUNTER_TABLE, counterSamples } from './counter-table.js';
import { decodeCounterTable, encodeCounterTable } from './state-codec.js';

describe('counter tables in the state file', () => {
  it('round-trip, and a row keyed by an older version continues the same series instead of adding one', () => {
    const labels = { account: 'prod', website_id: '7', result: 'success' };
    const update = new CounterTableUpdate(EMPTY_COUNTER_TABLE, false);
    update.add(labels, 5);
    const table = update.finish();
    expect(decodeCounterTable(encodeCounterTable(table))).toEqual(table);

    // The key as 0.1.0 wrote it (JSON of the sorted pairs).
    const old = decodeCounterTable([{ key: JSON.stringify(Object.entries(labels).sort()), labels, value: 5, held: false }]);
    const next = new CounterTableUpdate(old, true);
    next.add({ result: 'success', website_id: '7', account: 'prod' }, 2);
    expect(counterSamples(next.finish())).toEqual([{ labels, value: 7 }]);
  });
});
