import { afterEach, describe, expect, it } from 'vitest';
import type { Website } from '../../../src/sources/websites/decode.js';
import { startSourceHarness, type SourceHarness } from '../../support/sim-harness.js';
import { checksSource } from '../../../src/sources/checks/index.js';

let harness: SourceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const signal = () => new AbortController().signal;

/** The simulator's website as the websites source puts it in the inventory. */
const target = (site: { id: number; name: string; url: string }): Website => ({ id: site.id, name: site.name, url: site.url });

function counterValue(lines: readonly string[], prefix: string): number {
  const line = lines.find((l) => l.startsWith(prefix));
  if (!line) throw new Error(`no line starting with ${prefix} in\n${lines.join('\n')}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('checks source against the simulator', () => {
  it('counts each check once across polls and follows the newest check', async () => {
    harness = await startSourceHarness();
    const h = harness;
    const [site] = h.simAccount.websites(h.clock.now());
    if (!site) throw new Error('no websites');
    const source = h.targetSource<Website>(checksSource);
    const group = `checks/sim/${site.id}`;
    const id = `account="sim",website_id="${site.id}",website="${site.name}"`;

    await source.poll(target(site), signal());
    const startMs = h.clock.now();
    let lines = h.sink.lines(group);
    expect(counterValue(lines, `monapi_website_checks_total{${id},result="success"}`)).toBe(0);
    expect(counterValue(lines, `monapi_website_checks_total{${id},result="failure"}`)).toBe(0);
    expect(lines).toContain(`monapi_website_check_timestamp_seconds{${id}} ${Date.parse(site.last_checked_at ?? '') / 1000}`);

    // Three hours later: every check since the first poll's newest is counted, once.
    h.clock.advance(3 * 3_600_000);
    await source.poll(target(site), signal());
    const expected = h.simAccount.checkCount(site.id, Date.parse(site.last_checked_at ?? '') + 1, h.clock.now());
    expect(expected).toBeGreaterThan(30);
    lines = h.sink.lines(group);
    const success = counterValue(lines, `monapi_website_checks_total{${id},result="success"}`);
    const failure = counterValue(lines, `monapi_website_checks_total{${id},result="failure"}`);
    expect(success + failure).toBe(expected);
    expect(counterValue(lines, `monapi_website_check_ttfb_seconds_count{${id}}`)).toBe(success);
    const newest = h.simAccount.checks(site.id, startMs, h.clock.now()).at(-1);
    expect(lines).toContain(`monapi_website_check_timestamp_seconds{${id}} ${Date.parse(newest?.checked_at ?? '') / 1000}`);
    expect(lines).toContain(`monapi_website_check_status_code{${id}} ${newest?.status_code}`);

    // Polled again at once: nothing new, nothing counted twice.
    await source.poll(target(site), signal());
    lines = h.sink.lines(group);
    expect(counterValue(lines, `monapi_website_checks_total{${id},result="success"}`) + counterValue(lines, `monapi_website_checks_total{${id},result="failure"}`)).toBe(expected);
  });

  it('polls no more often than the website is checked', async () => {
    harness = await startSourceHarness();
    const source = harness.targetSource<Website>(checksSource);
    const base = { id: 1, name: 'x', url: 'https://x/' } satisfies Website;
    expect(source.cadence({ ...base, check_interval: 300 }).everyMs).toBe(300_000);
    expect(source.cadence(base).everyMs).toBe(harness.account.sources.checks?.cadenceMs.checks);
    expect(source.requestsPerRun(base)).toBe(1);
  });

  it('forgets a website: its series are retracted; back within counter_grace it continues, later it starts afresh', async () => {
    harness = await startSourceHarness();
    const h = harness;
    const [site] = h.simAccount.websites(h.clock.now());
    if (!site) throw new Error('no websites');
    const source = h.targetSource<Website>(checksSource);
    const group = `checks/sim/${site.id}`;
    const id = `account="sim",website_id="${site.id}",website="${site.name}"`;
    const successes = () => counterValue(h.sink.lines(group), `monapi_website_checks_total{${id},result="success"}`);
    await source.poll(target(site), signal());
    h.clock.advance(3_600_000);
    await source.poll(target(site), signal());
    const before = successes();
    expect(before).toBeGreaterThan(0);

    source.forget(String(site.id));
    expect(h.sink.groups('checks/')).toEqual([]);

    // Back within the grace period (1 h by default): the counter continues, the checks missed meanwhile included.
    h.clock.advance(30 * 60_000);
    await source.poll(target(site), signal());
    expect(successes()).toBeGreaterThan(before);

    source.forget(String(site.id));
    h.clock.advance(2 * 3_600_000);
    await source.poll(target(site), signal());
    expect(successes()).toBe(0);
  });
});
