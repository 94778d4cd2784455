import { describe, expect, it } from 'vitest';
import type { FamilySamples, MetricSink } from '../../exposition/model.js';
import { sampleLines } from '../../../test/support/family-lines.js';
import { resolveSoftwareRules } from './software.js';
import { OutdatedTracker } from './tracker.js';

class CountingSink implements MetricSink {
  readonly groupsHeld = new Map<string, readonly FamilySamples[]>();
  publishes = 0;
  publish(group: string, families: readonly FamilySamples[]): void {
    this.publishes++;
    this.groupsHeld.set(group, families);
  }
  retract(group: string): void {
    this.groupsHeld.delete(group);
  }
  groups(prefix: string): string[] {
    return [...this.groupsHeld.keys()].filter((g) => g.startsWith(prefix));
  }
  lines(group: string): string[] {
    return sampleLines(this.groupsHeld.get(group) ?? []);
  }
}

function setup() {
  const sink = new CountingSink();
  const tracker = new OutdatedTracker({ rules: resolveSoftwareRules({}, 'minor'), sink });
  let newLines = 0;
  tracker.onNewLines(() => newLines++);
  return { sink, tracker, newLines: () => newLines };
}

const nginx = (version: string) => ({ type: 'nginx', display_name: 'nginx @ web-1', version });

describe('OutdatedTracker', () => {
  it('publishes an account\'s counts at once, zeros included', () => {
    const { sink, tracker } = setup();
    tracker.forAccount('prod');
    expect(sink.lines('outdated/prod')).toContain('monapi_component_version_checks{account="prod",result="pending"} 0');
  });

  it('says when installs need a line without an answer, once per new line', () => {
    const { tracker, newLines } = setup();
    const prod = tracker.forAccount('prod');
    prod.components('h1', [nginx('1.26.1')]);
    prod.components('h2', [nginx('1.26.2')]);
    expect(newLines()).toBe(1);
    tracker.record('nginx/nginx@1.27', { ok: true, version: '1.27.3' });
    prod.components('h3', [nginx('1.27.1')]);
    // Answered already (a configured project asked for it): nothing to look up.
    expect(newLines()).toBe(1);
    prod.components('h3', [nginx('1.28.0')]);
    expect(newLines()).toBe(2);
    expect(tracker.wantedLines().map((w) => [w.key, w.installs])).toEqual([
      ['nginx/nginx@1.26', 2],
      ['nginx/nginx@1.28', 1],
    ]);
  });

  it('republishes a host only when its installs change or its line is answered', () => {
    const { sink, tracker } = setup();
    const prod = tracker.forAccount('prod');
    prod.components('h1', [nginx('1.26.1')]);
    prod.agents([{ uuid: 'h1', agent_version: '1.8.11-1' }]);
    const before = sink.publishes;
    prod.components('h1', [nginx('1.26.1')]);
    prod.agents([{ uuid: 'h1', agent_version: '1.8.11-1' }]);
    expect(sink.publishes).toBe(before);
    tracker.record('nginx/nginx@1.26', { ok: true, version: '1.26.2' });
    expect(sink.lines('outdated/prod/h1')).toEqual([
      'monapi_component_outdated{account="prod",component="nginx @ web-1",host_uuid="h1",latest_version="1.26.2",line="1.26",project="nginx/nginx",software="nginx",version="1.26.1"} 1',
    ]);
    expect(sink.lines('outdated/prod')).toContain('monapi_component_version_checks{account="prod",result="pending"} 1');
  });

  it('keeps the last release after a failed lookup, and says why in the status', () => {
    const { sink, tracker } = setup();
    tracker.forAccount('prod').components('h1', [nginx('1.26.1')]);
    tracker.record('nginx/nginx@1.26', { ok: true, version: '1.26.2' });
    tracker.record('nginx/nginx@1.26', { ok: false, message: 'timeout after 10s' });
    expect(sink.lines('outdated/prod/h1')).toHaveLength(1);
    expect(sink.lines('outdated_latest')).toEqual(['monapi_component_latest_version_info{line="1.26",project="nginx/nginx",version="1.26.2"} 1']);
    expect(tracker.status()).toMatchObject({
      lines: [{ project: 'nginx/nginx', line: '1.26', software: ['nginx'], installs: 1, latest_version: '1.26.2', last_error: 'timeout after 10s' }],
      checks: { prod: { outdated: 1, up_to_date: 0, pending: 0, no_answer: 0, unknown_version: 0 } },
    });
  });

  it('lists unknown versions in the status', () => {
    const { tracker } = setup();
    tracker.forAccount('prod').components('h1', [nginx('dev build')]);
    expect(tracker.status()).toMatchObject({ unknown_versions: [{ account: 'prod', host_uuid: 'h1', component: 'nginx @ web-1', software: 'nginx', version: 'dev build' }], lines: [] });
  });

  it('drops a host whose components and agent are gone, and an agent whose host left the list', () => {
    const { sink, tracker } = setup();
    const prod = tracker.forAccount('prod');
    prod.components('h1', [nginx('1.26.1')]);
    prod.agents([
      { uuid: 'h1', agent_version: '1.8.11-1' },
      { uuid: 'h2', agent_version: '1.8.11-1' },
    ]);
    expect(sink.groups('outdated/prod/').sort()).toEqual(['outdated/prod/h1', 'outdated/prod/h2']);
    prod.agents([{ uuid: 'h1', agent_version: '1.8.11-1' }]);
    expect(sink.groups('outdated/prod/')).toEqual(['outdated/prod/h1']);
    prod.forgetComponents('h1');
    expect(sink.groups('outdated/prod/')).toEqual(['outdated/prod/h1']);
    prod.agents([]);
    expect(sink.groups('outdated/prod/')).toEqual([]);
    expect(tracker.wantedLines()).toEqual([]);
    expect(sink.lines('outdated/prod')).toContain('monapi_component_version_checks{account="prod",result="pending"} 0');
  });

  it('keeps accounts apart: the same host uuid in two accounts is two hosts', () => {
    const { sink, tracker } = setup();
    tracker.forAccount('prod').components('h1', [nginx('1.26.1')]);
    tracker.forAccount('staging').components('h1', [nginx('1.26.2')]);
    tracker.record('nginx/nginx@1.26', { ok: true, version: '1.26.2' });
    expect(sink.lines('outdated/prod/h1')[0]).toMatch(/ 1$/);
    expect(sink.lines('outdated/staging/h1')[0]).toMatch(/ 0$/);
  });
});
