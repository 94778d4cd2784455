import { afterEach, describe, expect, it } from 'vitest';
import { createChecksSource } from '../../../src/sources/checks/index.js';
import { detailsOf } from '../../../src/sources/types.js';
import { startSourceHarness, type SourceHarness } from '../../support/sim-harness.js';
import { createWebsitesSource } from '../../../src/sources/websites/index.js';
import { createWebsiteSummarySource } from '../../../src/sources/website-summary/index.js';

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
    await h.source(createWebsitesSource).poll(signal());
    const [site] = h.inventory.websites.values();
    if (!site) throw new Error('no websites');
    const summaries = h.source(createWebsiteSummarySource);
    const checks = h.source(createChecksSource);
    expect(summaries.cadenceMs(site)).toBe(h.account.cadenceMs.websiteSummary);

    await summaries.poll(site, signal());
    const id = `account="sim",website_id="${site.id}",website="${site.name}"`;
    const lines = h.sink.lines(`website_summary/sim/${site.id}`);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^monapi_website_uptime_ratio\\{${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},window="7d"\\} `)));

    const expires = detailsOf(h.inventory).websites.get(site.id)?.tls?.cert_expires_at;
    expect(expires).toBeDefined();
    await checks.poll(site, signal());
    expect(h.sink.lines(`checks/sim/${site.id}`)).toContain(`monapi_website_cert_expiry_timestamp_seconds{${id}} ${Date.parse(expires ?? '') / 1000}`);

    summaries.forget(String(site.id));
    expect(h.sink.groups('website_summary/')).toEqual([]);
    expect(detailsOf(h.inventory).websites.has(site.id)).toBe(false);
  });
});
