import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, type RunningDemo } from '../../scripts/demo.js';
import type { ShapeSet } from '../../simulator/index.js';
import type { SimAccount } from '../../simulator/monitoring/world-types.js';
import { DEFAULT_CHECK_BUCKETS } from '../../src/sources/checks/map.js';
import { PROMETHEUS_MAJORS, requireBinary, startPrometheus, type PrometheusMajor, type RunningPrometheus } from '../support/prometheus.js';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy.js';

/**
 * The whole stack: the simulator and the exporter (the demo, through a real config file)
 * on a clock running SPEED times faster than real time, scraped by a real Prometheus every
 * second. What Prometheus stores is compared with what the simulator generated.
 *
 * Three times at once, so the suite takes no longer: one demo answers every body the API
 * documents leave "not shown" in the standard shape set, the others in the alt and nested sets
 * (the same data in other legal layouts: grouped lists, values under period and category
 * keys, numbers as strings, rates as a count and a period; docs/simulator.md). One Prometheus
 * scrapes them all, telling them apart by the target label `shape_set`, and every check runs
 * against each.
 *
 * Two Prometheus servers scrape them at the same time: Debian's Prometheus 2.42 and a
 * Prometheus 3 (scripts/prometheus3), each with its default scrape negotiation; every check
 * runs against both. Prometheus 3 also scrapes the standard demo through recording proxies
 * with other protocols and name escapings, to see what it asks for and gets on the wire.
 *
 * The standard demo answers scrapes from a serving thread (the CLI's default), the other two
 * from the main thread: both Prometheus servers and promtool check both paths; the negotiation
 * jobs see the serving thread's answers (the main thread's negotiation has tests of its own in
 * src/exposition and src/server).
 */

const SPEED = 30;
const MINUTE_MS = 60_000;
const INGEST_DELAY_MS = 3 * MINUTE_MS;
/** Real seconds of data collected before the assertions. */
const OBSERVE_SECONDS = 70;
const COUNTER = 'nginx.http.request.count';
const COUNTER_FAMILY = 'monapi_nginx_http_requests_total';
/**
 * Relative slack for rates computed in floating point by Prometheus and by the test from times in
 * seconds (CI saw Prometheus 3 at 1.1e-9 over the bound); a simulated minute more or less is 3%.
 */
const FLOAT_SLACK = 1e-6;
const SHAPE_SETS = ['standard', 'alt', 'nested'] as const satisfies readonly ShapeSet[];
/** What does not change while the demos run: the same in every layout, value for value. */
const STABLE_FAMILIES = /^monapi_(account_|alert_rule_|website_info|website_enabled|website_check_interval|website_cert_expiry|host_info)/;
/**
 * The metric families of a set of series: prom-client's active-requests gauge has a series only
 * while a request of the process is in flight, so it comes and goes between scrapes.
 */
const FAMILIES = (selector: string) => `count by (__name__) (${selector.replace('}', ',__name__!="monapi_exporter_nodejs_active_requests"}')})`;

const demos = new Map<ShapeSet, RunningDemo>();
let startedRealMs = 0;
const servers = new Map<PrometheusMajor, RunningPrometheus>();

/**
 * Prometheus 3 scrape jobs through a recording proxy each: its default negotiation, Prometheus
 * text 1.0.0 with UTF-8 names allowed, and legacy name validation (escaping=underscores).
 */
const NEGOTIATION_JOBS = {
  negotiation_default: '',
  negotiation_text_utf8: '    scrape_protocols: [PrometheusText1.0.0, PrometheusText0.0.4]\n    metric_name_validation_scheme: utf8\n    metric_name_escaping_scheme: allow-utf-8\n',
  negotiation_legacy: '    metric_name_validation_scheme: legacy\n',
} as const;
type NegotiationJob = keyof typeof NEGOTIATION_JOBS;
const proxies = new Map<NegotiationJob, RecordingProxy>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  startedRealMs = Date.now();
  const started = await Promise.allSettled(
    SHAPE_SETS.map((shapes) =>
      startDemo({
        hosts: 6,
        websites: 3,
        rateLimitPerMinute: 120,
        burst: 30,
        seed: 'e2e',
        listenAddress: '127.0.0.1:0',
        releasesMode: 'marketplace',
        simulatorPorts: { monitoring: 0, releases: 0, marketplace: 0 },
        logLevel: 'error',
        logFormat: 'json',
        speed: SPEED,
        shapes,
        // The standard demo serves from a serving thread, as the CLI does by default (--web.serving-threads=auto).
        ...(shapes === 'standard' ? { servingThreads: 1 } : {}),
      }),
    ),
  );
  started.forEach((result, i) => {
    if (result.status === 'fulfilled') demos.set(SHAPE_SETS[i]!, result.value);
  });
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  for (const job of Object.keys(NEGOTIATION_JOBS) as NegotiationJob[]) proxies.set(job, await startRecordingProxy(demoOf('standard').exporter.url));
  const negotiationJobs = Object.entries(NEGOTIATION_JOBS)
    .map(([job, settings]) => `  - job_name: ${job}\n${settings}    static_configs:\n      - targets: ["${proxies.get(job as NegotiationJob)!.address}"]\n`)
    .join('');
  const startedServers = await Promise.allSettled(
    PROMETHEUS_MAJORS.map((major) =>
      startPrometheus({
        major,
        targets: SHAPE_SETS.map((set) => ({ address: new URL(demoOf(set).exporter.url).host, labels: { shape_set: set } })),
        scrapeIntervalSeconds: 1,
        ...(major === 3 ? { extraScrapeConfigs: negotiationJobs } : {}),
      }),
    ),
  );
  startedServers.forEach((result, i) => {
    if (result.status === 'fulfilled') servers.set(PROMETHEUS_MAJORS[i]!, result.value);
  });
  const failedServer = startedServers.find((result) => result.status === 'rejected');
  if (failedServer) throw failedServer.reason;
  for (const server of servers.values()) {
    await server.waitFor('up{job="monapi"}', (s) => s.length === SHAPE_SETS.length && s.every((x) => x.value === 1), 30_000);
  }
  // Every source of every demo has run once and its data is in a snapshot before the watch starts: on a loaded machine
  // the first cycle and its builds take longer than the watch itself (CI saw six resources still missing after it).
  const deadline = Date.now() + 90_000;
  for (const [set, demo] of demos) {
    while (!demo.exporter.ready()) {
      if (Date.now() > deadline) throw new Error(`the ${set} demo did not complete its first cycle within 90 s: ${demo.exporter.notReadyReason()}`);
      await sleep(250);
    }
    await demo.exporter.store.flush();
  }
  await sleep(OBSERVE_SECONDS * 1000);
}, 300_000);

afterAll(async () => {
  await Promise.all([...servers.values()].map((server) => server.stop()));
  await Promise.all([...proxies.values()].map((proxy) => proxy.close()));
  await Promise.all([...demos.values()].map((demo) => demo.stop()));
}, 30_000);

function serverOf(major: PrometheusMajor): RunningPrometheus {
  const server = servers.get(major);
  if (!server) throw new Error(`Prometheus ${major} did not start`);
  return server;
}

function demoOf(set: ShapeSet): RunningDemo {
  const demo = demos.get(set);
  if (!demo) throw new Error(`the ${set} demo did not start`);
  return demo;
}

/** The simulated account behind an account of the demo. */
function simAccount(demo: RunningDemo, name: 'pro' | 'business'): SimAccount {
  const key = name === 'pro' ? demo.simulator.keys.pro : demo.simulator.keys.business;
  const account = demo.simulator.world.accountByKey(key);
  if (!account) throw new Error(`no simulated account for ${name}`);
  return account;
}

/** The minute starts from `before` minutes before `minute` to `after` minutes after it. */
function minutesAround(minute: number, before: number, after: number): number[] {
  return Array.from({ length: before + after + 1 }, (_, i) => minute + (i - before) * MINUTE_MS);
}

/** The first range [start, end) of the candidates (by end, then start) whose simulated deltas sum to `value`. */
function minutesSummingTo(
  value: number,
  account: SimAccount,
  uuid: string,
  nowMs: number,
  starts: readonly number[],
  ends: readonly number[],
): { start: number; end: number } | undefined {
  for (const end of ends) for (const start of starts) if (generated(account, uuid, start, end, nowMs) === value) return { start, end };
  return undefined;
}

/** Sum of the simulator's one-minute deltas for minutes starting in [fromMs, toMs). */
function generated(account: SimAccount, uuid: string, fromMs: number, toMs: number, nowMs: number): number {
  let sum = 0;
  for (let t = fromMs; t < toMs; t += MINUTE_MS) sum += account.pointValue(uuid, COUNTER, t, 60, nowMs) ?? 0;
  return sum;
}

/** The simulated time of a demo at a real time: its clock runs SPEED times faster from its start. */
function simTimeAt(demo: RunningDemo, realMs: number): number {
  const clock = demo.clock;
  return clock.startMs + (realMs - clock.realStartMs) * clock.factor;
}

describe.each(PROMETHEUS_MAJORS.flatMap((major) => SHAPE_SETS.map((set) => [major, set] as const)))('a real Prometheus %i scraping the demo with the %s shape set', (major, set) => {
  const target = `shape_set="${set}"`;
  const prometheus = { query: (promql: string, timeSeconds?: number) => serverOf(major).query(promql, timeSeconds), rangeSamples: (selector: string) => serverOf(major).rangeSamples(selector) };
  const demo = () => demoOf(set);
  const clockNow = () => simTimeAt(demo(), Date.now());

  it('has the target up and both accounts answering', async () => {
    expect(new Set(Object.values(demo().simulator.shapes.view().effective))).toEqual(new Set([set]));
    const up = await prometheus.query(`up{job="monapi",${target}}`);
    expect(up.map((s) => s.value)).toEqual([1]);
    const accounts = await prometheus.query(`monapi_up{${target}}`);
    expect(accounts.map((s) => [s.metric.account, s.metric.reason, s.value]).sort()).toEqual([
      ['business', undefined, 1],
      ['pro', undefined, 1],
    ]);
    // Every reason has a series, none at 1 while the account answers.
    const reasons = await prometheus.query(`monapi_up_reason{${target}}`);
    expect(reasons.map((s) => `${s.metric.account}/${s.metric.reason} ${s.value}`).sort()).toEqual(
      ['business', 'pro'].flatMap((account) => ['pending', 'plan_required', 'unauthorized', 'unreachable'].map((reason) => `${account}/${reason} 0`)),
    );
    const failedScrapes = await prometheus.query('sum(prometheus_target_scrapes_sample_out_of_order_total + prometheus_target_scrapes_sample_duplicate_timestamp_total)');
    expect(failedScrapes[0]?.value ?? 0).toBe(0);
  });

  it('reports as many online hosts as the simulator has', async () => {
    for (const name of ['pro', 'business'] as const) {
      const account = simAccount(demo(), name);
      const [sample] = await prometheus.query(`monapi_hosts{account="${name}",state="online",${target}}`);
      expect(sample).toBeDefined();
      // The exporter's view is at most one host-list cadence (a simulated minute) old.
      const simNow = clockNow();
      const counts = [0, 30_000, 60_000, 90_000].map(
        (ago) => account.hosts(simNow - ago).filter((h) => h.allowed && h.online).length,
      );
      expect(sample!.value).toBeGreaterThanOrEqual(Math.min(...counts));
      expect(sample!.value).toBeLessThanOrEqual(Math.max(...counts));
      expect(sample!.value).toBeGreaterThan(0);
    }
  });

  it('turns per-minute deltas into counters whose values and rates match what the simulator generated', async () => {
    const account = simAccount(demo(), 'pro');
    const series = await prometheus.rangeSamples(`${COUNTER_FAMILY}{account="pro",${target}}[${OBSERVE_SECONDS}s]`);
    expect(series.length).toBeGreaterThan(0);
    const rateSeconds = OBSERVE_SECONDS - 10;
    let checked = 0;
    for (const { metric, values } of series) {
      const uuid = metric.host_uuid!;
      const [firstT, firstV] = values[0]!;
      const [lastT, lastV] = values[values.length - 1]!;
      if (lastT - firstT < OBSERVE_SECONDS / 2) continue;
      expect(lastV).toBeGreaterThan(firstV);
      values.slice(1).forEach(([t, v], i) => expect(v, `counter of host ${uuid} went down at ${t}`).toBeGreaterThanOrEqual(values[i]![1]));

      // The counter is an exact sum of simulated one-minute deltas over a contiguous range of
      // minutes that starts when the exporter started and ends about an ingest delay before the
      // simulated time of its sample.
      const simAt = (realSeconds: number) => simTimeAt(demo(), realSeconds * 1000);
      const nowMs = clockNow() + 10 * MINUTE_MS;
      const startOfLife = Math.floor((simTimeAt(demo(), startedRealMs) - INGEST_DELAY_MS) / MINUTE_MS) * MINUTE_MS;
      const endMinute = Math.floor((simAt(lastT) - INGEST_DELAY_MS) / MINUTE_MS) * MINUTE_MS;
      const sumAtLast = minutesSummingTo(lastV, account, uuid, nowMs, minutesAround(startOfLife, 3, 3), minutesAround(endMinute, 3, 1));
      expect(sumAtLast, `counter ${lastV} of host ${uuid} is no contiguous sum of simulated deltas`).toBeDefined();
      const { start, end } = sumAtLast!;

      // rate() half a second after the last sample (so no scrape lies on the window's edge) reads the
      // samples of the window before it. The counter's value at the first of them is a sum of the
      // same deltas, ending earlier: the exporter may have been further behind the simulated clock
      // then (on a loaded machine, catching up after its first cycle), so the window covers the
      // minutes the counter advanced over, not a fixed span.
      const rateAt = lastT + 0.5;
      const [windowFirstT, windowFirstV] = values.find(([t]) => t > rateAt - rateSeconds)!;
      const windowFromMinute = Math.floor((simAt(windowFirstT) - INGEST_DELAY_MS) / MINUTE_MS) * MINUTE_MS;
      const sumAtWindowFirst = minutesSummingTo(windowFirstV, account, uuid, nowMs, [start], minutesAround(windowFromMinute, 10, 1));
      expect(sumAtWindowFirst, `counter ${windowFirstV} of host ${uuid} at ${windowFirstT} is no sum of the same deltas ending earlier`).toBeDefined();
      const windowFrom = sumAtWindowFirst!.end;
      const minutesCovered = (end - windowFrom) / MINUTE_MS;
      // The simulated clock moves rateSeconds * SPEED / 60 minutes meanwhile; the exporter keeps up within half of that.
      const simulatedMinutes = (rateSeconds * SPEED) / 60;
      expect(minutesCovered, `the counter of host ${uuid} advanced over ${minutesCovered} simulated minutes in ${simulatedMinutes}`).toBeGreaterThan(simulatedMinutes / 2);
      expect(minutesCovered, `the counter of host ${uuid} advanced over ${minutesCovered} simulated minutes in ${simulatedMinutes}`).toBeLessThan(simulatedMinutes * 1.5);

      // Prometheus extrapolates the increase between the window's first and last samples towards its
      // edges, by no more than the time between them and the edges: the rate lies between the
      // increase over the whole window and over the sampled part of it.
      const [rate] = await prometheus.query(`rate(${COUNTER_FAMILY}{account="pro",host_uuid="${uuid}",${target}}[${rateSeconds}s])`, rateAt);
      const increase = generated(account, uuid, windowFrom, end, nowMs);
      expect(rate!.value).toBeGreaterThanOrEqual((increase / rateSeconds) * (1 - FLOAT_SLACK));
      expect(rate!.value).toBeLessThanOrEqual((increase / (lastT - windowFirstT)) * (1 + FLOAT_SLACK));
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('exposes gauges in base units within their range', async () => {
    const cpu = await prometheus.query(`monapi_system_cpu_time_ratio{mode="user",${target}}`);
    expect(cpu.length).toBeGreaterThan(0);
    for (const s of cpu) {
      expect(s.value).toBeGreaterThanOrEqual(0);
      expect(s.value).toBeLessThanOrEqual(1);
    }
  });

  it('draws a TTFB median from the check histograms inside the range the simulator generated', async () => {
    const account = simAccount(demo(), 'pro');
    const [median] = await prometheus.query(
      `histogram_quantile(0.5, sum by (le) (rate(monapi_website_check_ttfb_seconds_bucket{account="pro",${target}}[60s])))`,
    );
    expect(median && Number.isFinite(median.value)).toBe(true);
    const simNow = clockNow();
    const ttfbs = account
      .websites(simNow)
      .flatMap((w) => account.checks(w.id, simNow - 40 * MINUTE_MS, simNow))
      .filter((c) => c.success)
      .map((c) => c.ttfb_ms / 1000);
    expect(ttfbs.length).toBeGreaterThan(10);
    // histogram_quantile interpolates inside a bucket, so the range is widened to the bucket bounds.
    const bounds = [0, ...DEFAULT_CHECK_BUCKETS.ttfb, Infinity];
    const lower = Math.max(...bounds.filter((b) => b <= Math.min(...ttfbs)));
    const upper = Math.min(...bounds.filter((b) => b >= Math.max(...ttfbs)));
    expect(median!.value).toBeGreaterThanOrEqual(lower);
    expect(median!.value).toBeLessThanOrEqual(upper);
  });

  it('shows the latest releases', async () => {
    const info = await prometheus.query(`monapi_release_info{project="nginx",${target}}`);
    expect(info.map((s) => s.metric.version)).toEqual(['1.27.3']);
    const linux4 = await prometheus.query(`monapi_release_version_minor{project="torvalds/linux",major="4",${target}}`);
    expect(linux4.map((s) => s.value)).toEqual([20]);
  });

  it('has data for every resource, and every source works', async () => {
    const resources: Record<string, string> = {
      hosts: 'monapi_host_info',
      series: `${COUNTER_FAMILY}`,
      components: 'monapi_component_info',
      account: 'monapi_account_info',
      websites: 'monapi_website_info',
      'website summaries': 'monapi_website_uptime_ratio{window="30d"}',
      checks: 'monapi_website_checks_total',
      'alert rules': 'monapi_alert_rule_info',
      'alert events': 'monapi_alert_events_total',
      releases: 'monapi_release_info',
    };
    const empty: string[] = [];
    for (const [resource, selector] of Object.entries(resources)) {
      const withTarget = selector.includes('{') ? selector.replace('{', `{${target},`) : `${selector}{${target}}`;
      const found = await prometheus.query(withTarget);
      if (found.length === 0) empty.push(`${resource} (${selector})`);
    }
    expect(empty).toEqual([]);
    // Checks were counted, not only started at 0.
    const [checks] = await prometheus.query(`sum(monapi_website_checks_total{${target}})`);
    expect(checks?.value).toBeGreaterThan(0);
    const failing = await prometheus.query(`monapi_source_up_reason{${target}} == 1 or monapi_source_up{${target}} != 1`);
    expect(failing.map((s) => `${s.metric.account}/${s.metric.source}: ${s.metric.reason ?? 'no reason'}`)).toEqual([]);
    const sources = await prometheus.query(`count(monapi_source_up{${target}} == 1)`);
    expect(sources[0]?.value).toBeGreaterThanOrEqual(2 * 11);
    const dropped = await prometheus.query(`monapi_decode_dropped_items_total{${target}} > 0`);
    expect(dropped.map((s) => s.metric)).toEqual([]);
  });

  it('passes promtool check metrics on /metrics', async () => {
    const promtool = requireBinary('promtool', major);
    const body = await (await fetch(`${demo().exporter.url}/metrics`, { headers: { accept: 'text/plain' } })).text();
    expect(body).toContain('# TYPE monapi_component_info gauge');
    const result = spawnSync(promtool, ['check', 'metrics'], { input: body, encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

describe.each(PROMETHEUS_MAJORS)('the shape sets in Prometheus %i', (major) => {
  it('export the same metric families', async () => {
    const familiesOf = async (set: ShapeSet) =>
      (await serverOf(major).query(FAMILIES(`{job="monapi",shape_set="${set}"}`))).map((s) => s.metric.__name__).sort();
    const standard = await familiesOf('standard');
    expect(standard.length).toBeGreaterThan(100);
    expect(await familiesOf('alt')).toEqual(standard);
    expect(await familiesOf('nested')).toEqual(standard);
  });

  it('find every declared field in every layout: none is reported missing', async () => {
    const missing = await serverOf(major).query('monapi_decode_field_missing{job="monapi"} == 1');
    expect(missing.map((s) => `${s.metric.shape_set} ${s.metric.account}/${s.metric.source}.${s.metric.field}`)).toEqual([]);
    const reported = await serverOf(major).query('count by (shape_set) (monapi_decode_field_missing{job="monapi"})');
    expect(reported.map((s) => s.metric.shape_set).sort()).toEqual([...SHAPE_SETS].sort());
  });
});

describe('the shape sets on /metrics', () => {
  /** The series of the stable families, value for value. */
  const stableLines = async (set: ShapeSet) =>
    (await (await fetch(`${demoOf(set).exporter.url}/metrics`, { headers: { accept: 'text/plain' } })).text())
      .split('\n')
      .filter((line) => STABLE_FAMILIES.test(line))
      .sort();

  it('give the same values for what does not change with time, whatever the layout', async () => {
    const standard = await stableLines('standard');
    expect(standard.length).toBeGreaterThan(100);
    expect(standard.some((line) => line.startsWith('monapi_website_enabled{') && line.endsWith(' 0'))).toBe(true);
    expect(standard.some((line) => line.startsWith('monapi_alert_rule_hosts{') && Number(line.split(' ').at(-1)) > 1)).toBe(true);
    expect(await stableLines('alt')).toEqual(standard);
    expect(await stableLines('nested')).toEqual(standard);
  });
});

describe('the two Prometheus servers', () => {
  it.each(PROMETHEUS_MAJORS)('Prometheus %i is the generation it is said to be', async (major) => {
    const info = (await (await fetch(`${serverOf(major).url}/api/v1/status/buildinfo`)).json()) as { data: { version: string } };
    expect(info.data.version).toBe(serverOf(major).version);
    expect(info.data.version).toMatch(new RegExp(`^${major}\\.\\d+\\.\\d+`));
  });
});

describe("Prometheus 3's scrape negotiation, seen on the wire", () => {
  const familiesOf = async (job: string) => (await serverOf(3).query(FAMILIES(`{job="${job}"}`))).map((s) => s.metric.__name__).sort();
  const exchangesOf = (job: NegotiationJob) => {
    const exchanges = proxies.get(job)!.exchanges.filter((e) => e.path === '/metrics');
    expect(exchanges.length, `scrapes through the ${job} proxy`).toBeGreaterThan(OBSERVE_SECONDS / 2);
    return exchanges;
  };

  it('asks for OpenMetrics 1.0.0 first with escaping=allow-utf-8, and gets OpenMetrics 1.0.0', async () => {
    for (const exchange of exchangesOf('negotiation_default')) {
      expect(exchange.accept).toMatch(/^application\/openmetrics-text;version=1\.0\.0;escaping=allow-utf-8;q=0\.\d,application\/openmetrics-text;version=0\.0\.1;q=0\.\d,text\/plain;version=1\.0\.0;escaping=allow-utf-8;q=0\.\d,text\/plain;version=0\.0\.4;q=0\.\d,\*\/\*;q=0\.\d$/);
      expect(exchange.acceptEncoding).toBe('gzip');
      expect([exchange.status, exchange.contentType]).toEqual([200, 'application/openmetrics-text; version=1.0.0; charset=utf-8']);
    }
    expect((await serverOf(3).query('up{job="negotiation_default"}')).map((s) => s.value)).toEqual([1]);
  });

  it('scrapes Prometheus text 1.0.0 with escaping=allow-utf-8, answered in text 0.0.4, the same families', async () => {
    for (const exchange of exchangesOf('negotiation_text_utf8')) {
      expect(exchange.accept).toMatch(/^text\/plain;version=1\.0\.0;escaping=allow-utf-8;q=0\.\d,text\/plain;version=0\.0\.4;q=0\.\d,\*\/\*;q=0\.\d$/);
      expect([exchange.status, exchange.contentType]).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8']);
    }
    expect((await serverOf(3).query('up{job="negotiation_text_utf8"}')).map((s) => s.value)).toEqual([1]);
    const direct = (await serverOf(3).query(FAMILIES('{job="monapi",shape_set="standard"}'))).map((s) => s.metric.__name__).sort();
    expect(direct.length).toBeGreaterThan(100);
    expect(await familiesOf('negotiation_text_utf8')).toEqual(direct);
    expect(await familiesOf('negotiation_default')).toEqual(direct);
  });

  it('with legacy name validation asks for escaping=underscores and finds every name valid as it is', async () => {
    for (const exchange of exchangesOf('negotiation_legacy')) {
      expect(exchange.accept).toContain('application/openmetrics-text;version=1.0.0;escaping=underscores;');
      expect(exchange.status).toBe(200);
    }
    expect((await serverOf(3).query('up{job="negotiation_legacy"}')).map((s) => s.value)).toEqual([1]);
    expect(await familiesOf('negotiation_legacy')).toEqual(await familiesOf('negotiation_default'));
  });
});
