import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sampleLines } from '../../../test/support/family-lines.js';
import {
  agentInstall,
  checkInstall,
  componentInstalls,
  emptyCounts,
  lookupKey,
  mapCheckCounts,
  mapHostChecks,
  mapLatestVersions,
  OUTDATED_FAMILIES,
  type CheckResult,
  type LineAnswer,
} from './map.js';
import { resolveSoftwareRules, type LinePolicy } from './software.js';

const answer = (version: string, tagDate?: string): LineAnswer => ({ latest: { version, tagDate }, error: undefined });
const failed = (message: string, previous?: string): LineAnswer => ({ latest: previous === undefined ? undefined : { version: previous }, error: message });

function nginx(version: string | undefined, line: LinePolicy = 'minor') {
  const rules = resolveSoftwareRules({}, line);
  const [item] = componentInstalls([{ type: 'nginx', display_name: 'nginx @ web-1', ...(version === undefined ? {} : { version }) }], rules);
  if (item === undefined) throw new Error('nginx is in the default table');
  return item;
}

describe('checkInstall', () => {
  it.each<[string, string | undefined, LinePolicy, LineAnswer | undefined, CheckResult, string | undefined]>([
    ['older patch in the line', '1.26.1', 'minor', answer('1.26.2'), 'outdated', '1.26.2'],
    ['equal', '1.26.2', 'minor', answer('1.26.2'), 'up_to_date', '1.26.2'],
    ['newer than the latest release (a draft upstream, or a build ahead)', '1.27.4', 'minor', answer('1.27.3'), 'up_to_date', '1.27.3'],
    ['numbers, not text: 1.26.10 > 1.26.9', '1.26.10', 'minor', answer('1.26.9'), 'up_to_date', '1.26.9'],
    ['numbers, not text: 1.26.9 < 1.26.10', '1.26.9', 'minor', answer('1.26.10'), 'outdated', '1.26.10'],
    ['prefix on the installed version', 'nginx/1.26.2', 'minor', answer('1.26.2'), 'up_to_date', '1.26.2'],
    ['prefix on the answer (as sent before normalising)', '1.26.1', 'minor', answer('release-1.26.2'), 'outdated', '1.26.2'],
    ['v prefix on the answer', '1.26.2', 'minor', answer('v1.26.2'), 'up_to_date', '1.26.2'],
    ['a pre-release installed is below its release', '1.27.0-rc1', 'minor', answer('1.27.0'), 'outdated', '1.27.0'],
    ['a pre-release installed is above the previous release', '1.27.1-rc1', 'minor', answer('1.27.0'), 'up_to_date', '1.27.0'],
    ['a package revision of the latest release is up to date', '1.26.2-1~bookworm', 'minor', answer('1.26.2'), 'up_to_date', '1.26.2'],
    ['a package revision of an older release is outdated', '1.26.1-3', 'minor', answer('1.26.2'), 'outdated', '1.26.2'],
    ['major line: a newer minor counts', '1.26.2', 'major', answer('1.27.3'), 'outdated', '1.27.3'],
    ['latest: any newer release counts', '1.26.2', 'latest', answer('2.0.0'), 'outdated', '2.0.0'],
    ['a failed lookup keeps the last release found', '1.26.1', 'minor', failed('timeout', '1.26.2'), 'outdated', '1.26.2'],
    ['unparsable installed version', 'unknown', 'minor', answer('1.26.2'), 'unknown_version', undefined],
    ['no installed version', undefined, 'minor', answer('1.26.2'), 'unknown_version', undefined],
    ['line not looked up yet', '1.26.2', 'minor', undefined, 'pending', undefined],
    ['lookup failed, nothing known', '1.26.2', 'minor', failed('not found'), 'no_answer', undefined],
    ['an answer from another line (a service that ignored major) is no answer', '1.26.2', 'minor', answer('1.27.3'), 'no_answer', undefined],
    ['an answer that is not a version is no answer', '1.26.2', 'latest', answer('latest'), 'no_answer', undefined],
  ])('%s', (_name, installed, line, lineAnswer, result, latest) => {
    expect(checkInstall(nginx(installed, line), lineAnswer)).toEqual(latest === undefined ? { result } : { result, latest });
  });
});

describe('componentInstalls and agentInstall', () => {
  const rules = resolveSoftwareRules({ mysql: false, redis: { project: 'redis/redis' } }, 'minor');

  it('keeps software the table knows, named as monapi_component_info names it, with its project and line', () => {
    const installs = componentInstalls(
      [
        { type: 'nginx', display_name: 'nginx @ web-1', version: '1.26.2' },
        { type: 'phpfpm_pool', name: 'www', version: '8.3.14' },
        { type: 'mysql', id: 'abc', version: '8.0.40' },
        { type: 'mysql', display_name: 'mariadb @ db-1', version: '11.4.4-MariaDB' },
        { type: 'redis', display_name: 'redis @ cache-1', version: '7.4.1' },
        { type: 'memcached', display_name: 'memcached @ cache-1', version: '1.6.0' },
        { display_name: 'no type @ web-1', version: '1.0' },
        { type: 'varnish', display_name: 'varnish @ cache-1' },
      ],
      rules,
    );
    expect(installs.map((i) => [i.component, i.software, i.rawVersion, i.project, i.line])).toEqual([
      ['nginx @ web-1', 'nginx', '1.26.2', 'nginx/nginx', '1.26'],
      ['www', 'php-fpm', '8.3.14', 'php/php-src', '8.3'],
      ['mariadb @ db-1', 'mariadb', '11.4.4-MariaDB', 'MariaDB/server', '11.4'],
      ['redis @ cache-1', 'redis', '7.4.1', 'redis/redis', '7.4'],
      ['varnish @ cache-1', 'varnish', '', 'varnishcache/varnish-cache', undefined],
    ]);
  });

  it('checks the agent under the name agent, unless the table leaves it out', () => {
    expect(agentInstall('1.8.11-1', rules)).toMatchObject({ component: 'agent', software: 'agent', rawVersion: '1.8.11-1', project: 'nginxinc/nginx-amplify-agent', line: '1.8' });
    expect(agentInstall('1.8.11-1', resolveSoftwareRules({ agent: false }, 'minor'))).toBeUndefined();
    // A component that calls itself agent is not the host's agent.
    expect(componentInstalls([{ type: 'agent', version: '1.0' }], rules)).toEqual([]);
  });
});

describe('mapHostChecks', () => {
  const rules = resolveSoftwareRules({}, 'minor');
  const installs = [
    ...componentInstalls(
      [
        { type: 'nginx', display_name: 'nginx @ web-1', version: '1.26.1' },
        { type: 'phpfpm', display_name: 'phpfpm @ web-1', version: '8.3.14' },
        { type: 'mysql', display_name: 'mysql @ web-1', version: '8.0.40' },
        { type: 'varnish', display_name: 'varnish @ web-1', version: 'trunk' },
      ],
      rules,
    ),
    agentInstall('1.8.3-1', rules),
  ].filter((i) => i !== undefined);
  const answers = new Map<string, LineAnswer>([
    [lookupKey('nginx/nginx', '1.26'), answer('1.26.2')],
    [lookupKey('php/php-src', '8.3'), answer('8.3.14')],
    [lookupKey('mysql/mysql-server', '8.0'), failed('not found')],
  ]);

  it('gives a series for each verdict and counts every result', () => {
    const { families, counts } = mapHostChecks(installs, (key) => answers.get(key), { account: 'prod', hostUuid: 'h1' });
    // sampleLines sorts labels by name.
    expect(sampleLines(families)).toEqual([
      'monapi_component_outdated{account="prod",component="nginx @ web-1",host_uuid="h1",latest_version="1.26.2",line="1.26",project="nginx/nginx",software="nginx",version="1.26.1"} 1',
      'monapi_component_outdated{account="prod",component="phpfpm @ web-1",host_uuid="h1",latest_version="8.3.14",line="8.3",project="php/php-src",software="php-fpm",version="8.3.14"} 0',
    ]);
    expect(counts).toEqual({ outdated: 1, up_to_date: 1, pending: 1, no_answer: 1, unknown_version: 1 });
  });

  it('counts per account with every result present, zeros included', () => {
    expect(sampleLines(mapCheckCounts('prod', { ...emptyCounts(), outdated: 3, up_to_date: 7 }))).toEqual([
      'monapi_component_version_checks{account="prod",result="no_answer"} 0',
      'monapi_component_version_checks{account="prod",result="outdated"} 3',
      'monapi_component_version_checks{account="prod",result="pending"} 0',
      'monapi_component_version_checks{account="prod",result="unknown_version"} 0',
      'monapi_component_version_checks{account="prod",result="up_to_date"} 7',
    ]);
  });
});

describe('mapLatestVersions', () => {
  it('gives the latest release of each line with an answer, and its tag time when it parses', () => {
    const lines = [
      { project: 'nginx/nginx', line: '1.26', answer: answer('1.26.2', '2024-08-14 15:29:37+00:00') },
      { project: 'nginx/nginx', line: undefined, answer: answer('1.27.3', 'yesterday') },
      { project: 'php/php-src', line: '8.3', answer: failed('timeout', '8.3.14') },
      { project: 'mysql/mysql-server', line: '8.0', answer: failed('not found') },
      { project: 'MariaDB/server', line: '11.4', answer: undefined },
    ];
    expect(sampleLines(mapLatestVersions(lines))).toEqual([
      'monapi_component_latest_version_info{line="",project="nginx/nginx",version="1.27.3"} 1',
      'monapi_component_latest_version_info{line="1.26",project="nginx/nginx",version="1.26.2"} 1',
      'monapi_component_latest_version_info{line="8.3",project="php/php-src",version="8.3.14"} 1',
      `monapi_component_latest_version_timestamp_seconds{line="1.26",project="nginx/nginx"} ${Date.UTC(2024, 7, 14, 15, 29, 37) / 1000}`,
    ]);
  });
});

describe('src/sources/outdated/metrics.md', () => {
  it('has one row per family, with the type and unit the code gives it', () => {
    const doc = readFileSync(new URL('./metrics.md', import.meta.url), 'utf8');
    const rows = doc.split('\n').filter((line) => line.startsWith('| monapi_'));
    const specs = Object.values(OUTDATED_FAMILIES);
    expect(rows.map((row) => row.split(' | ')[0]?.slice(2)).sort()).toEqual(specs.map((s) => s.name).sort());
    for (const spec of specs) expect(rows).toContainEqual(expect.stringContaining(`| ${spec.name} | ${spec.type} | ${spec.unit ?? ''} |`));
  });
});
