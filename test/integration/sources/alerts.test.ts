import { afterEach, describe, expect, it } from 'vitest';
import { startSourceHarness, type SourceHarness } from '../../support/sim-harness.js';
import { alertsSource } from '../../../src/sources/alerts/index.js';

let harness: SourceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const signal = () => new AbortController().signal;

/** Sum of the values of the lines that start with `prefix`. */
function total(lines: readonly string[], prefix: string): number {
  return lines.filter((l) => l.startsWith(prefix)).reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('alerts source against the simulator', () => {
  it('counts the events after the first poll once each, and not the history', async () => {
    harness = await startSourceHarness();
    const h = harness;
    const source = h.unitSource(alertsSource);
    const startMs = h.clock.now();

    await source.poll(signal());
    let lines = h.sink.lines('alerts/sim');
    expect(h.simAccount.recentAlerts(startMs, 100).length).toBeGreaterThan(0);
    expect(total(lines, 'monapi_alert_events_total{')).toBe(0);
    expect(lines).toContain('monapi_alert_event_gaps_total{account="sim"} 0');

    h.clock.advance(48 * 3_600_000);
    await source.poll(signal());
    // Series born in this poll show 0 until the next one; polling again at once adds nothing new.
    await source.poll(signal());
    const expected = h.simAccount.recentAlerts(h.clock.now(), 500).filter((e) => Date.parse(e.occurred_at) > startMs);
    expect(expected.length).toBeGreaterThan(0);
    lines = h.sink.lines('alerts/sim');
    expect(total(lines, 'monapi_alert_events_total{')).toBe(expected.length);
    const [newest] = expected;
    expect(lines).toContain(`monapi_alert_last_event_timestamp_seconds{account="sim",event_type="${newest?.type}"} ${Date.parse(newest?.occurred_at ?? '') / 1000}`);
  });
});
