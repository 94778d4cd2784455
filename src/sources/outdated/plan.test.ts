import { describe, expect, it } from 'vitest';
import { agentInstall, componentInstalls } from './map.js';
import { lookupsDue, wantedLines, type LookupRecord } from './plan.js';
import { resolveSoftwareRules, type LinePolicy } from './software.js';

function installs(line: LinePolicy) {
  const rules = resolveSoftwareRules({}, line);
  const host = (nginx: string, php: string, agent: string) => [
    ...componentInstalls(
      [
        { type: 'nginx', display_name: 'nginx', version: nginx },
        { type: 'phpfpm', display_name: 'phpfpm', version: php },
        { type: 'phpfpm_pool', display_name: 'phpfpm www', version: php },
      ],
      rules,
    ),
    agentInstall(agent, rules),
  ];
  return [
    ...host('1.26.2', '8.3.14', '1.8.11-1'),
    ...host('1.26.3', '8.2.26', '1.8.12-2'),
    ...host('1.27.3', '8.3.15', 'garbage'),
    ...host('nginx/1.26.1', '8.4.0RC4', '1.8.9-1'),
  ].filter((i) => i !== undefined);
}

describe('wantedLines', () => {
  it('asks each (project, line) once however many hosts and components need it; unknown versions need none', () => {
    expect(wantedLines(installs('minor')).map((w) => [w.key, w.software.join(','), w.installs])).toEqual([
      ['nginx/nginx@1.26', 'nginx', 3],
      ['nginx/nginx@1.27', 'nginx', 1],
      ['nginxinc/nginx-amplify-agent@1.8', 'agent', 3],
      ['php/php-src@8.2', 'php-fpm', 2],
      ['php/php-src@8.3', 'php-fpm', 4],
      ['php/php-src@8.4', 'php-fpm', 2],
    ]);
  });

  it('asks fewer lines with a wider policy', () => {
    expect(wantedLines(installs('major')).map((w) => w.key)).toEqual(['nginx/nginx@1', 'nginxinc/nginx-amplify-agent@1', 'php/php-src@8']);
    expect(wantedLines(installs('latest')).map((w) => [w.key, w.line])).toEqual([
      ['nginx/nginx', undefined],
      ['nginxinc/nginx-amplify-agent', undefined],
      ['php/php-src', undefined],
    ]);
  });
});

describe('lookupsDue', () => {
  const HOUR = 3_600_000;
  const NOW = 10 * HOUR;
  const wanted = ['new', 'asked-by-run', 'asked-early-1h', 'asked-early-3h', 'new'].map((key) => ({ key }));
  const history = new Map<string, LookupRecord>([
    ['asked-by-run', { atMs: NOW - 2 * HOUR, scheduled: true }],
    ['asked-early-1h', { atMs: NOW - HOUR, scheduled: false }],
    ['asked-early-3h', { atMs: NOW - 3 * HOUR, scheduled: false }],
  ]);

  it.each([
    ['outside the schedule: only keys never asked, each once', false, 2 * HOUR, ['new']],
    ['a run of the free endpoint: not what was asked outside the schedule within its 2-hour cache', true, 2 * HOUR, ['new', 'asked-by-run', 'asked-early-3h']],
    ['a run of the marketplace (no forced cache): everything', true, 0, ['new', 'asked-by-run', 'asked-early-1h', 'asked-early-3h']],
  ])('%s', (_name, scheduled, minGapMs, want) => {
    expect(lookupsDue(wanted, history, { scheduled, nowMs: NOW, minGapMs }).map((w) => w.key)).toEqual(want);
  });
});
