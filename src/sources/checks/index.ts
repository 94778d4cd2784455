import { detailsOf, familyNames, groupName, type SourceContext, type WebsiteSource } from '../types.js';
import { exactCertExpiryMs } from '../website-summary/map.js';
import { CHECK_FAMILIES, checksCadenceMs, EMPTY_CHECKS_STATE, mapChecks, nextChecksQuery, type ChecksState } from './map.js';

/**
 * `/websites/{id}/checks`, once per selected website: each new check counted once into
 * counters and histograms, and the newest check's facts as gauges. One request per run;
 * each asks only for the checks since the last one counted.
 */
export function createChecksSource(ctx: SourceContext): WebsiteSource {
  const states = new Map<string, ChecksState>();
  const summaries = () => detailsOf(ctx.inventory).websites;
  const group = (key: string) => groupName('checks', ctx.account.name, key);

  return {
    name: 'checks',
    toggle: 'checks',
    families: familyNames(CHECK_FAMILIES),
    scope: 'website',
    priority: 'bulk',
    cadenceMs: (website) => checksCadenceMs(ctx.account.cadenceMs.checks, website.check_interval_seconds),
    requestsPerRun: () => 1,
    async poll(website, signal) {
      const key = String(website.id);
      const previous = states.get(key) ?? EMPTY_CHECKS_STATE;
      const { value } = await ctx.client.checks(website.id, nextChecksQuery(previous, ctx.clock.now()), 'bulk');
      if (signal.aborted) return;
      const result = mapChecks(value, previous, {
        account: ctx.account.name,
        websiteId: website.id,
        websiteName: website.name,
        buckets: ctx.exporter.checkBuckets,
        certExpiresAtMs: exactCertExpiryMs(summaries().get(website.id)),
      });
      states.set(key, result.state);
      ctx.sink.publish(group(key), result.families);
      if (result.behind) {
        ctx.log.info(
          { websiteId: website.id, returned: value.checks.length, inWindow: value.total },
          'more website checks are waiting than one page holds; the next polls continue from the newest counted',
        );
      }
    },
    forget(key) {
      states.delete(key);
      ctx.sink.retract(group(key));
    },
  };
}

