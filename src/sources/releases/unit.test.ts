import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../exporter/config.js';
import { createRequestBudget } from '../../budget/index.js';
import { renderText } from '../../exposition/render-text.js';
import type { FamilySamples, MetricSink } from '../../exposition/model.js';
import { FakeClock, flushMicrotasks } from '../../lib/clock.js';
import { createSchedulerMetrics } from '../../scheduler/metrics.js';
import { TopicBoard } from '../../scheduler/topics.js';
import { UnitRuntime } from '../../scheduler/unit-runtime.js';
import { NotFoundError } from '../../upstream/http/errors.js';
import type { Transport } from '../../upstream/http/transport.js';
import { ReleaseClient, type LatestRelease, type ReleaseProject } from '../../upstream/releases/client.js';
import { SharedReleaseLookups } from '../../upstream/releases/lookups.js';
import type { Component } from '../components/decode.js';
import { HOST_COMPONENTS } from '../components/topics.js';
import { POLLED_HOSTS, type InventoryHost } from '../hosts/topics.js';
import { outdatedSource } from '../outdated/index.js';
import { releasesSource } from './index.js';

/**
 * The release lookups as the exporter runs them: both release sources in one unit on a
 * scheduler, on a fake clock whose cron fire times are real ('17 *\/2 * * *': 12:17, 14:17,
 * ... from the clock's start at 12:00 UTC), with the accounts' components and host lists
 * given as the accounts' sources would provide them.
 */

class MemorySink implements MetricSink {
  readonly content = new Map<string, readonly FamilySamples[]>();
  publish(group: string, families: readonly FamilySamples[]): void {
    this.content.set(group, families);
  }
  retract(group: string): void {
    this.content.delete(group);
  }
  groups(prefix: string): string[] {
    return [...this.content.keys()].filter((g) => g.startsWith(prefix));
  }
  /** Each group rendered on its own: several groups hold series of one family. */
  text(): string {
    return [...this.content.values()].map((families) => renderText(families)).join('');
  }
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The clock starts at 12:00; the schedule fires at 17 past every second hour. */
const START = Date.UTC(2026, 10, 22, 12, 0, 0);
const fireAt = (hour: number) => Date.UTC(2026, 10, 22, hour, 17, 0);

interface UnitOptions {
  readonly projects?: string;
  readonly outdated?: string;
  readonly client: { latest(project: ReleaseProject): Promise<LatestRelease> };
  readonly ratePerMinute?: number;
}

function releasesUnit(clock: FakeClock, options: UnitOptions) {
  const config = parseConfig(
    `accounts:\n  - {name: prod, base_url: http://mon.invalid/api/v2, api_key_env: K}\nreleases:\n  free_base_url: http://free.invalid\n  projects: ${options.projects ?? '[]'}\n  outdated: ${options.outdated ?? '{enabled: false}'}\n`,
    { env: { K: 'k' } },
  );
  const releases = config.releases;
  if (releases === undefined) throw new Error('no releases section');
  const sink = new MemorySink();
  const board = new TopicBoard();
  const budget = createRequestBudget({ name: '(releases)', ratePerMinute: options.ratePerMinute ?? 60, burst: 1, initialTokens: 1, headroom: 0, concurrency: 2, maxRetries: 0, clock });
  const runtime = new UnitRuntime({
    unit: { name: '(releases)', baseUrl: 'http://free.invalid', counterGraceMs: 0, shard: { ordinal: 0, total: 1 } },
    sources: [releasesSource, outdatedSource].filter((source) => releases.sources[source.name]?.enabled),
    sourceConfig: releases.sources,
    exporter: config.exporter,
    upstream: new SharedReleaseLookups(options.client, clock, HOUR),
    budget,
    sink,
    clock,
    log: pino({ level: 'silent' }),
    metrics: createSchedulerMetrics(new Registry(), clock),
    board,
    concurrency: 2,
    reportsUp: false,
    reservedFamilyNames: [],
  });
  /** What an account's components and host list sources would provide. */
  const account = (name: string) => {
    const components = new Map<string, readonly Component[]>();
    return {
      components(uuid: string, list: readonly Component[]) {
        components.set(uuid, list);
        board.provide(name, HOST_COMPONENTS, components);
      },
      agents(hosts: { uuid: string; agent_version?: string }[]) {
        board.provide(name, POLLED_HOSTS, new Map(hosts.map((h): [string, InventoryHost] => [h.uuid, { ...h, hostname: h.uuid, online: true, tags: [] }])));
      },
    };
  };
  return { sink, runtime, budget, account };
}

const release = (version: string): LatestRelease => ({ version, rawVersion: version, type: 'release', producedAtMs: 0, freshness: 'fetch_time' });

function cannedClient(answers: (LatestRelease | Error)[]) {
  const asked: ReleaseProject[] = [];
  return {
    asked,
    latest: (project: ReleaseProject) => {
      asked.push(project);
      const answer = answers.shift() ?? new Error('no more answers');
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
}

/** Moves the clock to an instant, firing due timers on the way. */
async function advanceTo(clock: FakeClock, atMs: number): Promise<void> {
  await clock.advanceAsync(atMs - clock.now(), 1_000);
  await flushMicrotasks();
}

const notFound = () => new NotFoundError({ api: 'releases', endpoint: '/{owner}/{repository}' }, 'gone');

describe('the releases source', () => {
  it('looks up at start, is ready after the first round, and keeps the last version on a failure', async () => {
    const clock = new FakeClock(START);
    const client = cannedClient([release('1.27.3'), notFound()]);
    const { sink, runtime } = releasesUnit(clock, { projects: '[nginx/nginx]', client });
    expect(runtime.ready()).toBe(false);
    runtime.start();
    await flushMicrotasks();
    expect(runtime.ready()).toBe(true);
    expect(sink.text()).toContain('monapi_release_info{project="nginx/nginx",major="",version="1.27.3",release_type="release"} 1');

    // Asked outside the schedule at 12:00: the run at 14:17 is the next one more than 2 hours later.
    await advanceTo(clock, fireAt(14) + MINUTE);
    expect(client.asked).toHaveLength(2);
    expect(sink.text()).toContain('version="1.27.3"');
    expect(sink.text()).toContain('monapi_release_lookup_success{project="nginx/nginx",major=""} 0');
    await runtime.stop();
  });

  it('reports its health as one source: pending, up, then down with the reason of the failed lookup', async () => {
    const clock = new FakeClock(START);
    const { runtime } = releasesUnit(clock, { projects: '[nginx/nginx]', client: cannedClient([release('1.27.3'), notFound()]) });
    expect(runtime.sourceHealth()).toMatchObject([{ source: 'releases', up: false, reason: 'pending', targets: 1 }]);
    runtime.start();
    await flushMicrotasks();
    expect(runtime.sourceHealth()).toMatchObject([{ source: 'releases', up: true, reason: '' }]);
    expect(runtime.failingSources()).toEqual([]);
    await advanceTo(clock, fireAt(14) + MINUTE);
    expect(runtime.sourceHealth()).toMatchObject([{ source: 'releases', up: false, reason: 'not_found', failing: 1 }]);
    expect(runtime.failingSources()).toMatchObject([{ account: '(releases)', source: 'releases', reason: 'not_found' }]);
    await runtime.stop();
  });

  it('skips a scheduled free-endpoint lookup that comes within 2 hours of the last one (the cache would answer)', async () => {
    const clock = new FakeClock(START);
    const client = cannedClient([release('1.27.3'), release('1.27.4')]);
    const { runtime } = releasesUnit(clock, { projects: '[nginx/nginx]', client });
    runtime.start();
    await flushMicrotasks();
    await advanceTo(clock, fireAt(12) + MINUTE);
    expect(client.asked).toHaveLength(1);
    await advanceTo(clock, fireAt(14) + MINUTE);
    expect(client.asked).toHaveLength(2);
    await runtime.stop();
  });

  it('publishes nothing after stop', async () => {
    let resolve: (r: LatestRelease) => void = () => undefined;
    const clock = new FakeClock(START);
    const { sink, runtime } = releasesUnit(clock, { projects: '[nginx/nginx]', client: { latest: () => new Promise<LatestRelease>((r) => (resolve = r)) } });
    runtime.start();
    await flushMicrotasks();
    const stopped = runtime.stop();
    resolve(release('1.27.3'));
    await stopped;
    await flushMicrotasks();
    expect(sink.groups('')).toEqual([]);
  });
});

describe('the outdated check', () => {
  /** What the fake free endpoint knows: path and query to the version it answers; anything else is a 404. */
  const CATALOGUE: Record<string, string> = {
    '/nginx/nginx?major=1.26': 'release-1.26.2',
    '/nginx/nginx?major=1.27': 'release-1.27.3',
    '/nginx/nginx?major=1': 'release-1.27.3',
    '/php/php-src?major=8.3': 'php-8.3.14',
    '/nginxinc/nginx-amplify-agent?major=1.8': 'v1.8.3',
  };

  function setupOutdated(opts: { line?: string; projects?: string; ratePerMinute?: number } = {}) {
    const clock = new FakeClock(START);
    const asked: string[] = [];
    const askedAt: number[] = [];
    const transport: Transport = {
      get(url) {
        const { pathname, search } = new URL(url);
        asked.push(pathname + search);
        askedAt.push(clock.now());
        const version = CATALOGUE[pathname + search];
        const body = version === undefined ? { error: 'not found' } : { version, type: 'release', tag_date: '2024-11-26 15:39:01+00:00' };
        return Promise.resolve({ status: version === undefined ? 404 : 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(body)) });
      },
    };
    const gate = createRequestBudget({ name: '(releases)', ratePerMinute: opts.ratePerMinute ?? 60, burst: 1, initialTokens: 1, headroom: 0, concurrency: 2, maxRetries: 0, clock });
    const client = new ReleaseClient({ mode: 'free', baseUrl: 'http://free.test', transport, gate, clock });
    const unit = releasesUnit(clock, { projects: opts.projects, outdated: `{line: ${opts.line ?? 'minor'}}`, client, ratePerMinute: opts.ratePerMinute });
    const settle = () => clock.advanceAsync(70_000, 1_000);
    return { ...unit, clock, asked, askedAt, settle, budget: gate };
  }

  const nginx = (version: string): Component => ({ type: 'nginx', display_name: 'nginx', version });
  const lines = (text: string, family: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`${family}{`))
      .sort();
  const planOf = (runtime: UnitRuntime, source: string) => runtime.plan().sources.find((s) => s.source === source);

  it('looks up each line once for every host that needs it, soon after the components arrive, and exports the verdicts', async () => {
    const { sink, runtime, account, asked, settle } = setupOutdated();
    runtime.start();
    const prod = account('prod');
    const staging = account('staging');
    prod.components('h1', [nginx('1.26.1'), { type: 'phpfpm', display_name: 'phpfpm', version: '8.3.14' }]);
    prod.components('h2', [nginx('1.26.2')]);
    staging.components('h3', [nginx('1.27.3'), nginx('garbage')]);
    staging.agents([{ uuid: 'h3', agent_version: '1.8.11-1' }, { uuid: 'h4' }]);
    await settle();

    expect([...asked].sort()).toEqual(['/nginx/nginx?major=1.26', '/nginx/nginx?major=1.27', '/nginxinc/nginx-amplify-agent?major=1.8', '/php/php-src?major=8.3']);
    const text = sink.text();
    expect(lines(text, 'monapi_component_outdated')).toEqual([
      'monapi_component_outdated{account="prod",host_uuid="h1",component="nginx",software="nginx",version="1.26.1",project="nginx/nginx",line="1.26",latest_version="1.26.2"} 1',
      'monapi_component_outdated{account="prod",host_uuid="h1",component="phpfpm",software="php-fpm",version="8.3.14",project="php/php-src",line="8.3",latest_version="8.3.14"} 0',
      'monapi_component_outdated{account="prod",host_uuid="h2",component="nginx",software="nginx",version="1.26.2",project="nginx/nginx",line="1.26",latest_version="1.26.2"} 0',
      'monapi_component_outdated{account="staging",host_uuid="h3",component="agent",software="agent",version="1.8.11-1",project="nginxinc/nginx-amplify-agent",line="1.8",latest_version="1.8.3"} 0',
      'monapi_component_outdated{account="staging",host_uuid="h3",component="nginx",software="nginx",version="1.27.3",project="nginx/nginx",line="1.27",latest_version="1.27.3"} 0',
    ]);
    expect(text).toContain('monapi_component_version_checks{account="staging",result="unknown_version"} 2');
    expect(text).toContain('monapi_component_version_checks{account="prod",result="outdated"} 1');
    expect(lines(text, 'monapi_component_latest_version_info')).toEqual([
      'monapi_component_latest_version_info{project="nginx/nginx",line="1.26",version="1.26.2"} 1',
      'monapi_component_latest_version_info{project="nginx/nginx",line="1.27",version="1.27.3"} 1',
      'monapi_component_latest_version_info{project="nginxinc/nginx-amplify-agent",line="1.8",version="1.8.3"} 1',
      'monapi_component_latest_version_info{project="php/php-src",line="8.3",version="8.3.14"} 1',
    ]);
    expect(runtime.plan().sources.map((s) => ({ source: s.source, jobs: s.jobs, requestsPerRun: s.requestsPerRun }))).toEqual([{ source: 'outdated', jobs: 4, requestsPerRun: 4 }]);
    expect(runtime.plan().requestsPerCycle).toBe(4);
    await runtime.stop();
  });

  it('asks the major line under the major policy: fewer lookups, a newer minor counts', async () => {
    const { sink, runtime, account, asked, settle } = setupOutdated({ line: 'major' });
    runtime.start();
    account('prod').components('h1', [nginx('1.26.2'), { type: 'nginx', display_name: 'nginx 2', version: '1.27.3' }]);
    await settle();
    expect(asked).toEqual(['/nginx/nginx?major=1']);
    expect(lines(sink.text(), 'monapi_component_outdated').map((l) => l.replace(/^.*,version="([^"]*)",project="nginx\/nginx",line="([^"]*)",latest_version="([^"]*)"\} /, '$1 $2 $3 ')).sort()).toEqual([
      '1.26.2 1 1.27.3 1',
      '1.27.3 1 1.27.3 0',
    ]);
    await runtime.stop();
  });

  it('shares one answer between a configured project and a line, and counts a line without an answer', async () => {
    const { sink, runtime, account, asked, settle } = setupOutdated({ projects: '[{id: nginx/nginx, major: 1.26}]' });
    runtime.start();
    account('prod').components('h1', [nginx('1.26.1'), { type: 'mysql', display_name: 'mysql', version: '8.0.40' }]);
    await settle();
    expect(asked).toEqual(['/nginx/nginx?major=1.26', '/mysql/mysql-server?major=8.0']);
    const text = sink.text();
    expect(text).toContain('monapi_release_info{project="nginx/nginx",major="1.26",version="1.26.2",release_type="release"} 1');
    expect(lines(text, 'monapi_component_outdated')).toHaveLength(1);
    expect(text).toContain('monapi_component_version_checks{account="prod",result="no_answer"} 1');
    expect(runtime.sourceHealth()).toMatchObject([
      { source: 'releases', up: true },
      { source: 'outdated', up: false, reason: 'not_found', targets: 2, failing: 1 },
    ]);
    expect(planOf(runtime, 'releases')).toMatchObject({ jobs: 1, requestsPerRun: 1 });
    expect(planOf(runtime, 'outdated')).toMatchObject({ jobs: 2, requestsPerRun: 1 });
    await runtime.stop();
  });

  it("never asks a line again within the free endpoint's 2-hour cache, and forgets lines nobody needs", async () => {
    const { clock, sink, runtime, account, asked, settle } = setupOutdated();
    runtime.start();
    const prod = account('prod');
    prod.components('h1', [nginx('1.26.1')]);
    await settle();
    expect(asked).toEqual(['/nginx/nginx?major=1.26']);

    // The run at 12:17: the line was asked outside the schedule within 2 hours.
    await advanceTo(clock, fireAt(12) + MINUTE);
    expect(asked).toHaveLength(1);

    // A line that appears later is asked at once, and not again by the next run.
    await advanceTo(clock, fireAt(13));
    prod.components('h2', [nginx('1.27.2')]);
    await settle();
    expect(asked).toEqual(['/nginx/nginx?major=1.26', '/nginx/nginx?major=1.27']);
    await advanceTo(clock, fireAt(14) + MINUTE);
    expect(asked.slice(2)).toEqual(['/nginx/nginx?major=1.26']);

    // Two hours on, the next run asks both; a run after that every line it asked itself.
    await advanceTo(clock, fireAt(16) + MINUTE);
    expect(asked.slice(3).sort()).toEqual(['/nginx/nginx?major=1.26', '/nginx/nginx?major=1.27']);

    // h2 upgrades: its old line leaves the plan and its latest version leaves /metrics.
    prod.components('h2', [nginx('1.26.2')]);
    await settle();
    expect(lines(sink.text(), 'monapi_component_latest_version_info')).toEqual(['monapi_component_latest_version_info{project="nginx/nginx",line="1.26",version="1.26.2"} 1']);
    await advanceTo(clock, fireAt(18) + MINUTE);
    expect(asked.slice(5)).toEqual(['/nginx/nginx?major=1.26']);
    await runtime.stop();
  });

  it('spends the release budget: lookups wait for its tokens', async () => {
    const { clock, runtime, account, budget, asked, askedAt } = setupOutdated({ ratePerMinute: 6 });
    runtime.start();
    account('prod').components('h1', [nginx('1.26.1'), nginx('1.27.1'), { type: 'phpfpm', display_name: 'phpfpm', version: '8.3.1' }]);
    for (let i = 0; i < 60 && asked.length < 3; i++) await clock.advanceAsync(1_000);
    expect(asked).toHaveLength(3);
    const times = askedAt;
    // One token at first, then one every 10 s (6 a minute): the lookups are spread out, not fired at once.
    expect(times[2]! - times[0]!).toBeGreaterThanOrEqual(20_000);
    expect(budget.snapshot().totals.attempts).toBe(3);
    await runtime.stop();
  });
});
