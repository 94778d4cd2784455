import { afterEach, describe, expect, it } from 'vitest';
import { WEBSITES_ENDPOINT, websitesSource } from '../../../src/sources/websites/index.js';
import { SELECTED_WEBSITES } from '../../../src/sources/websites/topics.js';

/** The websites asked for checks: those selected, less the paused ones. */
const checkedOf = <W extends { readonly enabled?: boolean }>(selected: ReadonlyMap<string, W>) => new Map([...selected].filter(([, w]) => w.enabled !== false));
import { changingClient, startSourceHarness, type SourceHarness } from '../../support/sim-harness.js';

let harness: SourceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const GROUP = 'websites/sim';

describe('websites source against the simulator', () => {
  it('publishes every website and puts the filtered ones in the inventory', async () => {
    harness = await startSourceHarness({ accountYaml: '    websites:\n      exclude_names: ["www.*"]\n' });
    const expected = harness.simAccount.websites(harness.clock.now());
    expect(expected.length).toBe(6);

    await harness.unitSource(websitesSource).poll(new AbortController().signal);

    const lines = harness.sink.lines(GROUP);
    for (const site of expected) {
      expect(lines).toContain(`monapi_website_info{account="sim",website_id="${site.id}",website="${site.name}",url="${site.url}"} 1`);
      expect(lines).toContain(`monapi_website_checks_24h{account="sim",website_id="${site.id}",website="${site.name}"} ${site.checks_24h}`);
    }
    const excluded = expected.filter((w) => w.name.startsWith('www.')).map((w) => w.id);
    expect(excluded.length).toBeGreaterThan(0);
    // A paused website is exported but gets no checks requests: it has no new checks.
    const paused = expected.filter((w) => !w.enabled).map((w) => w.id);
    expect(paused.length).toBeGreaterThan(0);
    for (const id of paused) expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^monapi_website_enabled\\{account="sim",website_id="${id}",.*\\} 0$`)));
    expect([...checkedOf(harness.read(SELECTED_WEBSITES)).values()].map((w) => w.id).sort()).toEqual(expected.map((w) => w.id).filter((id) => !excluded.includes(id) && !paused.includes(id)).sort());
    expect(harness.topicChanges()).toBe(1);
  });

  it('drops a website that leaves the list from the series and the inventory', async () => {
    harness = await startSourceHarness();
    const hidden = new Set<number>();
    const HidingClient = changingClient(WEBSITES_ENDPOINT, (list) => {
      const websites = list.websites.filter((w) => !hidden.has(w.id));
      return { websites, total: websites.length };
    });
    const source = harness.unitSource(websitesSource, harness.client(HidingClient));
    await source.poll(new AbortController().signal);
    const [first] = harness.simAccount.websites(harness.clock.now());
    if (!first) throw new Error('no websites');
    const idLabel = `website_id="${first.id}"`;
    expect(harness.sink.lines(GROUP).some((l) => l.includes(idLabel))).toBe(true);
    expect(checkedOf(harness.read(SELECTED_WEBSITES)).has(String(first.id))).toBe(true);

    hidden.add(first.id);
    harness.clock.advance(60_000);
    await source.poll(new AbortController().signal);
    expect(harness.sink.lines(GROUP).some((l) => l.includes(idLabel))).toBe(false);
    expect(checkedOf(harness.read(SELECTED_WEBSITES)).has(String(first.id))).toBe(false);
    const active = harness.simAccount.websites(harness.clock.now()).filter((w) => w.enabled);
    expect(checkedOf(harness.read(SELECTED_WEBSITES)).size).toBe(active.length - 1);
    expect(harness.topicChanges()).toBe(2);
  });
});
