import { afterEach, describe, expect, it } from 'vitest';
import { checksSource } from '../../../src/sources/checks/index.js';
import type { Website } from '../../../src/sources/websites/decode.js';
import { startSourceHarness, type SourceHarness } from '../../support/sim-harness.js';
import { websitesSource } from '../../../src/sources/websites/index.js';
import { SELECTED_WEBSITES } from '../../../src/sources/websites/topics.js';

/** The websites asked for checks: those selected, less the paused ones. */
const checkedOf = <W extends { readonly enabled?: boolean }>(selected: ReadonlyMap<string, W>) => new Map([...selected].filter(([, w]) => w.enabled !== false));
import { websiteSummarySource } from '../../../src/sources/website-summary/index.js';
import { WEBSITE_SUMMARIES } from '../../../src/sources/website-summary/topics.js';

let harness: SourceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const signal = () => new AbortController().signal;

describe('website summary against the simulator', () => {
  it('publishes the longer uptime windows and makes the certificate expiry exact', async () => {
    harness = await startSourceHarness({ websites: 2 });
    const h = harness;
    await h.unitSource(websitesSource).poll(signal());
    const [site] = checkedOf(h.read(SELECTED_WEBSITES)).values();
    if (!site) throw new Error('no websites');
    const summaries = h.targetSource<Website>(websiteSummarySource);
    const checks = h.targetSource<Website>(checksSource);
    expect(summaries.cadence(site).everyMs).toBe(h.account.sources.website_summary?.cadenceMs.website_summary);

    await summaries.poll(site, signal());
    const id = `account="sim",website_id="${site.id}",website="${site.name}"`;
    const lines = h.sink.lines(`website_summary/sim/${site.id}`);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^monapi_website_uptime_ratio\\{${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},window="7d"\\} `)));

    const expires = h.read(WEBSITE_SUMMARIES).get(site.id)?.tls?.cert_expires_at;
    expect(expires).toBeDefined();
    await checks.poll(site, signal());
    expect(h.sink.lines(`checks/sim/${site.id}`)).toContain(`monapi_website_cert_expiry_timestamp_seconds{${id},basis="upstream"} ${Date.parse(expires ?? '') / 1000}`);

    summaries.forget(String(site.id));
    expect(h.sink.groups('website_summary/')).toEqual([]);
    expect(h.read(WEBSITE_SUMMARIES).has(site.id)).toBe(false);
  });
});
