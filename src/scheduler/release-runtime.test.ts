import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { FreeReleasesConfig } from '../config/types.js';
import { renderText } from '../exposition/render-text.js';
import type { FamilySamples, MetricSink } from '../exposition/model.js';
import { FakeClock, flushMicrotasks } from '../lib/clock.js';
import { NotFoundError } from '../upstream/http/errors.js';
import type { LatestRelease, ReleaseProject } from '../upstream/releases/client.js';
import { ReleaseRuntime, type CronTrigger } from './release-runtime.js';

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
  text(): string {
    return renderText([...this.content.values()].flat());
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
