import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LayoutEnvelope } from '../../simulator/layouts/layout.js';
import { drive } from '../support/drive.js';

/**
 * The exporter against the simulator in the list layouts of issue 27 (HAL, JSON:API, a
 * `{success, result, result_info}` wrapper, and lists split over pages announced by next links,
 * a Link header, body cursors or page numbers), each combined with the shape sets, within the
 * seed's rate limit. The simulator is the witness: its own list totals and the standard
 * layout's values, not the decoders, say what a complete read is.
 */

const HOSTS = 6;
const WEBSITES = 5;
/** Pages of two items: every list of the world takes at least two pages, the hosts three. */
const PAGE_SIZE = 2;
const RUN_MS = 4 * 60_000;
/**
 * What does not change while the run goes on: the same in every layout, value for value.
 * (Components are counted, not compared: the alt shapes send the agent's own type names.)
 */
const STABLE = /^monapi_(account_|alert_rule_|website_info|website_enabled|website_check_interval|host_info)/;

interface Layout {
  readonly name: string;
  readonly envelope: LayoutEnvelope;
  readonly paged: boolean;
  readonly shapes: 'standard' | 'alt' | 'nested';
}

const LAYOUTS: readonly Layout[] = [
  { name: 'plain, paged', envelope: 'none', paged: true, shapes: 'standard' },
  { name: 'HAL', envelope: 'hal', paged: false, shapes: 'standard' },
  { name: 'HAL, paged', envelope: 'hal', paged: true, shapes: 'standard' },
  { name: 'JSON:API, paged', envelope: 'jsonapi', paged: true, shapes: 'standard' },
  { name: 'result envelope, paged', envelope: 'envelope', paged: true, shapes: 'standard' },
  { name: 'alt shapes, paged', envelope: 'none', paged: true, shapes: 'alt' },
  { name: 'nested shapes in JSON:API, paged', envelope: 'jsonapi', paged: true, shapes: 'nested' },
  { name: 'alt shapes in HAL, paged', envelope: 'hal', paged: true, shapes: 'alt' },
];

interface Run {
  readonly body: string;
  readonly totals: { hosts: number; websites: number; alertRules: number; components: Record<string, number> };
  /** Page numbers served per list (the simulator's count). */
  readonly pages: Record<string, readonly string[]>;
  readonly rateLimited: number;
}

async function run(layout: Layout | undefined): Promise<Run> {
  const driven = await drive({
    simulator: {
      hosts: HOSTS,
      websites: WEBSITES,
      seed: 'layouts-27',
      ...(layout && { shapes: layout.shapes, layout: { envelope: layout.envelope, paged: layout.paged, pageSize: PAGE_SIZE } }),
    },
    config: 'accounts:\n  - name: pro\n    base_url: ${monitoring}\n    api_key_env: PRO_KEY\n',
    env: (sim) => ({ PRO_KEY: sim.keys.pro }),
  });
  try {
    await driven.advance(RUN_MS);
    const body = await driven.scrape();
    const totals = driven.simulator.listTotals(driven.simulator.keys.pro, driven.clock.now());
    const pages = Object.fromEntries(Object.entries(driven.simulator.pageStats().pro ?? {}).map(([list, counts]) => [list, Object.keys(counts?.served ?? {}).sort()]));
    const rateLimited = Object.values(driven.simulator.stats().monitoring).reduce((sum, client) => sum + (client.by_status['429'] ?? 0), 0);
    return { body, totals, pages, rateLimited };
  } finally {
    await driven.stop();
  }
}

const lines = (body: string, pattern: RegExp) => body.split('\n').filter((l) => pattern.test(l)).sort();
const count = (body: string, family: string) => body.split('\n').filter((l) => l.startsWith(`${family}{`)).length;

let baseline: Run;
const runs = new Map<string, Run>();

beforeAll(async () => {
  baseline = await run(undefined);
  for (const layout of LAYOUTS) runs.set(layout.name, await run(layout));
}, 240_000);

afterAll(() => runs.clear());

describe('the baseline, without layouts', () => {
  it('exports every host, website, rule and component of the world', () => {
    expect(count(baseline.body, 'monapi_host_info')).toBe(baseline.totals.hosts);
    expect(baseline.totals.hosts).toBe(HOSTS);
    expect(count(baseline.body, 'monapi_component_info')).toBeGreaterThan(HOSTS);
    expect(lines(baseline.body, STABLE).length).toBeGreaterThan(40);
  });
});

describe.each(LAYOUTS.map((l) => [l.name, l] as const))('in the %s layout', (name) => {
  const got = () => runs.get(name)!;

  it('has every source up, every declared field found, and no list short', () => {
    const body = got().body;
    expect(lines(body, /^monapi_source_up\{/).filter((l) => !l.endsWith(' 1'))).toEqual([]);
    expect(lines(body, /^monapi_decode_field_missing\{.* 1$/)).toEqual([]);
    expect(lines(body, /^monapi_list_incomplete\{/).filter((l) => !l.endsWith(' 0'))).toEqual([]);
    expect(lines(body, /^monapi_up\{account="pro"/)).toEqual(['monapi_up{account="pro"} 1']);
    expect(lines(body, /^monapi_(source_)?up_reason\{/).filter((l) => !l.endsWith(' 0'))).toEqual([]);
  });

  it("exports every item of every list, as many as the simulator's totals", () => {
    const { body, totals } = got();
    expect(count(body, 'monapi_host_info')).toBe(totals.hosts);
    expect(count(body, 'monapi_website_info')).toBe(totals.websites);
    expect(count(body, 'monapi_alert_rule_info')).toBe(totals.alertRules);
    // Components of every host the plan allows (one beyond the Pro plan's limit is not polled).
    const componentsOf = (text: string, uuid: string) => text.split('\n').filter((l) => l.startsWith('monapi_component_info{') && l.includes(`host_uuid="${uuid}"`)).length;
    const polled = Object.entries(totals.components).filter(([uuid]) => componentsOf(baseline.body, uuid) > 0);
    expect(polled.length).toBeGreaterThanOrEqual(HOSTS - 2);
    for (const [uuid, components] of polled) expect(componentsOf(body, uuid), uuid).toBe(components);
  });

  it('gives the same values as the standard layout for what does not change', () => {
    expect(lines(got().body, STABLE)).toEqual(lines(baseline.body, STABLE));
  });

  it('read the later pages, within the rate limit', () => {
    const { pages, rateLimited } = got();
    const layout = LAYOUTS.find((l) => l.name === name)!;
    if (layout.paged) {
      for (const list of ['hosts', 'websites', 'alert-rules']) expect(pages[list], list).toContain('2');
      expect(pages.hosts).toContain('3');
    }
    expect(rateLimited).toBe(0);
  });
});

describe('a list whose later pages fail', () => {
  it('exports what was read and says the list is short on /metrics and /status', async () => {
    const driven = await drive({
      simulator: { hosts: HOSTS, websites: WEBSITES, seed: 'layouts-27', layout: { envelope: 'hal', paged: true, pageSize: PAGE_SIZE, pageFailAfter: 1 } },
      config: 'accounts:\n  - name: pro\n    base_url: ${monitoring}\n    api_key_env: PRO_KEY\n',
      env: (sim) => ({ PRO_KEY: sim.keys.pro }),
    });
    try {
      await driven.advance(2 * 60_000);
      const body = await driven.scrape();
      expect(count(body, 'monapi_host_info')).toBe(PAGE_SIZE);
      expect(lines(body, /^monapi_list_incomplete\{account="pro",source="(hosts|websites|alert_rules)"\}/)).toEqual([
        'monapi_list_incomplete{account="pro",source="alert_rules"} 1',
        'monapi_list_incomplete{account="pro",source="hosts"} 1',
        'monapi_list_incomplete{account="pro",source="websites"} 1',
      ]);
      const status = (await (await fetch(`${driven.exporter.url}/status`, { headers: { accept: 'application/json' } })).json()) as {
        accounts: { sources: { source: string; list?: { incomplete: number; example?: { read: number; announced?: number; reason: string } } }[] }[];
      };
      const hosts = status.accounts[0]?.sources.find((s) => s.source === 'hosts')?.list;
      expect(hosts?.incomplete).toBe(1);
      expect(hosts?.example).toMatchObject({ read: PAGE_SIZE, announced: HOSTS });
      expect(hosts?.example?.reason).toMatch(/^page 2 failed: .*HTTP 503/);
    } finally {
      await driven.stop();
    }
  });
});
