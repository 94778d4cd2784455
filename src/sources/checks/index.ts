import { decodeChecks, encodeChecks } from '../../state/codecs.js';
import { GraceMap } from '../shared/grace.js';
import { detailsOf, familyNames, groupName, type SourceContext, type WebsiteSource } from '../types.js';
import { exactCertExpiryMs } from '../website-summary/map.js';
import { CHECK_FAMILIES, checksCadenceMs, DEFAULT_CHECK_BUCKETS, EMPTY_CHECKS_STATE, mapChecks, nextChecksQuery, type ChecksState } from './map.js';

/**
 * `/websites/{id}/checks`, once per selected website: each new check counted once into
 * counters and histograms, and the newest check's facts as gauges. One request per run;
 * each asks only for the checks since the last one counted. A website that leaves the list
 * keeps its cursor and counters for `counter_grace`, so one that comes back continues them.
 */
export function createChecksSource(ctx: SourceContext): WebsiteSource {
  let graceMap: GraceMap<string, ChecksState> | undefined;
  // Built on first use, like the series source's: some tests build sources from a partial context.
  const statesOf = () => (graceMap ??= new GraceMap(ctx.account.counterGraceMs));
  const summaries = () => detailsOf(ctx.inventory).websites;
  const group = (key: string) => groupName('checks', ctx.account.name, key);
  // Kept with the state, so restored counters can go on /metrics under the website's label before its first poll.
  const names = new Map<string, string>();
  let shownFromState: Set<string> | undefined;

  return {
    name: 'checks',
    toggle: 'checks',
    families: familyNames(CHECK_FAMILIES),
    scope: 'website',
    priority: 'bulk',
    cadenceMs: (website) => checksCadenceMs(ctx.account.cadenceMs.checks, website.check_interval_seconds),
    requestsPerRun: () => 1,
    async poll(website, signal) {
      if (shownFromState) {
        for (const id of shownFromState) if (!ctx.inventory.websites.has(Number(id))) ctx.sink.retract(group(id));
        shownFromState = undefined;
      }
      const key = String(website.id);
      names.set(key, website.name);
      statesOf().sweep(ctx.clock.now());
      const previous = statesOf().get(key) ?? EMPTY_CHECKS_STATE;
      const { value } = await ctx.client.checks(website.id, nextChecksQuery(previous, ctx.clock.now()), 'bulk');
      if (signal.aborted) return;
      const result = mapChecks(value, previous, {
        account: ctx.account.name,
        websiteId: website.id,
        websiteName: website.name,
        buckets: ctx.exporter.checkBuckets,
        certExpiresAtMs: exactCertExpiryMs(summaries().get(website.id)),
      });
      statesOf().set(key, result.state);
      ctx.sink.publish(group(key), result.families);
      if (result.behind) {
        ctx.log.info(
          { websiteId: website.id, returned: value.checks.length, inWindow: value.total },
          'more website checks are waiting than one page holds; the next polls continue from the newest counted',
        );
      }
    },
    forget(key) {
      shownFromState?.delete(key);
      statesOf().release(key, ctx.clock.now());
      ctx.sink.retract(group(key));
    },
    persist: {
      save: () => [...statesOf().entries()].map(([id, state, releasedAtMs]) => ({ id, state: encodeChecks(state), releasedAtMs: releasedAtMs ?? null, name: names.get(id) ?? null })),
      restore(data) {
        if (!Array.isArray(data)) throw new TypeError('checks state must be a list of websites');
        const buckets = ctx.exporter.checkBuckets ?? DEFAULT_CHECK_BUCKETS;
        const bounds = { ttfb: buckets.ttfb.length, dns: buckets.dnsLookup.length, tls: buckets.tlsHandshake.length };
        const now = ctx.clock.now();
        const restored = (data as { id?: unknown; state?: unknown; releasedAtMs?: unknown; name?: unknown }[]).map((item) => {
          if (typeof item.id !== 'string') throw new TypeError('checks state: a website without an id');
          const name = typeof item.name === 'string' ? item.name : undefined;
          return { id: item.id, state: decodeChecks(item.state, bounds), releasedAtMs: typeof item.releasedAtMs === 'number' ? Math.min(item.releasedAtMs, now) : now, name };
        });
        for (const { id, state, releasedAtMs } of restored) statesOf().restoreReleased(id, state, releasedAtMs);
        // Counters on /metrics now, not one website at a time as the first polls come in (a state saved without names waits for them).
        shownFromState = new Set();
        for (const { id, state, name } of restored) {
          if (name === undefined || state.cursor === undefined) continue;
          names.set(id, name);
          const empty = { website_id: Number(id), total: undefined, checks: [] };
          try {
            ctx.sink.publish(group(id), mapChecks(empty, state, { account: ctx.account.name, websiteId: Number(id), websiteName: name, buckets: ctx.exporter.checkBuckets }).families);
            shownFromState.add(id);
          } catch {
            // Shown early or not at all: the state is taken either way, and the first poll publishes it.
          }
        }
      },
    },
  };
}

