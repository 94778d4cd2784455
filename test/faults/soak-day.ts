import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SeriesNaming } from '../../src/sources/series/naming.js';
import { agentMetric, splitDeviceName } from '../../simulator/monitoring/catalogue.js';
import type { SimAccount } from '../../simulator/monitoring/world-types.js';
import { recordReadSpans, type ReadSpan, type ReadSpans } from '../support/read-spans.js';
import { startRig, type Rig } from './harness.js';
import { collectGarbage } from './soak.js';

/**
 * "A day at speed" (issue 28): the exporter with a state file against the in-process
 * simulator on one fake clock for a simulated day, stopped and started from its state file,
 * killed (the state file as it was on disk at that instant is all that survives) and
 * started again, with the upstream answering 503 to everything for a while in between.
 * At the end every counter kept across restarts (each delta metric of each host, each
 * website's checks by result, each alert event by type and source) is compared with the
 * simulator's own account of what happened, and the process's memory is sampled after a
 * full garbage collection every simulated hour. Used by scripts/soak-day.ts (24 hours) and,
 * in small, by test/faults/soak-day.test.ts.
 *
 * What a counter must be, from the simulator alone (as test/support/truth.ts reasons):
 * - a delta metric's counter starts at 0 with the minutes due at the first read of it and
 *   holds every minute up to the newest one due at the last read, each as the API showed it
 *   by then: `sim.truth` over [due(first read), due(last read)) as of the last read, where
 *   due(t) is the start of the minute `ingest_delay` before t. Lost minutes (a restart that
 *   forgot them, an outage not read back) make it smaller, minutes counted twice larger;
 * - a website's checks: every check the simulator made after the first read of its checks
 *   and by the last, by result;
 * - alert events: every event that occurred after the first read of /alerts/recent and by
 *   the last, by type and source.
 * Reads are seen from the upstream side (test/support/read-spans.ts), so nothing here asks
 * the exporter what it did. The series names come from the exporter's naming (which family
 * and labels a dotted name lands in is not what this run checks); the values, which
 * metrics are deltas and their units come from the simulator's own catalogue.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const INGEST_DELAY_MS = 3 * MINUTE;
const ACCOUNT = 'pro';

export interface DayRestart {
  /** From the start of the run. */
  readonly atMs: number;
  /** `stop`: a clean stop (the last save on the way out); `kill`: what was on disk at that instant survives, nothing else. */
  readonly kind: 'stop' | 'kill';
  /** How long the exporter stays down; the agents and websites go on meanwhile. */
  readonly downMs: number;
}

export interface DayPlan {
  readonly hours: number;
  readonly hosts: number;
  readonly websites: number;
  readonly seed?: string;
  readonly restarts: readonly DayRestart[];
  /** Every monitoring request answered 503 from `fromMs` to `toMs` (from the start of the run). */
  readonly outage: { readonly fromMs: number; readonly toMs: number };
  /** After the last hour, how long the run goes on so that late points arrive and are read. */
  readonly settleMs: number;
  readonly lateData?: { readonly lateShare: number; readonly maxLatenessMinutes: number; readonly neverShare: number };
  /** `metrics.include` of the account; every metric when absent. */
  readonly metrics?: readonly string[];
  /** Scrape /metrics this often to check that no kept counter ever goes down. */
  readonly watchEveryMs?: number;
  readonly onSample?: (sample: MemorySample) => void;
  /** `elapsedMs` from the start of the run. */
  readonly onEvent?: (elapsedMs: number, text: string) => void;
}

export interface MemorySample {
  readonly hour: number;
  /** After a full GC; the exporter, the simulator and the run share the process. */
  readonly heapUsedBytes: number;
  readonly rssBytes: number;
  /** The V8 heap's committed size: used after GC plus the room V8 keeps. */
  readonly heapTotalBytes: number;
  /** Memory of Buffers and other objects outside the V8 heap. */
  readonly externalBytes: number;
  /** Series on /metrics; undefined while the exporter is down. */
  readonly seriesExposed: number | undefined;
  /** Requests that reached the simulator for the account so far, every answer included. */
  readonly upstreamRequests: number;
  readonly note: string;
}

export type CounterKind = 'host delta counters' | 'website check counters' | 'alert event counters';
export const COUNTER_KINDS: readonly CounterKind[] = ['host delta counters', 'website check counters', 'alert event counters'];

export interface CounterCheck {
  readonly kind: CounterKind;
  readonly series: string;
  readonly expected: number;
  /** Undefined when /metrics has no such series. */
  readonly exported: number | undefined;
}

export interface DayResult {
  readonly checks: readonly CounterCheck[];
  /** Counter series on /metrics of a kind compared that no expectation names (a total counted beside its devices, a stray series). */
  readonly unexpected: readonly string[];
  /** Series that went down between two scrapes, with the moment. */
  readonly decreases: readonly string[];
  readonly scrapesWatched: number;
  readonly samples: readonly MemorySample[];
  /** Of one delta metric a host: minutes counted that reached the API after they were due (late data read later). */
  readonly lateMinutesCounted: number;
  /** Minutes of the compared ranges still on their way at the last read (an agent outage not over yet): neither side counts them. */
  readonly pendingMinutes: number;
  /** Requests the simulator answered 503 in the outage. */
  readonly outage503: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly realSeconds: number;
}

export const exact = (c: CounterCheck): boolean => c.exported === c.expected;

/** The default day: restarts at hours 8 (clean stop) and 18 (kill), the upstream down from 12:00 to 13:00. */
export function dayPlan(options: { hours?: number; hosts?: number; websites?: number } = {}): Omit<DayPlan, 'onSample' | 'onEvent'> {
  const hours = options.hours ?? 24;
  const at = (h: number) => Math.round((h / 24) * hours * HOUR);
  return {
    hours,
    hosts: options.hosts ?? 10,
    websites: options.websites ?? 5,
    seed: 'day',
    restarts: [
      { atMs: at(8), kind: 'stop', downMs: 10 * MINUTE },
      { atMs: at(18) + 37_000, kind: 'kill', downMs: 20 * MINUTE },
    ],
    outage: { fromMs: at(12), toMs: at(12) + HOUR },
    settleMs: 75 * MINUTE,
    lateData: { lateShare: 0.1, maxLatenessMinutes: 60, neverShare: 0.01 },
  };
}

function accountYaml(baseUrl: string, metrics: readonly string[] | undefined): string {
  // late_data_horizon: a point is read again with every poll of its host for this long. Late
  // points come up to 60 min late here, and an agent back from an outage flushes its newest
  // 120 minutes, plus up to 100 s of lag and 10 min between polls of an offline host: 2h30m
  // holds them all (the default 2h would give the oldest minutes of a long agent outage up).
  const include = metrics === undefined ? '' : `    metrics:\n      include: [${metrics.map((m) => JSON.stringify(m)).join(', ')}]\n`;
  return `accounts:\n  - name: ${ACCOUNT}\n    base_url: ${baseUrl}\n    api_key_env: SIM_PRO_KEY\n    late_data_horizon: 2h30m\n${include}`;
}

interface Action {
  readonly atMs: number;
  /** Order among actions at the same moment. */
  readonly order: number;
  run(): Promise<void>;
}

export async function runSoakDay(plan: DayPlan): Promise<DayResult> {
  const started = Date.now();
  const rig: Rig = await startRig({
    simulator: {
      hosts: plan.hosts,
      websites: plan.websites,
      seed: plan.seed ?? 'day',
      rateLimitPerMinute: 120,
      burst: 30,
      random: Math.random,
      ...(plan.lateData ? { lateData: plan.lateData } : {}),
    },
    yaml: (sim) => accountYaml(sim.monitoringBaseUrl, plan.metrics),
  });
  const spans = recordReadSpans(rig.clock);
  try {
    return await runDay(rig, spans, plan, started);
  } finally {
    spans.stop();
    await rig.close();
  }
}

async function runDay(rig: Rig, spans: ReadSpans, plan: DayPlan, started: number): Promise<DayResult> {
  const startMs = rig.clock.now();
  const endOfHours = startMs + plan.hours * HOUR;
  const stateFile = join(rig.dir, 'state.json');
  const account = rig.sim.world.accountByKey(rig.sim.keys.pro);
  if (!account) throw new Error('no simulated account');
  const say = (text: string) => plan.onEvent?.(rig.clock.now() - startMs, text);
  const since = () => elapsedText(rig.clock.now() - startMs);
  const requestsSoFar = () => rig.sim.stats().monitoring[ACCOUNT]?.total ?? 0;
  const samples: MemorySample[] = [];
  const watcher = new CounterWatch(startMs);
  const notes = new Map<number, string[]>();
  const note = (atMs: number, text: string) => {
    // An action on the hour comes after that hour's sample: it belongs to the next one.
    const hour = Math.floor((atMs - startMs) / HOUR) + 1;
    notes.set(hour, [...(notes.get(hour) ?? []), text]);
  };
  let outage503 = 0;

  const actions: Action[] = [];
  const watchEvery = plan.watchEveryMs ?? 10 * MINUTE;
  const watch = async () => {
    if (rig.exporter) watcher.see(await rig.scrape(), rig.clock.now());
  };
  const endMs = endOfHours + plan.settleMs;
  for (let t = startMs + watchEvery; t <= endMs; t += watchEvery) actions.push({ atMs: t, order: 1, run: watch });
  for (let hour = 1; hour <= plan.hours; hour++) {
    actions.push({
      atMs: startMs + hour * HOUR,
      order: 0,
      run: async () => {
        collectGarbage();
        const memory = process.memoryUsage();
        const status = rig.exporter?.status() as { accounts: { series_exposed: number }[] } | undefined;
        const sample: MemorySample = {
          hour,
          heapUsedBytes: memory.heapUsed,
          rssBytes: memory.rss,
          heapTotalBytes: memory.heapTotal,
          externalBytes: memory.external,
          seriesExposed: status?.accounts[0]?.series_exposed,
          upstreamRequests: requestsSoFar(),
          note: (notes.get(hour) ?? []).join('; '),
        };
        samples.push(sample);
        plan.onSample?.(sample);
        await Promise.resolve();
      },
    });
  }
  const { fromMs, toMs } = plan.outage;
  if (toMs > fromMs) {
    let before = 0;
    actions.push({
      atMs: startMs + fromMs,
      order: 2,
      run: async () => {
        await watch();
        before = rig.sim.stats().monitoring[ACCOUNT]?.by_status['503'] ?? 0;
        rig.sim.faults.apply({ target: 'monitoring', error_503: 1 });
        say('upstream down: every monitoring request answered 503');
        note(rig.clock.now(), `upstream down (503) from ${since()}`);
      },
    });
    actions.push({
      atMs: startMs + toMs,
      order: 2,
      run: async () => {
        rig.sim.faults.clear();
        outage503 = (rig.sim.stats().monitoring[ACCOUNT]?.by_status['503'] ?? 0) - before;
        say(`upstream back (${outage503} requests were answered 503)`);
        note(rig.clock.now(), `upstream back at ${since()}`);
        await Promise.resolve();
      },
    });
  }
  for (const restart of plan.restarts) {
    actions.push({
      atMs: startMs + restart.atMs,
      order: 3,
      run: async () => {
        await watch();
        const exporter = rig.exporter;
        if (!exporter) throw new Error('a restart while the exporter is down');
        const onDisk = restart.kind === 'kill' && existsSync(stateFile) ? readFileSync(stateFile) : undefined;
        await exporter.stop();
        rig.exporter = undefined;
        if (restart.kind === 'kill') {
          // What survives a kill -9: the last completed save, nothing the dying process did after it.
          if (onDisk) writeFileSync(stateFile, onDisk);
          else rmSync(stateFile, { force: true });
        }
        say(restart.kind === 'kill' ? 'exporter killed (the state file as it was on disk is kept)' : 'exporter stopped (state saved on the way out)');
        note(rig.clock.now(), `${restart.kind === 'kill' ? 'killed' : 'stopped'} at ${since()}, down ${restart.downMs / MINUTE} min`);
      },
    });
    actions.push({
      atMs: startMs + restart.atMs + restart.downMs,
      order: 4,
      run: async () => {
        await rig.start({ stateFile });
        say('exporter started from its state file');
      },
    });
    actions.push({ atMs: startMs + restart.atMs + restart.downMs + MINUTE, order: 1, run: watch });
  }
  actions.sort((a, b) => a.atMs - b.atMs || a.order - b.order);

  await rig.start({ stateFile });
  say(`exporter started (${plan.hosts} hosts, ${plan.websites} websites, state file ${stateFile})`);
  for (const action of actions) {
    if (action.atMs > rig.clock.now()) await rig.advance(action.atMs - rig.clock.now());
    await action.run();
  }
  if (endMs > rig.clock.now()) await rig.advance(endMs - rig.clock.now());
  if (!rig.exporter) throw new Error('the exporter is down at the end');
  // Publications wait for the save that covers them (at most 5 s): save, then read what the last polls made.
  await rig.exporter.saveState();
  const body = await rig.scrape();
  watcher.see(body, rig.clock.now());
  say('compared with the simulator');

  const exported = parseExposition(body);
  const hostChecks = hostDeltaChecks(rig, account, spans, exported, includes(plan.metrics));
  const checks = [...hostChecks.checks, ...websiteChecks(account, spans, exported, startMs, rig.clock.now()), ...alertEventChecks(account, spans, exported)];
  const expectedSeries = new Set(checks.map((c) => c.series));
  const unexpected = [...exported.values()].filter((s) => isComparedKind(s) && !expectedSeries.has(s.text)).map((s) => `${s.text} ${s.value}`);
  return {
    checks,
    unexpected,
    decreases: watcher.decreases,
    scrapesWatched: watcher.scrapes,
    samples,
    lateMinutesCounted: hostChecks.lateMinutes,
    pendingMinutes: hostChecks.pendingMinutes,
    outage503,
    startMs,
    endMs: rig.clock.now(),
    realSeconds: (Date.now() - started) / 1000,
  };
}

/** Time since the start of the run, `+8:00:37`. */
export function elapsedText(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `+${Math.floor(seconds / 3600)}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
}

/** One sample line of /metrics: its family, labels and value. */
interface ExposedSeries {
  readonly text: string;
  readonly name: string;
  readonly labels: ReadonlyMap<string, string>;
  readonly value: number;
}

const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function parseExposition(body: string): Map<string, ExposedSeries> {
  const series = new Map<string, ExposedSeries>();
  for (const line of body.split('\n')) {
    if (!line.startsWith('monapi_')) continue;
    const space = line.lastIndexOf(' ');
    const text = line.slice(0, space);
    const brace = text.indexOf('{');
    const name = brace < 0 ? text : text.slice(0, brace);
    const labels = new Map<string, string>();
    if (brace >= 0) for (const [, key, value] of text.slice(brace).matchAll(LABEL)) labels.set(key!, value!.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c)));
    series.set(text, { text, name, labels, value: Number(line.slice(space + 1)) });
  }
  return series;
}

/** The counters this run compares: every counter of a host (a delta's `_total`, a timer's `_count`), website checks, alert events. */
function isComparedKind(s: ExposedSeries): boolean {
  if (s.name === 'monapi_website_checks_total' || s.name === 'monapi_alert_events_total') return true;
  return s.labels.has('host_uuid') && (s.name.endsWith('_total') || s.name.endsWith('_count'));
}

function keyOf(name: string, labels: ReadonlyMap<string, string> | Readonly<Record<string, string>>): string {
  const entries = labels instanceof Map ? [...labels] : Object.entries(labels);
  return `${name}{${entries
    .filter(([k]) => k !== 'account')
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join(',')}}`;
}

const due = (readMs: number) => Math.floor((readMs - INGEST_DELAY_MS) / MINUTE) * MINUTE;

/** `metrics.include` globs (docs/configuration.md): `*` any run of characters, `?` one. */
function includes(globs: readonly string[] | undefined): (name: string) => boolean {
  if (globs === undefined) return () => true;
  const patterns = globs.map((g) => new RegExp(`^${g.replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*').replaceAll('?', '.')}$`));
  return (name) => patterns.some((p) => p.test(name));
}

/**
 * The names of a host's delta metrics the exporter exports: those the account includes, less
 * a host-level total where the host reports it per device (docs/metrics.md).
 */
function deltaNamesOf(account: SimAccount, hostUuid: string, included: (name: string) => boolean): string[] {
  const names = Object.values(account.metricCatalogue(hostUuid) ?? {})
    .flat()
    .filter(included);
  const brokenDown = new Set(names.map((n) => splitDeviceName(n)?.base).filter((b) => b !== undefined));
  return names.filter((n) => agentMetric(n)?.kind === 'delta' && !brokenDown.has(n));
}

/** Sent in kilobytes, exposed in bytes (docs/metrics.md); every other delta unit is exposed as sent. */
function exposedScale(name: string): number {
  return agentMetric(name)?.unit === 'kilobytes' ? 1024 : 1;
}

function hostDeltaChecks(rig: Rig, account: SimAccount, spans: ReadSpans, exported: ReadonlyMap<string, ExposedSeries>, included: (name: string) => boolean): { checks: CounterCheck[]; lateMinutes: number; pendingMinutes: number } {
  const naming = new SeriesNaming();
  const byKey = new Map([...exported.values()].filter((s) => s.labels.has('host_uuid')).map((s) => [keyOf(s.name, s.labels), s]));
  const checks: CounterCheck[] = [];
  let lateMinutes = 0;
  let pendingMinutes = 0;
  for (const host of account.hosts(rig.clock.now()).filter((h) => h.allowed)) {
    const names = deltaNamesOf(account, host.uuid, included);
    for (const [index, name] of names.entries()) {
      const metric = naming.metric(name);
      const family =
        metric.role.kind === 'delta' ? metric.role.spec.name : metric.role.kind === 'timer' && metric.role.stat === 'count' ? `${metric.role.spec.name}_count` : undefined;
      if (family === undefined) throw new Error(`${name}: a delta in the simulator's catalogue, a ${metric.role.kind} to the exporter`);
      const key = keyOf(family, { ...metric.labels, host_uuid: host.uuid });
      const span: ReadSpan | undefined = spans.series(account.key, host.uuid, name);
      const found = byKey.get(key);
      const series = found?.text ?? `${family}{account="${ACCOUNT}",host_uuid="${host.uuid}"${Object.entries(metric.labels).map(([k, v]) => `,${k}="${v}"`).join('')}}`;
      if (span === undefined) {
        // Never asked for: a counter the exporter lost track of. Nothing can be expected of it but its absence.
        checks.push({ kind: 'host delta counters', series: `${series} (never read)`, expected: NaN, exported: found?.value });
        continue;
      }
      const [fromMs, toMs] = [due(span.firstMs), due(span.lastMs)];
      const truth = toMs > fromMs ? rig.sim.truth({ key: account.key, hostUuid: host.uuid, metric: name, fromMs, toMs, asOfMs: span.lastMs }) : undefined;
      pendingMinutes += truth?.pending ?? 0;
      if (index === 0 && truth) {
        const detail = rig.sim.truth({ key: account.key, hostUuid: host.uuid, metric: name, fromMs, toMs, asOfMs: span.lastMs, detail: true });
        lateMinutes += (detail.minutes ?? []).filter((m) => m.arrivesAtMs !== null && m.arrivesAtMs <= span.lastMs && m.arrivesAtMs > m.minuteMs + MINUTE + INGEST_DELAY_MS).length;
      }
      checks.push({ kind: 'host delta counters', series, expected: (truth?.sum ?? 0) * exposedScale(name), exported: found?.value });
    }
  }
  return { checks, lateMinutes, pendingMinutes };
}

function websiteChecks(account: SimAccount, spans: ReadSpans, exported: ReadonlyMap<string, ExposedSeries>, startMs: number, nowMs: number): CounterCheck[] {
  const counters = [...exported.values()].filter((s) => s.name === 'monapi_website_checks_total');
  const checks: CounterCheck[] = [];
  for (const website of account.websites(nowMs)) {
    const span = spans.checks(account.key, website.id);
    if (span === undefined && website.enabled) {
      checks.push({ kind: 'website check counters', series: `monapi_website_checks_total{website_id="${website.id}"} (never read)`, expected: NaN, exported: undefined });
      continue;
    }
    // A paused website is never asked for its checks: what it shows (if anything) must be the checks it made in the run.
    const [fromMs, toMs] = span ? [span.firstMs, span.lastMs] : [startMs, nowMs];
    const made = toMs > fromMs ? account.checks(website.id, fromMs + 1, toMs) : [];
    for (const result of ['success', 'failure'] as const) {
      const found = counters.find((s) => s.labels.get('website_id') === String(website.id) && s.labels.get('result') === result);
      if (span === undefined && found === undefined) continue;
      const expected = made.filter((c) => c.success === (result === 'success')).length;
      checks.push({ kind: 'website check counters', series: found?.text ?? `monapi_website_checks_total{website_id="${website.id}",result="${result}"}`, expected, exported: found?.value });
    }
  }
  return checks;
}

/** Largest page of /alerts/recent. */
const ALL_RECENT = 500;

function alertEventChecks(account: SimAccount, spans: ReadSpans, exported: ReadonlyMap<string, ExposedSeries>): CounterCheck[] {
  const span = spans.alerts(account.key);
  if (span === undefined) return [{ kind: 'alert event counters', series: 'monapi_alert_events_total (never read)', expected: NaN, exported: undefined }];
  // Every event of the run, an hour at a time (the simulator answers the newest `limit` of its lookback).
  const events = new Map<string, { type: string; sourceId: number; atMs: number }>();
  for (let at = span.firstMs; ; at = Math.min(at + HOUR, span.lastMs)) {
    const page = account.recentAlerts(at, ALL_RECENT);
    const oldest = Math.min(...page.map((e) => Date.parse(e.occurred_at)));
    if (page.length === ALL_RECENT && oldest > at - HOUR) throw new Error('more alert events in an hour than one page holds: fewer hosts');
    for (const e of page) events.set(`${e.type} ${e.id}`, { type: e.type, sourceId: e.source_id, atMs: Date.parse(e.occurred_at) });
    if (at === span.lastMs) break;
  }
  const expected = new Map<string, number>();
  for (const e of events.values()) {
    if (e.atMs <= span.firstMs || e.atMs > span.lastMs) continue;
    const key = `${e.type} ${e.sourceId}`;
    expected.set(key, (expected.get(key) ?? 0) + 1);
  }
  const counters = [...exported.values()].filter((s) => s.name === 'monapi_alert_events_total');
  const keyOfSeries = (s: ExposedSeries) => `${s.labels.get('event_type')} ${s.labels.get('source_id')}`;
  // Events before the first read are history: their series are there, at 0, and compared as such.
  const keys = new Set([...expected.keys(), ...counters.map(keyOfSeries)]);
  return [...keys].sort().map((key) => {
    const found = counters.find((s) => keyOfSeries(s) === key);
    return { kind: 'alert event counters', series: found?.text ?? `monapi_alert_events_total{event=${key}}`, expected: expected.get(key) ?? 0, exported: found?.value };
  });
}

/** Counters kept across restarts, scraped again and again: none may ever go down (Prometheus would take it for a reset). */
class CounterWatch {
  readonly decreases: string[] = [];
  scrapes = 0;
  private previous = new Map<string, number>();

  constructor(private readonly startMs: number) {}

  see(body: string, atMs: number): void {
    const now = new Map<string, number>();
    for (const line of body.split('\n')) {
      if (!line.startsWith('monapi_')) continue;
      const space = line.lastIndexOf(' ');
      const text = line.slice(0, space);
      if (!CounterWatch.kept(text)) continue;
      const value = Number(line.slice(space + 1));
      now.set(text, value);
      const before = this.previous.get(text);
      if (before !== undefined && value < before) this.decreases.push(`${elapsedText(atMs - this.startMs)} ${text}: ${before} -> ${value}`);
    }
    // A series away from one scrape (the exporter restarting) is still compared at its next appearance.
    for (const [text, value] of this.previous) if (!now.has(text)) now.set(text, value);
    this.previous = now;
    this.scrapes++;
  }

  /** What the state file keeps: a host's counters and summaries, websites' check counters and histograms, alert events. */
  private static kept(series: string): boolean {
    const name = series.slice(0, series.indexOf('{') < 0 ? series.length : series.indexOf('{'));
    if (name === 'monapi_alert_events_total') return true;
    if (name.startsWith('monapi_website_') && /_(total|count|sum|bucket)$/.test(name)) return true;
    return series.includes('host_uuid="') && /_(total|count|sum)$/.test(name);
  }
}
