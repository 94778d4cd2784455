import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FamilySamples } from '../../exposition/model.js';
import { renderText } from '../../exposition/render-text.js';
import { runSuccessivePolls } from '../../../test/support/family-lines.js';
import type { AlertEvent } from './decode.js';
import {
  ALERT_FAMILIES,
  DEFAULT_ALERTS_LIMIT,
  EMPTY_ALERTS_STATE,
  mapRecentAlerts,
  RECENT_IDS_KEPT,
  type AlertsMapResult,
  type AlertsState,
} from './map.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

/** Event with id n, n minutes after T0; website_down of site 40001 unless overridden. */
function ev(n: number, overrides: Partial<AlertEvent> = {}): AlertEvent {
  return {
    type: 'website_down',
    id: n,
    source_id: '40001',
    source_name: 'shop.example.com',
    occurred_at: new Date(T0 + n * 60_000).toISOString(),
    ...overrides,
  };
}

const rule = (n: number, overrides: Partial<AlertEvent> = {}) =>
  ev(n, { type: 'host_alert', source_id: '701', source_name: 'cpu high', ...overrides });

const SITE = 'account="prod",event_type="website_down",source_id="40001",source_name="shop.example.com"';
const RULE = 'account="prod",event_type="host_alert",source_id="701",source_name="cpu high"';

function lines(families: readonly FamilySamples[]): string[] {
  return renderText(families)
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** Runs polls, each page newest first as upstream sends it, at the limit the state asks for unless given. */
function runPolls(pages: readonly (readonly AlertEvent[])[], limit?: number, state: AlertsState = EMPTY_ALERTS_STATE): AlertsMapResult[] {
  return runSuccessivePolls(pages, state, (alerts, s) => mapRecentAlerts(alerts, s, { account: 'prod', requestedLimit: limit ?? s.limit }));
}

describe('mapRecentAlerts', () => {
  it.each([
    {
      name: 'first poll: history not counted, its sources start at 0, last event times shown',
      pages: [[rule(3), ev(2), ev(1)]],
      counted: [0],
      want: [
        `monapi_alert_events_total{${SITE}} 0`,
        `monapi_alert_events_total{${RULE}} 0`,
        `monapi_alert_last_event_timestamp_seconds{account="prod",event_type="host_alert"} ${(T0 + 3 * 60_000) / 1000}`,
        `monapi_alert_last_event_timestamp_seconds{account="prod",event_type="website_down"} ${(T0 + 2 * 60_000) / 1000}`,
        'monapi_alert_event_gaps_total{account="prod"} 0',
      ],
    },
    {
      name: 'overlapping pages count each event once',
      pages: [[ev(2), ev(1)], [ev(4), ev(3), ev(2)], [ev(5), ev(4)]],
      counted: [0, 2, 1],
      want: [`monapi_alert_events_total{${SITE}} 3`],
    },
    {
      name: 'an event that arrives late, below the newest seen id, is counted once',
      pages: [[ev(10)], [ev(12), ev(10)], [ev(12), ev(11), ev(10)], [ev(12), ev(11)]],
      counted: [0, 1, 1, 0],
      want: [`monapi_alert_events_total{${SITE}} 2`],
    },
    {
      name: 'a source first seen after the first poll is held at 0 for one poll',
      pages: [[ev(1)], [rule(2), ev(1)]],
      counted: [0, 1],
      want: [`monapi_alert_events_total{${RULE}} 0`, `monapi_alert_events_total{${SITE}} 0`],
    },
    {
      name: '…and shows its count from the poll after',
      pages: [[ev(1)], [rule(2), ev(1)], [rule(3), rule(2)]],
      counted: [0, 1, 1],
      want: [`monapi_alert_events_total{${RULE}} 2`],
    },
    {
      name: 'events older than the first page are history even if they show up later',
      pages: [[ev(5), ev(4)], [ev(6), ev(5), ev(4), ev(3)]],
      counted: [0, 1],
      want: [`monapi_alert_events_total{${SITE}} 1`],
    },
    {
      name: 'an empty first poll: every later event counts; a renamed source is a new series',
      pages: [[], [ev(1), ev(2, { source_name: 'renamed' })]],
      counted: [0, 2],
      want: [
        `monapi_alert_events_total{${SITE}} 0`,
        'monapi_alert_events_total{account="prod",event_type="website_down",source_id="40001",source_name="renamed"} 0',
      ],
    },
    {
      name: 'the two kinds number their events independently: the same id of each is two events',
      pages: [[ev(1), rule(1)], [ev(2), rule(2), ev(1), rule(1)], [ev(3), rule(3), ev(2), rule(2)]],
      counted: [0, 2, 2],
      want: [`monapi_alert_events_total{${SITE}} 2`, `monapi_alert_events_total{${RULE}} 2`],
    },
    {
      name: 'an event without a host (account wide) is counted; one without a source gets empty labels',
      pages: [[rule(1)], [{ type: 'host_alert', id: 2 }, rule(1)]],
      counted: [0, 1],
      want: ['monapi_alert_events_total{account="prod",event_type="host_alert",source_id="",source_name=""} 0'],
    },
    {
      name: 'an event of a type the full first page lacked, older than that page, is history',
      pages: [[ev(11), ev(10)], [rule(1, { occurred_at: new Date(T0).toISOString() }), ev(12), ev(11)]],
      counted: [0, 1],
      want: [`monapi_alert_events_total{${SITE}} 1`, `monapi_alert_events_total{${RULE}} 0`],
      limit: 2,
    },
    {
      name: 'an id repeated within one page counts once; an empty page keeps everything',
      pages: [[ev(1)], [ev(2), ev(2)], []],
      counted: [0, 1, 0],
      want: [`monapi_alert_events_total{${SITE}} 1`, `monapi_alert_last_event_timestamp_seconds{account="prod",event_type="website_down"} ${(T0 + 2 * 60_000) / 1000}`],
    },
  ])('$name', ({ pages, counted, want, ...rest }) => {
    const results = runPolls(pages, 'limit' in rest ? rest.limit : undefined);
    expect(results.map((r) => r.counted)).toEqual(counted);
    const last = results.at(-1);
    if (!last) throw new Error('no polls');
    const got = lines(last.families);
    for (const line of want) expect(got).toContain(line);
  });
});

describe('mapRecentAlerts gaps', () => {
  it.each([
    { name: 'full page overlapping what was seen: no gap', pages: [[ev(2), ev(1)], [ev(3), ev(2)]], limit: 2, gaps: [false, false] },
    { name: 'full page entirely newer: gap', pages: [[ev(2), ev(1)], [ev(5), ev(4)]], limit: 2, gaps: [false, true] },
    { name: 'page newer but not full: no gap', pages: [[ev(2), ev(1)], [ev(5), ev(4)]], limit: 3, gaps: [false, false] },
    { name: 'first poll full: not a gap', pages: [[ev(2), ev(1)]], limit: 2, gaps: [false] },
  ])('$name', ({ pages, limit, gaps }) => {
    const results = runPolls(pages, limit);
    expect(results.map((r) => r.gap)).toEqual(gaps);
    const last = results.at(-1);
    expect(lines(last?.families ?? [])).toContain(`monapi_alert_event_gaps_total{account="prod"} ${gaps.filter(Boolean).length}`);
  });

  it('doubles the limit after a gap, up to 500, and returns to the default when quiet', () => {
    const full = (from: number, n: number) => Array.from({ length: n }, (_, i) => ev(from + n - 1 - i));
    let state = runPolls([[ev(1)]])[0]?.state ?? EMPTY_ALERTS_STATE;
    const limits: number[] = [];
    for (let round = 0; round < 4; round++) {
      const [result] = runPolls([full(1000 * (round + 1), state.limit)], undefined, state);
      if (!result) throw new Error('no result');
      state = result.state;
      limits.push(state.limit);
    }
    expect(limits).toEqual([200, 400, 500, 500]);
    const [quiet] = runPolls([[ev(9000)]], undefined, state);
    expect(quiet?.state.limit).toBe(DEFAULT_ALERTS_LIMIT);
  });
});

describe('mapRecentAlerts bounded memory', () => {
  it('keeps at most RECENT_IDS_KEPT ids and raises the floor past the ones it forgets', () => {
    const many = Array.from({ length: 600 }, (_, i) => ev(600 - i));
    const [, second] = runPolls([[ev(0)], many], 600);
    expect(second?.state.seen.get('website_down')?.recentIds).toHaveLength(RECENT_IDS_KEPT);
    expect(second?.state.seen.get('website_down')?.floor).toBe(600 - RECENT_IDS_KEPT);
    // A forgotten id shown again is not counted twice.
    const [third] = runPolls([[ev(1)]], 100, second?.state);
    expect(third?.counted).toBe(0);
  });
});

describe('src/sources/alerts/metrics.md', () => {
  it('has one row per family, with the type and unit the code gives it', () => {
    const doc = readFileSync(new URL('./metrics.md', import.meta.url), 'utf8');
    const rows = doc.split('\n').filter((line) => line.startsWith('| monapi_'));
    const specs = Object.values(ALERT_FAMILIES);
    expect(rows.map((row) => row.split(' | ')[0]?.slice(2)).sort()).toEqual(specs.map((s) => s.name).sort());
    for (const spec of specs) expect(rows).toContainEqual(expect.stringContaining(`| ${spec.name} | ${spec.type} | ${spec.unit ?? ''} |`));
  });
});
