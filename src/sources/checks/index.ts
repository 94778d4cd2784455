import { z } from 'zod';
import { list, section, SECOND } from '../../config/schema.js';
import type { SettingsInput } from '../../config/source-spec.js';
import { endpoint, type MonitoringApi } from '../../upstream/monitoring/client.js';
import { GraceMap } from '../shared/grace.js';
import { every, familyNames, groupName, type MonitoringSource, type SourceContext } from '../source.js';
import { exactCertExpiryMs } from '../website-summary/map.js';
import { WEBSITE_SUMMARIES } from '../website-summary/topics.js';
import type { Website } from '../websites/decode.js';
import { SELECTED_WEBSITES } from '../websites/topics.js';
import { CHECK_FIELDS, decodeChecks } from './decode.js';
import { bucketsProblem, CHECK_FAMILIES, checksCadenceMs, DEFAULT_CHECK_BUCKETS, EMPTY_CHECKS_STATE, mapChecks, nextChecksQuery, type CheckBuckets, type ChecksState } from './map.js';
import { decodeChecks as decodeChecksState, encodeChecks } from './state.js';

/** Upper bound of `limit` on `/websites/{id}/checks`. */
export const MAX_CHECKS_LIMIT = 500;

export const CHECKS_ENDPOINT = endpoint('/websites/{id}/checks', decodeChecks, { since: { kind: 'window' }, limit: { kind: 'count', max: MAX_CHECKS_LIMIT } });

function bucketList(fallback: readonly number[]) {
  return list(z.number(), [...fallback]).superRefine((bounds, ctx) => {
    const problem = bucketsProblem(bounds);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/**
 * `/websites/{id}/checks`, once per selected website: each new check counted once into
 * counters and histograms, and the newest check's facts as gauges. One request per run;
 * each asks only for the checks since the last one counted. A website that leaves the list
 * keeps its cursor and counters for `counter_grace`, so one that comes back continues them.
 */
export const checksSource: MonitoringSource<CheckBuckets> = {
  name: 'checks',
  section: 'account',
  toggle: { default: true },
  cadences: { checks: { default: '60s', minMs: 30 * SECOND } },
  needs: { websites: 'the website list says which websites to fetch checks for' },
  exporterKeys: {
    check_buckets: section({
      ttfb: bucketList(DEFAULT_CHECK_BUCKETS.ttfb),
      dns_lookup: bucketList(DEFAULT_CHECK_BUCKETS.dnsLookup),
      tls_handshake: bucketList(DEFAULT_CHECK_BUCKETS.tlsHandshake),
    }),
  },
  settings: ({ exporter }: SettingsInput): CheckBuckets => {
    // The schema above made this key; the loader hands every section over untyped.
    const buckets = (exporter as { check_buckets: { ttfb: number[]; dns_lookup: number[]; tls_handshake: number[] } }).check_buckets;
    return { ttfb: buckets.ttfb, dnsLookup: buckets.dns_lookup, tlsHandshake: buckets.tls_handshake };
  },
  endpoints: [CHECKS_ENDPOINT],
  fields: CHECK_FIELDS,
  priority: 'bulk',
  families: familyNames(CHECK_FAMILIES),
  // Paused websites too, asked nothing: their counters stay, and the summary's certificate expiry goes on.
  reads: [SELECTED_WEBSITES, WEBSITE_SUMMARIES],
  create: (ctx) => createChecksPoller(ctx),
};

function createChecksPoller(ctx: SourceContext<MonitoringApi, CheckBuckets>) {
  let graceMap: GraceMap<string, ChecksState> | undefined;
  // Built on first use, like the series source's: some tests build sources from a partial context.
  const statesOf = () => (graceMap ??= new GraceMap(ctx.unit.counterGraceMs));
  const group = (key: string) => groupName('checks', ctx.unit.name, key);
  const buckets = ctx.settings ?? DEFAULT_CHECK_BUCKETS;
  // Kept with the state, so restored counters can go on /metrics under the website's label before its first poll.
  const names = new Map<string, string>();
  let shownFromState: Set<string> | undefined;
  return {
    scope: 'target' as const,
    targets: () => ctx.read(SELECTED_WEBSITES),
    cadence: (website: Website) => every(checksCadenceMs(ctx.cadenceMs('checks'), website.check_interval)),
    // A paused website has no new checks: it is asked nothing.
    requestsPerRun: (website: Website) => (website.enabled === false ? 0 : 1),
    async poll(website: Website, signal: AbortSignal) {
      if (shownFromState) {
        const polled = ctx.read(SELECTED_WEBSITES);
        for (const id of shownFromState) if (!polled.has(id)) ctx.sink.retract(group(id));
        shownFromState = undefined;
      }
      const key = String(website.id);
      names.set(key, website.name);
      statesOf().sweep(ctx.clock.now());
      const kept = statesOf().get(key);
      const previous = kept ?? EMPTY_CHECKS_STATE;
      // A paused website never checked here has no counters to keep or show, only its certificate's expiry.
      const neverChecked = website.enabled === false && kept === undefined;
      const value =
        website.enabled === false
          ? { website_id: website.id, total: undefined, checks: [] }
          : (await ctx.upstream.get(CHECKS_ENDPOINT, { id: website.id }, { ...nextChecksQuery(previous, ctx.clock.now()) }, 'bulk')).value;
      if (signal.aborted) return;
      const result = mapChecks(value, previous, {
        account: ctx.unit.name,
        websiteId: website.id,
        websiteName: website.name,
        buckets,
        certExpiresAtMs: exactCertExpiryMs(ctx.read(WEBSITE_SUMMARIES).get(website.id)),
      });
      if (neverChecked) {
        ctx.sink.publish(group(key), result.families.filter((family) => family.spec === CHECK_FAMILIES.certExpiry));
        return;
      }
      statesOf().set(key, result.state);
      ctx.sink.publish(group(key), result.families);
      if (result.behind) {
        ctx.log.info(
          { websiteId: website.id, returned: value.checks.length, inWindow: value.total },
          'more website checks are waiting than one page holds; the next polls continue from the newest counted',
        );
      }
    },
    forget(key: string) {
      shownFromState?.delete(key);
      statesOf().release(key, ctx.clock.now());
      ctx.sink.retract(group(key));
    },
    persist: {
      save: () => [...statesOf().entries()].map(([id, state, releasedAtMs]) => ({ id, state: encodeChecks(state), releasedAtMs: releasedAtMs ?? null, name: names.get(id) ?? null })),
      restore(data: unknown) {
        if (!Array.isArray(data)) throw new TypeError('checks state must be a list of websites');
        const bounds = { ttfb: buckets.ttfb.length, dns: buckets.dnsLookup.length, tls: buckets.tlsHandshake.length };
        const now = ctx.clock.now();
        const restored = (data as { id?: unknown; state?: unknown; releasedAtMs?: unknown; name?: unknown }[]).map((item) => {
          if (typeof item.id !== 'string') throw new TypeError('checks state: a website without an id');
          const name = typeof item.name === 'string' ? item.name : undefined;
          return { id: item.id, state: decodeChecksState(item.state, bounds), releasedAtMs: typeof item.releasedAtMs === 'number' ? Math.min(item.releasedAtMs, now) : now, name };
        });
        for (const { id, state, releasedAtMs } of restored) statesOf().restoreReleased(id, state, releasedAtMs);
        // Counters on /metrics now, not one website at a time as the first polls come in (a state saved without names waits for them).
        shownFromState = new Set();
        for (const { id, state, name } of restored) {
          if (name === undefined || state.cursor === undefined) continue;
          names.set(id, name);
          const empty = { website_id: Number(id), total: undefined, checks: [] };
          try {
            ctx.sink.publish(group(id), mapChecks(empty, state, { account: ctx.unit.name, websiteId: Number(id), websiteName: name, buckets }).families);
            shownFromState.add(id);
          } catch {
            // Shown early or not at all: the state is taken either way, and the first poll publishes it.
          }
        }
      },
    },
  };
}
