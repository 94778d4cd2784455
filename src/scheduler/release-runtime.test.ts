import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { FreeReleasesConfig } from '../config/types.js';
import { renderText } from '../exposition/render-text.js';
import type { FamilySamples, MetricSink } from '../exposition/model.js';
import { FakeClock, flushMicrotasks } from '../lib/clock.js';
import { NotFoundError } from '../upstream/http/errors.js';
import type { LatestRelease, ReleaseProject } from '../upstream/releases/client.js';
import { createRequestBudget } from '../budget/index.js';
import { OutdatedTracker } from '../sources/outdated/tracker.js';
import { resolveSoftwareRules, type LinePolicy } from '../sources/outdated/software.js';
import type { Transport } from '../upstream/http/transport.js';
import { ReleaseClient } from '../upstream/releases/client.js';
import { NEW_LINE_DELAY_MS, RELEASES_ACCOUNT, ReleaseRuntime, type CronTrigger } from './release-runtime.js';

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

const config: FreeReleasesConfig = {
  mode: 'free',
  freeBaseUrl: 'http://releases.invalid',
  schedule: '17 */2 * * *',
  scheduleTimezone: 'Etc/UTC',
  shortestScheduleGapMs: 7_200_000,
  allowPollingFasterThanCache: false,
  projects: [{ id: 'nginx/nginx', major: undefined }],
};

function setup(answers: (LatestRelease | Error)[]) {
  const clock = new FakeClock();
  const sink = new MemorySink();
  let fire: (() => void) | undefined;
  const trigger: CronTrigger = (_expr, _tz, run) => {
    fire = run;
    return { stop: () => (fire = undefined) };
  };
  const asked: ReleaseProject[] = [];
  const client = {
    latest: (project: ReleaseProject) => {
      asked.push(project);
      const answer = answers.shift() ?? new Error('no more answers');
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
  const runtime = new ReleaseRuntime({ config, client, sink, clock, log: pino({ level: 'silent' }), registry: new Registry(), trigger });
  return { clock, sink, runtime, asked, fire: () => fire?.() };
}

const release = (version: string): LatestRelease => ({ version, rawVersion: version, type: 'release', producedAtMs: 0, freshness: 'fetch_time' });

describe('ReleaseRuntime', () => {
  it('looks up at start, is ready after the first round, and keeps the last version on a failure', async () => {
    const { clock, sink, runtime, asked, fire } = setup([release('1.27.3'), new NotFoundError({ api: 'releases', endpoint: '/{owner}/{repository}' }, 'gone')]);
    runtime.start();
    expect(runtime.ready()).toBe(false);
    await flushMicrotasks();
    expect(runtime.ready()).toBe(true);
    expect(sink.text()).toContain('monapi_release_info{project="nginx/nginx",major="",version="1.27.3",release_type="release"} 1');

    clock.advance(2 * 3_600_000);
    fire();
    await flushMicrotasks();
    expect(asked).toHaveLength(2);
    expect(sink.text()).toContain('version="1.27.3"');
    expect(sink.text()).toContain('monapi_release_lookup_success{project="nginx/nginx",major=""} 0');
    runtime.stop();
  });

  it('reports its health as one source: pending, up, then down with the reason of the failed lookup', async () => {
    const { clock, runtime, fire } = setup([release('1.27.3'), new NotFoundError({ api: 'releases', endpoint: '/{owner}/{repository}' }, 'gone')]);
    expect(runtime.sourceHealth()).toMatchObject([{ source: 'releases', up: false, reason: 'pending', targets: 1 }]);
    runtime.start();
    await flushMicrotasks();
    expect(runtime.sourceHealth()).toMatchObject([{ source: 'releases', up: true, reason: '' }]);
    expect(runtime.failingSources()).toEqual([]);
    clock.advance(2 * 3_600_000);
    fire();
    await flushMicrotasks();
    expect(runtime.sourceHealth()).toMatchObject([{ source: 'releases', up: false, reason: 'not_found', failing: 1 }]);
    expect(runtime.failingSources()).toMatchObject([{ account: '(releases)', source: 'releases', reason: 'not_found' }]);
    runtime.stop();
  });

  it('skips a scheduled free-endpoint lookup that comes within 2 hours of the last one (the cache would answer)', async () => {
    const { clock, runtime, asked, fire } = setup([release('1.27.3'), release('1.27.4')]);
    runtime.start();
    await flushMicrotasks();
    clock.advance(7 * 60_000);
    fire();
    await flushMicrotasks();
    expect(asked).toHaveLength(1);
    clock.advance(2 * 3_600_000);
    fire();
    await flushMicrotasks();
    expect(asked).toHaveLength(2);
    runtime.stop();
  });

  it('publishes nothing after stop', async () => {
    let resolve: (r: LatestRelease) => void = () => undefined;
    const clock = new FakeClock();
    const sink = new MemorySink();
    const runtime = new ReleaseRuntime({
      config,
      client: { latest: () => new Promise<LatestRelease>((r) => (resolve = r)) },
      sink,
      clock,
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      trigger: () => ({ stop: () => undefined }),
    });
    runtime.start();
    runtime.stop();
    resolve(release('1.27.3'));
    await flushMicrotasks();
    expect(sink.groups('')).toEqual([]);
  });
});

describe('ReleaseRuntime with the outdated check', () => {
  const HOUR = 3_600_000;
  /** What the fake free endpoint knows: path and query to the version it answers; anything else is a 404. */
  const CATALOGUE: Record<string, string> = {
    '/nginx/nginx?major=1.26': 'release-1.26.2',
    '/nginx/nginx?major=1.27': 'release-1.27.3',
    '/nginx/nginx?major=1': 'release-1.27.3',
    '/php/php-src?major=8.3': 'php-8.3.14',
    '/nginxinc/nginx-amplify-agent?major=1.8': 'v1.8.3',
  };

  function setupOutdated(opts: { line?: LinePolicy; projects?: FreeReleasesConfig['projects']; ratePerMinute?: number } = {}) {
    const clock = new FakeClock();
    const sink = new MemorySink();
    const asked: string[] = [];
    const transport: Transport = {
      get(url) {
        const { pathname, search } = new URL(url);
        asked.push(pathname + search);
        const version = CATALOGUE[pathname + search];
        const body = version === undefined ? { error: 'not found' } : { version, type: 'release', tag_date: '2024-11-26 15:39:01+00:00' };
        return Promise.resolve({ status: version === undefined ? 404 : 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(body)) });
      },
    };
    const budget = createRequestBudget({ name: RELEASES_ACCOUNT, ratePerMinute: opts.ratePerMinute ?? 60, burst: 1, initialTokens: 1, headroom: 0, concurrency: 2, maxRetries: 0, clock });
    const client = new ReleaseClient({ mode: 'free', baseUrl: 'http://free.test', transport, gate: budget, clock });
    const tracker = new OutdatedTracker({ rules: resolveSoftwareRules({}, opts.line ?? 'minor'), sink });
    let fire: (() => void) | undefined;
    const trigger: CronTrigger = (_expr, _tz, run) => {
      fire = run;
      return { stop: () => (fire = undefined) };
    };
    const runtime = new ReleaseRuntime({
      config: { ...config, projects: opts.projects ?? [] },
      client,
      sink,
      clock,
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      trigger,
      outdated: tracker,
    });
    const settle = () => clock.advanceAsync(NEW_LINE_DELAY_MS + 60_000, 1_000);
    return { clock, sink, runtime, tracker, budget, asked, settle, fire: () => fire?.() };
  }

  const nginx = (version: string) => ({ type: 'nginx', display_name: 'nginx', version });
  const lines = (text: string, family: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`${family}{`))
      .sort();

  it('looks up each line once for every host that needs it, soon after the components arrive, and exports the verdicts', async () => {
    const { sink, runtime, tracker, asked, settle } = setupOutdated();
    runtime.start();
    const prod = tracker.forAccount('prod');
    const staging = tracker.forAccount('staging');
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
    expect(runtime.planSources()).toEqual([{ source: 'outdated', jobs: 4, requestsPerRun: 4 }]);
    expect(runtime.status()).toMatchObject({ plan: { requests_per_run: 4, configured_projects: 0, component_lines: 4 } });
    runtime.stop();
  });

  it('asks the major line under the major policy: fewer lookups, a newer minor counts', async () => {
    const { sink, runtime, tracker, asked, settle } = setupOutdated({ line: 'major' });
    runtime.start();
    tracker.forAccount('prod').components('h1', [nginx('1.26.2'), { type: 'nginx', display_name: 'nginx 2', version: '1.27.3' }]);
    await settle();
    expect(asked).toEqual(['/nginx/nginx?major=1']);
    expect(lines(sink.text(), 'monapi_component_outdated').map((l) => l.replace(/^.*,version="([^"]*)",project="nginx\/nginx",line="([^"]*)",latest_version="([^"]*)"\} /, '$1 $2 $3 ')).sort()).toEqual([
      '1.26.2 1 1.27.3 1',
      '1.27.3 1 1.27.3 0',
    ]);
    runtime.stop();
  });

  it('shares one answer between a configured project and a line, and counts a line without an answer', async () => {
    const { sink, runtime, tracker, asked, settle } = setupOutdated({ projects: [{ id: 'nginx/nginx', major: '1.26' }] });
    runtime.start();
    const prod = tracker.forAccount('prod');
    prod.components('h1', [nginx('1.26.1'), { type: 'mysql', display_name: 'mysql', version: '8.0.40' }]);
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
    expect(runtime.planSources()).toEqual([
      { source: 'releases', jobs: 1, requestsPerRun: 1 },
      { source: 'outdated', jobs: 2, requestsPerRun: 1 },
    ]);
    runtime.stop();
  });

  it('never asks a line again within the free endpoint\'s 2-hour cache, and forgets lines nobody needs', async () => {
    const { clock, sink, runtime, tracker, asked, settle, fire } = setupOutdated();
    runtime.start();
    const prod = tracker.forAccount('prod');
    prod.components('h1', [nginx('1.26.1')]);
    await settle();
    expect(asked).toEqual(['/nginx/nginx?major=1.26']);

    // A run 7 minutes later: the line was asked outside the schedule within 2 hours.
    clock.advance(6 * 60_000);
    fire();
    await settle();
    expect(asked).toHaveLength(1);

    // A line that appears later is asked at once, and not again by the next run.
    clock.advance(HOUR);
    prod.components('h2', [nginx('1.27.2')]);
    await settle();
    expect(asked).toEqual(['/nginx/nginx?major=1.26', '/nginx/nginx?major=1.27']);
    clock.advance(HOUR - 2 * 60_000);
    fire();
    await settle();
    expect(asked.slice(2)).toEqual(['/nginx/nginx?major=1.26']);

    // Two hours on, the next run asks both; a run after that every line it asked itself.
    clock.advance(2 * HOUR);
    fire();
    await settle();
    expect(asked.slice(3).sort()).toEqual(['/nginx/nginx?major=1.26', '/nginx/nginx?major=1.27']);

    // h2 upgrades: its old line leaves the plan and its latest version leaves /metrics.
    prod.components('h2', [nginx('1.26.2')]);
    await settle();
    expect(lines(sink.text(), 'monapi_component_latest_version_info')).toEqual(['monapi_component_latest_version_info{project="nginx/nginx",line="1.26",version="1.26.2"} 1']);
    clock.advance(2 * HOUR);
    fire();
    await settle();
    expect(asked.slice(5)).toEqual(['/nginx/nginx?major=1.26']);
    runtime.stop();
  });

  it('spends the release budget: lookups wait for its tokens', async () => {
    const { clock, runtime, tracker, budget, asked } = setupOutdated({ ratePerMinute: 6 });
    runtime.start();
    tracker.forAccount('prod').components('h1', [nginx('1.26.1'), nginx('1.27.1'), { type: 'phpfpm', display_name: 'phpfpm', version: '8.3.1' }]);
    const started = clock.now();
    const times: number[] = [];
    for (let i = 0; i < 60 && asked.length < 3; i++) {
      const before = asked.length;
      await clock.advanceAsync(1_000);
      if (asked.length > before) times.push(clock.now() - started);
    }
    expect(asked).toHaveLength(3);
    // One token at first, then one every 10 s (6 a minute): the lookups are spread out, not fired at once.
    expect(times[2]! - times[0]!).toBeGreaterThanOrEqual(20_000);
    expect(budget.snapshot().totals.attempts).toBe(3);
    runtime.stop();
  });
});
