import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertNames, alertGroups } from '../../mixin/alerts.js';
import { DASHBOARDS_DIR, ROOT } from '../../mixin/build.js';
import { DEFAULT_CONFIG, type MixinConfig } from '../../mixin/config.js';
import type { RunningDemo } from '../../scripts/demo.js';
import type { MonitoringWorld } from '../../simulator/monitoring/world-types.js';
import {
  intervalSeconds,
  interpolate,
  panelQueries,
  panelTime,
  queryVariables,
  resolveVariables as resolve,
  type DashboardJson,
  type PanelQuery,
  type QueryVariable,
  type ResolvedVariables,
  type Selection,
  type TimeVariables,
} from '../support/grafana.js';
import { startMixinDemo, type MixinDemo } from '../support/mixin-demo.js';
import { demoAccounts, type Scenario } from '../support/mixin-scenario.js';
import { PROMETHEUS_MAJORS, type PrometheusMajor, type PromSample, type RunningPrometheus } from '../support/prometheus.js';

/**
 * The mixin against real data: the demo (simulator and exporter) on a clock 30 times
 * faster than real time, started at a moment when the simulated world has a host offline
 * and a website outage coming (test/support/mixin-scenario.ts), scraped by a real
 * Prometheus that evaluates the alert rules. The rules are the shipped ones with every
 * `for:` and range window divided by the speed-up (`scaleDurations`), and a certificate
 * threshold chosen from the world so that some certificates fall below it and others do
 * not. Then every variable query and every panel query of every dashboard is evaluated
 * through Prometheus' HTTP API, with the variables substituted as Grafana does (the panels'
 * min intervals divided by the speed-up too: they say how often the data changes).
 *
 * Debian's Prometheus 2.42 and a Prometheus 3 (scripts/prometheus3) scrape the same demo and
 * evaluate the same rules side by side; every check runs against each.
 */

const SPEED = 30;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Real seconds of data at least, before the dashboards are evaluated (rates need a few scrapes). */
const MIN_OBSERVE_SECONDS = 40;
/** The alerts the demo's world triggers on its own. */
const TRIGGERED = ['MonapiHostOffline', 'MonapiWebsiteDown', 'MonapiCertificateExpiring'];
/** Fires after an hour (two real minutes here): expected pending or firing, not asserted either way. */
const SLOW = 'MonapiHostsBeyondPlanLimit';

let run: MixinDemo;
let demo: RunningDemo;
/** The server the running describe block is about. */
let prometheus: RunningPrometheus;
let scenario: Scenario;
let config: MixinConfig;
let expectedCertificates: { warning: string[]; critical: string[] };
let promStartSeconds = 0;
/** Every alert that fired during the run, by the time the dashboards are evaluated. */
let fired: PromSample[] = [];
const firedBy = new Map<PrometheusMajor, PromSample[]>();

const dashboards: DashboardJson[] = readdirSync(join(ROOT, DASHBOARDS_DIR))
  .sort()
  .map((name) => JSON.parse(readFileSync(join(ROOT, DASHBOARDS_DIR, name), 'utf8')) as DashboardJson);

/**
 * The warning threshold (days) between two certificates: the exporter shows a certificate's
 * expiry to the day (up to a day early), so a site fires for sure when its real expiry is
 * below the threshold and never when it is more than a day above.
 */
function certificateThreshold(world: MonitoringWorld, startMs: number, realNowMs: number): { days: number; below: string[] } {
  const left = demoAccounts(world)
    .flatMap(([, account]) => account.websites(startMs).map((site) => ({ name: site.name, expires: account.websiteSummary(site.id, startMs)?.tls?.cert_expires_at })))
    .map(({ name, expires }) => {
      if (!expires) throw new Error(`simulated website ${name} has no certificate`);
      return { name, days: (Date.parse(expires) - realNowMs) / DAY_MS };
    })
    .sort((a, b) => a.days - b.days);
  for (let k = 0; k + 1 < left.length; k++) {
    if (left[k + 1]!.days - left[k]!.days > 1.2) return { days: Math.round((left[k]!.days + 0.1) * 100) / 100, below: left.slice(0, k + 1).map((s) => s.name) };
  }
  throw new Error(`no gap of more than a day between the certificates' expiries: ${JSON.stringify(left)}`);
}

beforeAll(async () => {
  run = await startMixinDemo({
    majors: PROMETHEUS_MAJORS,
    speed: SPEED,
    scrapeIntervalSeconds: 1,
    runMs: 3 * MINUTE_MS,
    configure: (world, found) => {
      const certificates = certificateThreshold(world, found.startMs, Date.now());
      if (certificates.days <= DEFAULT_CONFIG.thresholds.certificateCriticalDays + 1.2) throw new Error(`certificate threshold ${certificates.days} days is too close to the critical one`);
      expectedCertificates = { warning: certificates.below, critical: [] };
      return { ...DEFAULT_CONFIG, thresholds: { ...DEFAULT_CONFIG.thresholds, certificateWarningDays: certificates.days } };
    },
  });
  ({ demo, scenario, config, startedSeconds: promStartSeconds } = run);
  await Promise.all(
    [...run.servers].map(async ([major, server]) => {
      const samples = await server.waitFor(
        'max_over_time(ALERTS{alertstate="firing"}[10m])',
        (found) => TRIGGERED.every((name) => found.some((s) => s.metric.alertname === name)) && Date.now() / 1000 - promStartSeconds >= MIN_OBSERVE_SECONDS,
        150_000,
      );
      firedBy.set(major, samples);
    }),
  );
}, 240_000);

afterAll(async () => {
  await run?.stop();
}, 30_000);

function simNow(): number {
  return demo.clock.now();
}

function firedFor(alertname: string, severity?: string): Record<string, string>[] {
  return fired.filter((s) => s.metric.alertname === alertname && (severity === undefined || s.metric.severity === severity)).map((s) => s.metric);
}

describe.each(PROMETHEUS_MAJORS)('Prometheus %i', (major) => {
  beforeAll(() => {
    prometheus = run.servers.get(major)!;
    fired = firedBy.get(major)!;
  });

  describe('the alert rules in a real Prometheus scraping the demo', () => {
    it('load and evaluate without errors', async () => {
      const rules = await prometheus.rules();
      expect(rules.length).toBe(alertGroups(config).flatMap((g) => g.rules).length);
      expect(rules.filter((r) => r.health !== 'ok')).toEqual([]);
    });

    it('fire for the host that is offline', () => {
      const offline = firedFor('MonapiHostOffline');
      for (const host of scenario.offlineHosts) {
        expect(offline).toContainEqual(expect.objectContaining({ account: host.account, host_uuid: host.uuid, hostname: host.hostname, severity: 'warning' }));
      }
      // Any other host it fired for was offline at some point of the run (flappy agents go quiet for minutes).
      const world = demo.simulator.world;
      for (const alert of offline) {
        const account = demoAccounts(world).find(([name]) => name === alert.account)![1];
        let seenOffline = false;
        for (let t = scenario.startMs; t <= simNow() && !seenOffline; t += MINUTE_MS) seenOffline = account.host(alert.host_uuid!, t)?.online === false;
        expect(seenOffline, `host ${alert.hostname} of ${alert.account}`).toBe(true);
      }
    });

    it('fire for the website that is down', () => {
      const down = firedFor('MonapiWebsiteDown');
      const site = scenario.downWebsite;
      expect(down).toContainEqual(expect.objectContaining({ account: site.account, website_id: String(site.id), website: site.name, severity: 'critical' }));
      for (const alert of down) {
        const account = demoAccounts(demo.simulator.world).find(([name]) => name === alert.account)![1];
        const failures = account.checks(Number(alert.website_id), scenario.startMs - 10 * MINUTE_MS, simNow()).filter((c) => !c.success);
        expect(failures.length, `website ${alert.website}`).toBeGreaterThan(0);
      }
    });

    it('fire for the certificates that expire within the threshold, and only those', () => {
      expect(firedFor('MonapiCertificateExpiring', 'warning').map((m) => m.website).sort()).toEqual([...expectedCertificates.warning].sort());
      expect(firedFor('MonapiCertificateExpiring', 'critical').map((m) => m.website)).toEqual(expectedCertificates.critical);
    });

    it('keep the alerts about the exporter and the upstream quiet on a healthy demo', async () => {
      const quiet = alertNames(alertGroups(config)).filter((name) => !TRIGGERED.includes(name) && name !== SLOW);
      expect(quiet.length).toBeGreaterThan(5);
      const everActive = await prometheus.query(`max_over_time(ALERTS{alertstate="firing"}[10m])`);
      expect(everActive.map((s) => s.metric.alertname).filter((name) => quiet.includes(name!))).toEqual([]);
      const slow = await prometheus.query(`ALERTS{alertname="${SLOW}"}`);
      expect(slow.map((s) => s.metric.account).sort()).toEqual(['business', 'pro']);
    });
  });

  /** Grafana's view of time for a dashboard showing the run so far. */
  function timeRange(): { start: number; end: number; time: TimeVariables } {
    const end = Math.floor(Date.now() / 1000);
    const start = Math.ceil(promStartSeconds) + 2;
    return { start, end, time: { rangeSeconds: end - start, scrapeIntervalSeconds: 1, maxDataPoints: 200 } };
  }

  const resolveVariables = (dashboard: DashboardJson, selections: Readonly<Record<string, Selection>>, time: TimeVariables): Promise<ResolvedVariables> =>
    resolve(dashboard, selections, time, (label, match) => prometheus.labelValues(label, match));

  /** Whether the query, as Grafana sends it, returns at least one finite value. Query errors throw. */
  async function hasData(query: PanelQuery, values: Record<string, string>, range: ReturnType<typeof timeRange>): Promise<boolean> {
    const time = panelTime(range.time, query.panel, SPEED);
    const expr = interpolate(query.expr, values, time);
    if (query.instant) return (await prometheus.query(expr, range.end)).some((s) => Number.isFinite(s.value));
    return (await prometheus.queryRange(expr, range.start, range.end, intervalSeconds(time))).some((s) => s.values.some(([, v]) => Number.isFinite(v)));
  }

  const label = (d: DashboardJson, q: PanelQuery): string => `${d.uid} / ${q.panel.title} / ${q.target.refId}`;

  /** The variable a dashboard is about: one value of it narrows every panel to one host, website, exporter or account. */
  const ENTITY: Record<string, string> = { 'monapi-hosts': 'hostname', 'monapi-websites': 'website', 'monapi-exporter': 'instance', 'monapi-overview': 'account' };

  describe('the dashboards against the same Prometheus', () => {
    it('answer every variable query, with the variables before it at All and at one value', async () => {
      const { time } = timeRange();
      const empty: string[] = [];
      let checked = 0;
      for (const dashboard of dashboards) {
        const variables = queryVariables(dashboard);
        const all = await resolveVariables(dashboard, {}, time);
        const first = Object.fromEntries(variables.map((v) => [v.name, all.options[v.name]!.slice(0, 1)]));
        const single = await resolveVariables(dashboard, first, time);
      // The demo's Prometheus adds no cluster label, as a single-cluster one does not: the
      // optional cluster variable has no options (and matches everything, below).
      expect(all.options.cluster, dashboard.uid).toEqual([]);
      expect(all.options.job, dashboard.uid).toEqual(['monapi-exporter']);
      for (const variable of variables.filter((v) => v.name !== 'cluster')) {
          checked++;
          if (all.options[variable.name]!.length === 0) empty.push(`${dashboard.uid}: $${variable.name} with all before it`);
          if (single.options[variable.name]!.length === 0) empty.push(`${dashboard.uid}: $${variable.name} with one value before it`);
        }
      }
    expect(checked).toBe(15);
      expect(empty).toEqual([]);
      // Hostnames shown, host_uuids selected: one hostname narrows $host to that host's uuids.
      const hosts = dashboards.find((d) => d.uid === 'monapi-hosts')!;
      const offline = scenario.offlineHosts[0]!;
      const narrowed = await resolveVariables(hosts, { account: [offline.account], hostname: [offline.hostname] }, time);
      expect(narrowed.options.hostname).toContain(offline.hostname);
      expect(narrowed.options.host).toEqual([offline.uuid]);
      expect(narrowed.values.host).toBe(offline.uuid);
    }, 60_000);

  it('return data for every panel query with every variable at All, the cluster variable empty or All, and the job narrowed', async () => {
      const range = timeRange();
      const noData: string[] = [];
      let checked = 0;
      for (const dashboard of dashboards) {
        const { values } = await resolveVariables(dashboard, {}, range.time);
      // Without options Grafana leaves the cluster variable empty or at All (its allValue .*); either matches series without the label.
      expect(values.cluster).toBe('');
      // The job at All (.+) and narrowed to the one job there is.
      const scopes: Record<string, string>[] = [{ cluster: '' }, { cluster: '.*' }, { cluster: '', job: 'monapi-exporter' }];
      for (const scope of scopes) {
        for (const query of panelQueries(dashboard)) {
          checked++;
          if (!(await hasData(query, { ...values, ...scope }, range))) noData.push(`${label(dashboard, query)} (${JSON.stringify(scope)})`);
        }
      }
    }
    expect(checked).toBeGreaterThan(240);
      expect(noData).toEqual([]);
      // The check can fail: a family the exporter does not have gives no data, a broken query throws.
      const [sample] = panelQueries(dashboards[0]!);
      expect(await hasData({ ...sample!, expr: 'monapi_no_such_family', instant: false }, {}, range)).toBe(false);
      await expect(hasData({ ...sample!, expr: 'sum by (account) (monapi_up', instant: true }, {}, range)).rejects.toThrow(/parse error/);
    }, 120_000);

    it('return data for every panel query narrowed to one value, and to several as a regex, of the variable the dashboard is about', async () => {
      const range = timeRange();
      const noData: string[] = [];
      let checked = 0;
      for (const dashboard of dashboards) {
        const entity = ENTITY[dashboard.uid]!;
        const variable = queryVariables(dashboard).find((v) => v.name === entity) as QueryVariable;
        expect(variable, `${dashboard.uid} has $${entity}`).toBeDefined();
        const { options } = await resolveVariables(dashboard, {}, range.time);
        const candidates = options[entity]!;
        expect(candidates.length, `${dashboard.uid}: options of $${entity}`).toBeGreaterThan(0);
        const resolved = new Map<string, ResolvedVariables>();
        const narrowTo = async (selection: readonly string[]): Promise<ResolvedVariables> => {
          const key = selection.join('|');
          if (!resolved.has(key)) resolved.set(key, await resolveVariables(dashboard, { [entity]: selection }, range.time));
          return resolved.get(key)!;
        };
        for (const query of panelQueries(dashboard)) {
          const dependsOnEntity = query.expr.includes(`$${entity}`) || (entity === 'hostname' && query.expr.includes('$host'));
          if (!dependsOnEntity) continue;
          checked++;
          let one: string | undefined;
          for (const candidate of candidates) {
            if (await hasData(query, (await narrowTo([candidate])).values, range)) {
              one = candidate;
              break;
            }
          }
          if (one === undefined) {
            noData.push(`${label(dashboard, query)}: no single $${entity}`);
            continue;
          }
          const several = [one, ...candidates.filter((c) => c !== one).slice(0, 1)];
          const { values } = await narrowTo(several);
          if (several.length > 1) expect(values[entity]).toMatch(/^\(.+\|.+\)$/);
          if (!(await hasData(query, values, range))) noData.push(`${label(dashboard, query)}: $${entity} = ${values[entity]}`);
        }
      }
      expect(checked).toBeGreaterThan(70);
      expect(noData).toEqual([]);
    }, 180_000);
  });
});

describe('the alert rules when the simulator sends a 429 storm', () => {
  it('fire for the rate limiting and, once every poll fails, for the upstream being unreachable, per account, in each Prometheus', async () => {
    const storm = await fetch(`${demo.simulator.adminUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'monitoring', storm_seconds: 86_400, storm_retry_after: 5 }),
    });
    expect(storm.status).toBe(200);
    const both = ['business', 'pro'];
    const firing = (name: string) => (samples: PromSample[]) => both.every((account) => samples.some((s) => s.metric.alertname === name && s.metric.account === account));
    await Promise.all(
      [...run.servers.values()].map(async (server) => {
        await server.waitFor('ALERTS{alertstate="firing", alertname="MonapiRateLimited"}', firing('MonapiRateLimited'), 120_000);
        const unreachable = await server.waitFor('ALERTS{alertstate="firing", alertname="MonapiUpstreamUnreachable"}', firing('MonapiUpstreamUnreachable'), 120_000);
        // One series per account whatever the reason says.
        expect(unreachable.map((s) => Object.keys(s.metric).sort())).toEqual(both.map(() => ['__name__', 'account', 'alertname', 'alertstate', 'severity']));
        expect((await server.query('monapi_up_reason{reason="unreachable"} == 1')).map((s) => s.metric.account).sort()).toEqual(both);
        expect((await server.query('monapi_up == 0')).map((s) => Object.keys(s.metric).sort())).toEqual(both.map(() => ['__name__', 'account', 'instance', 'job']));
      }),
    );
    expect([...run.servers.keys()]).toEqual([...PROMETHEUS_MAJORS]);
  }, 260_000);
});
