import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { loadConfig, parseConfig } from '../exporter/config.js';
import { DEFAULT_CHECK_BUCKETS } from '../sources/checks/map.js';
import type { HostSettings } from '../sources/hosts/settings.js';
import type { OutdatedSettings } from '../sources/outdated/settings.js';
import type { ReleaseSettings } from '../sources/releases/settings.js';
import { selectMetrics, type SeriesSettings } from '../sources/series/settings.js';
import type { SourceConfig } from './source-spec.js';

/** One source's settings as the loader made them (typed by the test, which knows the source). */
function settingsOf<S>(sources: Readonly<Record<string, SourceConfig>> | undefined, name: string): S {
  return sources?.[name]?.settings as S;
}

/** Which sources of a section are on, by name. */
function switchesOf(sources: Readonly<Record<string, SourceConfig>> | undefined): Record<string, boolean> {
  return Object.fromEntries(Object.entries(sources ?? {}).map(([name, source]) => [name, source.enabled]));
}

const ENV = { PROD_KEY: 'prod-secret-1', STAGING_KEY: 'staging-secret-2', MARKET_KEY: 'market-secret-3', EMPTY_KEY: '' };
const FILES: Record<string, string> = {
  '/etc/monapi/prod.key': 'prod-secret-1\n',
  '/etc/monapi/other.key': 'other-secret-4\n',
  '/etc/monapi/empty.key': '\n',
};

function readFile(path: string): string {
  const content = FILES[path];
  if (content === undefined) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
  return content;
}

function parse(yaml: string) {
  return parseConfig(yaml, { env: ENV, readFile, baseDir: '/etc/monapi', source: 'test.yaml' });
}

function issuesOf(yaml: string): string[] {
  try {
    parse(yaml);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  return [];
}

/** One account that is valid on its own; rows add lines to it (4-space indent). */
const ACCOUNT = `accounts:
  - name: prod
    base_url: https://mon.example.com/api/v2
    api_key_env: PROD_KEY
`;
const RELEASES = `releases:
  free_base_url: https://free.example.com
  projects:
    - torvalds/linux
`;

describe('parseConfig rejects bad configs with exact messages', () => {
  it.each([
    ['missing accounts', 'exporter:\n  null_handling: skip\n', 'accounts: is required: list at least one Monitoring API account'],
    ['empty accounts', 'accounts: []\n', 'accounts: must list at least one account'],
    ['accounts not a list', 'accounts:\n  prod: {}\n', 'accounts: must be a list (got a mapping)'],
    [
      'duplicate account names',
      `${ACCOUNT}  - name: prod\n    base_url: https://mon.example.com/api/v2\n    api_key_env: STAGING_KEY\n`,
      'accounts[1].name: duplicate account name "prod" (also accounts[0])',
    ],
    [
      'bad account name',
      'accounts:\n  - name: Prod EU\n    base_url: https://mon.example.com/api/v2\n    api_key_env: PROD_KEY\n',
      'accounts[0].name: must use only lowercase letters, digits, _ and - because it becomes the account label (got "Prod EU")',
    ],
    [
      'base_url not a URL',
      'accounts:\n  - name: prod\n    base_url: mon.example.com\n    api_key_env: PROD_KEY\n',
      'accounts[0].base_url: must be an http or https URL such as https://monitoring.example.com/api/v2 (got "mon.example.com")',
    ],
    [
      'base_url without /api/v2',
      'accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v1/\n    api_key_env: PROD_KEY\n',
      'accounts[0].base_url: must end in /api/v2, the API version this exporter speaks, e.g. https://monitoring.example.com/api/v2 (got path "/api/v1")',
    ],
    [
      'base_url with credentials',
      'accounts:\n  - name: prod\n    base_url: https://user:hunter2@mon.example.com/api/v2\n    api_key_env: PROD_KEY\n',
      'accounts[0].base_url: must not contain a user name or password; give the API key through api_key_env or api_key_file',
    ],
    [
      'an inline api_key',
      `${ACCOUNT}    api_key: abcdef0123456789\n`,
      'accounts[0]: unknown key "api_key": API keys must not be written in the config file: set api_key_env (the name of an environment variable holding the key) or api_key_file (the path of a file holding the key)',
    ],
    [
      'an inline token under another spelling',
      `${ACCOUNT}    apiToken: abcdef0123456789\n`,
      'accounts[0]: unknown key "apiToken": API keys must not be written in the config file: set api_key_env (the name of an environment variable holding the key) or api_key_file (the path of a file holding the key)',
    ],
    [
      'an unknown key that only may hold a credential',
      `${ACCOUNT}    bogus_key: abcdef0123456789\n`,
      'accounts[0]: unknown key "bogus_key" (allowed: name, base_url, api_key_env, api_key_file, auth_scheme, rate_limit, headroom, concurrency, max_pages_per_list, http, limits, counter_grace, hosts, tag_labels, metrics, ingest_delay, late_data_horizon, metric_overrides, websites, cadence, sources, fields); if it holds an API key: API keys must not be written in the config file: set api_key_env (the name of an environment variable holding the key) or api_key_file (the path of a file holding the key)',
    ],
    [
      'a misspelt key name that may hold a credential',
      `${ACCOUNT}    api_key_evn: PROD_KEY\n`,
      'accounts[0]: unknown key "api_key_evn" (did you mean "api_key_env"?); if it holds an API key: API keys must not be written in the config file: set api_key_env (the name of an environment variable holding the key) or api_key_file (the path of a file holding the key)',
    ],
    [
      'both api_key_env and api_key_file',
      `${ACCOUNT}    api_key_file: prod.key\n`,
      'accounts[0]: set only one of api_key_env and api_key_file, not both',
    ],
    [
      'neither api_key_env nor api_key_file',
      'accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n',
      'accounts[0]: account "prod" has no key: set api_key_env (the name of an environment variable) or api_key_file (the path of a file), exactly one',
    ],
    [
      'api_key_env holding what looks like the key itself',
      'accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n    api_key_env: 3f9a-77c1-secret\n',
      'accounts[0].api_key_env: must be the name of an environment variable (letters, digits and _, not starting with a digit), not the key itself',
    ],
    [
      'env var unset',
      'accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n    api_key_env: MISSING_KEY\n',
      'accounts[0].api_key_env: environment variable MISSING_KEY is not set (it should hold the key of account "prod")',
    ],
    [
      'env var empty',
      'accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n    api_key_env: EMPTY_KEY\n',
      'accounts[0].api_key_env: environment variable EMPTY_KEY is empty (it should hold the key of account "prod")',
    ],
    [
      'key file missing',
      'accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n    api_key_file: secrets/nope.key\n',
      'accounts[0].api_key_file: cannot read the key of account "prod" from /etc/monapi/secrets/nope.key: file not found',
    ],
    [
      'key file empty',
      'accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n    api_key_file: /etc/monapi/empty.key\n',
      'accounts[0].api_key_file: file /etc/monapi/empty.key is empty (it should hold the key of account "prod")',
    ],
    [
      'two accounts sharing one key',
      `${ACCOUNT}  - name: staging\n    base_url: https://mon.example.com/api/v2\n    api_key_file: prod.key\n`,
      'accounts[1]: uses the same API key as accounts[0] ("prod"); the rate limit is per key, so two accounts with one key would overspend it: list the account once',
    ],
    ['unknown key with a suggestion', `${ACCOUNT}    cadence:\n      seires: 30s\n`, 'accounts[0].cadence: unknown key "seires" (did you mean "series"?)'],
    ['fields: a source without declared fields', `${ACCOUNT}    fields:\n      website_sumary:\n        uptime_24h: stats.day.uptime\n`, 'accounts[0].fields: unknown key "website_sumary" (did you mean "website_summary"?)'],
    ['fields: a field the source does not read', `${ACCOUNT}    fields:\n      website_summary:\n        uptime_1y: stats.year.uptime\n`, 'accounts[0].fields.website_summary: unknown key "uptime_1y" (did you mean "uptime_7d"?)'],
    ['fields: a path that is not keys joined by dots', `${ACCOUNT}    fields:\n      websites:\n        uptime_24h: stats..uptime\n`, 'accounts[0].fields.websites.uptime_24h: must be the keys to the field joined by dots, such as stats.last_day.uptime (got "stats..uptime")'],
    ['unknown top-level key', `${ACCOUNT}scrape: {}\n`, 'scrape: unknown key "scrape" (allowed: exporter, accounts, releases, remote_write)'.replace('scrape: ', '(root): ')],
    [
      'duration in words',
      `${ACCOUNT}    cadence:\n      hosts: 5 minutes\n`,
      'accounts[0].cadence.hosts: "5 minutes" is not a duration: write a whole number and a unit (ms, s, m, h, d), e.g. 30s, 5m or 1h30m',
    ],
    [
      'negative duration',
      `${ACCOUNT}    cadence:\n      alerts: -1s\n`,
      'accounts[0].cadence.alerts: "-1s" is not a duration: write a whole number and a unit (ms, s, m, h, d), e.g. 30s, 5m or 1h30m',
    ],
    ['zero duration', `${ACCOUNT}    cadence:\n      checks: 0s\n`, 'accounts[0].cadence.checks: must be greater than 0s (minimum 30s)'],
    [
      'duration without a unit',
      `${ACCOUNT}    cadence:\n      hosts: 60\n`,
      'accounts[0].cadence.hosts: must be a duration with a unit, such as 60s or 60m (a bare number has no unit)',
    ],
    [
      'cadence below its minimum',
      `${ACCOUNT}    cadence:\n      series: 30s\n`,
      'accounts[0].cadence.series: must be at least 1m (got 30s); polling faster would spend the request budget',
    ],
    ['cadence above a day', `${ACCOUNT}    cadence:\n      components: 2d\n`, 'accounts[0].cadence.components: must be at most 1d (got 2d)'],
    ['ingest delay too long', `${ACCOUNT}    ingest_delay: 3h\n`, 'accounts[0].ingest_delay: must be at most 2h (got 3h)'],
    ['headroom out of range', `${ACCOUNT}    headroom: 1.5\n`, 'accounts[0].headroom: must be at most 0.9 (got 1.5)'],
    ['negative headroom', `${ACCOUNT}    headroom: -0.1\n`, 'accounts[0].headroom: must be at least 0 (got -0.1)'],
    ['concurrency zero', `${ACCOUNT}    concurrency: 0\n`, 'accounts[0].concurrency: must be at least 1 (got 0)'],
    ['fractional burst', `${ACCOUNT}    rate_limit:\n      burst: 2.5\n`, 'accounts[0].rate_limit.burst: must be a whole number (got 2.5)'],
    [
      'burst eaten by headroom',
      `${ACCOUNT}    rate_limit:\n      burst: 1\n`,
      'accounts[0].rate_limit.burst: a burst of 1 minus headroom 0.1 leaves less than one request',
    ],
    ['bad auth scheme', `${ACCOUNT}    auth_scheme: basic\n`, 'accounts[0].auth_scheme: must be one of bearer, x-api-key (got "basic")'],
    [
      'glob with a character class',
      `${ACCOUNT}    hosts:\n      include_names: ["web-[12]"]\n`,
      'accounts[0].hosts.include_names[0]: pattern "web-[12]" uses [...], which is not supported: the only wildcards are * (any run of characters) and ? (one character)',
    ],
    [
      'glob with braces',
      `${ACCOUNT}    websites:\n      exclude_names: ["{a,b}.example.com"]\n`,
      'accounts[0].websites.exclude_names[0]: pattern "{a,b}.example.com" uses {...}, which is not supported: list each alternative as its own pattern',
    ],
    [
      'tag pattern with a comma',
      `${ACCOUNT}    hosts:\n      include_tags: ["env:prod,role:web"]\n`,
      'accounts[0].hosts.include_tags[0]: tag pattern "env:prod,role:web" contains a comma; list each tag as its own item',
    ],
    [
      'metric pattern in upper case',
      `${ACCOUNT}    metrics:\n      include: ["System.*"]\n`,
      'accounts[0].metrics.include[0]: metric pattern "System.*" may only contain lowercase letters, digits, ".", "_", "-", "|" and "/" (per-device names such as system.io.iops_r|sda) and the wildcards * and ?',
    ],
    [
      'metric pattern that matches nothing',
      `${ACCOUNT}    metrics:\n      include: ["ngnix.*"]\n`,
      'accounts[0].metrics.include[0]: pattern "ngnix.*" matches no metric in the catalogue or in metric_overrides (did you mean "nginx.*"?)',
    ],
    [
      'empty include list',
      `${ACCOUNT}    metrics:\n      include: []\n`,
      'accounts[0].metrics.include: must list at least one pattern; use ["*"] for every metric, or turn the series source off',
    ],
    [
      'exclude removing everything',
      `${ACCOUNT}    metrics:\n      include: ["system.cpu.*"]\n      exclude: ["system.*"]\n`,
      'accounts[0].metrics: include and exclude leave no metric selected; set sources.series: false to poll no series',
    ],
    [
      'exclude removing every per-device name included',
      `${ACCOUNT}    metrics:\n      include: ["system.io.iops_r|*"]\n      exclude: ["system.io.*"]\n`,
      'accounts[0].metrics: include and exclude leave no metric selected; set sources.series: false to poll no series',
    ],
    [
      'tag label with a value part',
      `${ACCOUNT}    tag_labels: ["env:prod"]\n`,
      'accounts[0].tag_labels[0]: tag key "env:prod" contains ":"; give only the key part of "key:value" tags',
    ],
    [
      'tag labels colliding after sanitising',
      `${ACCOUNT}    tag_labels: [team-name, team.name]\n`,
      'accounts[0].tag_labels[1]: tag keys "team-name" and "team.name" both become the label tag_team_name',
    ],
    [
      'metric override with a bad kind',
      `${ACCOUNT}    metric_overrides:\n      system.cpu.user: {kind: counter}\n`,
      'accounts[0].metric_overrides["system.cpu.user"].kind: must be one of gauge, delta (got "counter")',
    ],
    [
      'metric override with a bad unit',
      `${ACCOUNT}    metric_overrides:\n      system.io.wait_r: {unit: ms}\n`,
      'accounts[0].metric_overrides["system.io.wait_r"].unit: must be one of percent, bytes, kilobytes, milliseconds, seconds, count, status, none (got "ms")',
    ],
    [
      'override of an unknown metric without a unit',
      `${ACCOUNT}    metric_overrides:\n      redis.keys: {kind: gauge}\n`,
      'accounts[0].metric_overrides["redis.keys"]: "redis.keys" is not in the agent\'s metric catalogue, so both kind and unit are required',
    ],
    ['late-data horizon beyond the 4 h window', `${ACCOUNT}    late_data_horizon: 4h\n`, 'accounts[0].late_data_horizon: must be at most 3h30m (got 4h)'],
    ['counter grace without a unit', `${ACCOUNT}    counter_grace: 3600\n`, 'accounts[0].counter_grace: must be a duration with a unit, such as 3600s or 3600m (a bare number has no unit)'],
    [
      'metric override that sets nothing',
      `${ACCOUNT}    metric_overrides:\n      system.cpu.user: {}\n`,
      'accounts[0].metric_overrides["system.cpu.user"]: sets none of kind, unit, family, labels, device_label',
    ],
    [
      'metric override family with the prefix',
      `${ACCOUNT}    metric_overrides:\n      system.cpu.user: {family: monapi_cpu}\n`,
      'accounts[0].metric_overrides["system.cpu.user"].family: family "monapi_cpu" must be given without the monapi_ prefix, which is added',
    ],
    [
      'metric override family ending in _total',
      `${ACCOUNT}    metric_overrides:\n      app.hits: {kind: delta, unit: count, family: app_hits_total}\n`,
      'accounts[0].metric_overrides["app.hits"].family: family "app_hits_total" must not end in _total: it is added to deltas',
    ],
    [
      'metric override labels without a family',
      `${ACCOUNT}    metric_overrides:\n      system.cpu.user: {labels: {mode: user}}\n`,
      'accounts[0].metric_overrides["system.cpu.user"].labels: labels need a family: they tell the metric apart from the other members of its family',
    ],
    [
      'metric override label the exporter sets',
      `${ACCOUNT}    metric_overrides:\n      app.hits: {kind: delta, unit: count, family: app_hits, labels: {host_uuid: x}}\n`,
      'accounts[0].metric_overrides["app.hits"].labels: label name "host_uuid" is set by the exporter itself',
    ],
    [
      'metric override device label clashing with target labels',
      `${ACCOUNT}    metric_overrides:\n      app.hits: {kind: delta, unit: count, device_label: instance}\n`,
      'accounts[0].metric_overrides["app.hits"].device_label: label name "instance" clashes with target or relabelling labels (job, instance, region, env, cluster, type); choose another',
    ],
    [
      'series on while hosts are off',
      `${ACCOUNT}    sources:\n      hosts: false\n      components: false\n`,
      'accounts[0].sources.series: needs sources.hosts: the host list says which hosts to fetch series for; turn series off too, or turn hosts on',
    ],
    ['boolean written as yes', `${ACCOUNT}    sources:\n      alerts: yes\n`, 'accounts[0].sources.alerts: must be true or false (got "yes")'],
    [
      'metric_prefix set',
      `exporter:\n  metric_prefix: mon_\n${ACCOUNT}`,
      'exporter: metric_prefix cannot be set: metric names always start with "monapi_" so that dashboards and alerts keep working',
    ],
    ['bad null handling', `exporter:\n  null_handling: zero\n${ACCOUNT}`, 'exporter.null_handling: must be one of skip, nan (got "zero")'],
    [
      'marketplace without a key',
      `${ACCOUNT}releases:\n  mode: marketplace\n  marketplace_base_url: https://releases.p.example.com\n  projects: [nginx]\n`,
      'releases: the release marketplace has no key: set marketplace_key_env (the name of an environment variable) or marketplace_key_file (the path of a file), exactly one',
    ],
    [
      'inline marketplace key',
      `${ACCOUNT}releases:\n  mode: marketplace\n  marketplace_base_url: https://releases.p.example.com\n  marketplace_key_env: MARKET_KEY\n  marketplace_key: abc\n  projects: [nginx]\n`,
      'releases: unknown key "marketplace_key": API keys must not be written in the config file: set marketplace_key_env (the name of an environment variable holding the key) or marketplace_key_file (the path of a file holding the key)',
    ],
    ['free mode without its URL', `${ACCOUNT}releases:\n  projects: [torvalds/linux]\n`, 'releases: free mode needs free_base_url, the address of the free endpoint'],
    [
      'bad cron expression',
      `${ACCOUNT}${RELEASES}  schedule: "0 25 * * *"\n`,
      'releases.schedule: "0 25 * * *" is not a valid cron expression: the hour field "25" is malformed or out of range (5 fields "minute hour day-of-month month day-of-week", or 6 with seconds first)',
    ],
    [
      'free-mode schedule faster than the 2h cache',
      `${ACCOUNT}${RELEASES}  schedule: "*/30 * * * *"\n`,
      'releases.schedule: "*/30 * * * *" runs as little as 30m apart, but the free endpoint caches each answer for 2h, so faster polling only re-reads its cache; use a schedule with at least 2h between runs (the default is "17 */2 * * *"), or set allow_polling_faster_than_cache: true if you mean it',
    ],
    [
      'free-mode schedule that is fast only across midnight',
      `${ACCOUNT}${RELEASES}  schedule: "0 0,23 * * *"\n`,
      'releases.schedule: "0 0,23 * * *" runs as little as 1h apart, but the free endpoint caches each answer for 2h, so faster polling only re-reads its cache; use a schedule with at least 2h between runs (the default is "17 */2 * * *"), or set allow_polling_faster_than_cache: true if you mean it',
    ],
    [
      'marketplace schedule every few seconds',
      `${ACCOUNT}releases:\n  mode: marketplace\n  marketplace_base_url: https://releases.p.example.com\n  marketplace_key_env: MARKET_KEY\n  schedule: "*/10 * * * * *"\n  projects: [nginx]\n`,
      'releases.schedule: "*/10 * * * * *" runs as little as 10s apart; the marketplace bills every request, so runs must be at least 1m apart',
    ],
    ['project major -1', `${ACCOUNT}${RELEASES}    - {id: nginx/nginx, major: -1}\n`, 'releases.projects[1].major: must be a version line such as 4, 0 or 1.26: numbers separated by dots (got -1)'],
    ['project major x', `${ACCOUNT}${RELEASES}    - {id: nginx/nginx, major: x}\n`, 'releases.projects[1].major: must be a version line such as 4, 0 or 1.26: numbers separated by dots (got "x")'],
    ['project major 1.', `${ACCOUNT}${RELEASES}    - {id: nginx/nginx, major: "1."}\n`, 'releases.projects[1].major: must be a version line such as 4, 0 or 1.26: numbers separated by dots (got "1.")'],
    [
      'website_summary asked for while websites are off',
      `${ACCOUNT}    sources: {websites: false, checks: false, website_summary: true}\n`,
      'accounts[0].sources.website_summary: needs sources.websites: the website list says which websites to fetch summaries for; turn website_summary off too, or turn websites on',
    ],
    ['check buckets not ascending', `exporter:\n  check_buckets: {ttfb: [0.5, 0.2]}\n${ACCOUNT}`, 'exporter.check_buckets.ttfb: bounds must be strictly ascending, but 0.2 follows 0.5'],
    ['check buckets with a zero', `exporter:\n  check_buckets: {dns_lookup: [0, 1]}\n${ACCOUNT}`, 'exporter.check_buckets.dns_lookup: bound 0 must be a finite number of seconds above 0'],
    ['check buckets empty', `exporter:\n  check_buckets: {tls_handshake: []}\n${ACCOUNT}`, 'exporter.check_buckets.tls_handshake: must list at least one bucket bound'],
    ['check buckets not numbers', `exporter:\n  check_buckets: {ttfb: [fast]}\n${ACCOUNT}`, 'exporter.check_buckets.ttfb[0]: must be a number (got "fast")'],
    [
      'duplicate project',
      `${ACCOUNT}releases:\n  free_base_url: https://free.example.com\n  projects:\n    - {id: torvalds/linux, major: 4}\n    - torvalds/linux\n    - {id: torvalds/linux, major: 4}\n`,
      'releases.projects[2]: duplicate project "torvalds/linux" with major 4 (also releases.projects[0])',
    ],
    [
      'bad project id',
      `${ACCOUNT}${RELEASES}    - "two words"\n`,
      'releases.projects[1].id: must be a project name (nginx), an owner/repository (torvalds/linux) or an http(s) URL (got "two words")',
    ],
    [
      'a bare name in free mode',
      `${ACCOUNT}releases:\n  free_base_url: https://free.example.com\n  projects: [nginx]\n`,
      'releases.projects[0].id: the free endpoint looks projects up as <owner>/<repository>; "nginx" needs mode: marketplace',
    ],
    [
      'nothing to look up',
      `${ACCOUNT}releases:\n  free_base_url: https://free.example.com\n  outdated: {enabled: false}\n`,
      'releases: has nothing to look up: list projects, or leave outdated.enabled on so that installed components are checked',
    ],
    [
      'outdated: a bare project name in free mode',
      `${ACCOUNT}${RELEASES}  outdated:\n    projects: {nginx: nginx}\n`,
      'releases.outdated.projects.nginx: the free endpoint looks projects up as <owner>/<repository>; "nginx" needs mode: marketplace',
    ],
    [
      'outdated: an unknown line policy',
      `${ACCOUNT}${RELEASES}  outdated:\n    line: patch\n`,
      'releases.outdated.line: must be one of minor, major, latest (got "patch")',
    ],
    [
      'outdated: a line policy of one entry',
      `${ACCOUNT}${RELEASES}  outdated:\n    projects:\n      nginx: {project: nginx/nginx, line: newest}\n`,
      'releases.outdated.projects.nginx.line: must be one of minor, major, latest (got "newest")',
    ],
    [
      'outdated: true is not a project',
      `${ACCOUNT}${RELEASES}  outdated:\n    projects: {mysql: true}\n`,
      'releases.outdated.projects.mysql.project: must be a project id such as nginx/nginx, or false to not check this software (got true)',
    ],
    [
      'outdated: a bad project id',
      `${ACCOUNT}${RELEASES}  outdated:\n    projects: {redis: "two words"}\n`,
      'releases.outdated.projects.redis.project: must be a project name (nginx), an owner/repository (torvalds/linux) or an http(s) URL (got "two words")',
    ],
    [
      'outdated: a bad software name',
      `${ACCOUNT}${RELEASES}  outdated:\n    projects: {Redis Server: redis/redis}\n`,
      'releases.outdated.projects["Redis Server"]: software names are lowercase letters, digits, ., _ and -, as the component\'s type (got "Redis Server")',
    ],
    [
      'outdated: an unknown key',
      `${ACCOUNT}${RELEASES}  outdated:\n    lines: major\n`,
      'releases.outdated: unknown key "lines" (did you mean "line"?)',
    ],
    ['YAML syntax error', `${ACCOUNT}    cadence: [1, 2\n    headroom: 0.2\n`, '(yaml): syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]'],
    ['duplicate YAML key', `${ACCOUNT}    headroom: 0.2\n    headroom: 0.3\n`, '(yaml): syntax error: Map keys must be unique'],
    ['a list at the top level', '- name: prod\n', '(root): must be a mapping with the keys exporter, accounts, releases and remote_write (got a list)'],
    ['a scalar at the top level', 'hello\n', '(root): must be a mapping with the keys exporter, accounts, releases and remote_write (got "hello")'],
    ['an empty file', '# nothing yet\n', '(root): the configuration is empty; it needs at least an accounts list'],
  ])('%s', (_name, yaml, expected) => {
    expect(issuesOf(yaml)).toEqual([expected]);
  });
});

describe('parseConfig', () => {
  it('fills every default and converts durations to milliseconds', () => {
    const config = parse(ACCOUNT);
    expect(config.exporter).toEqual({ metricPrefix: 'monapi_', sampleTimestamps: false, nullHandling: 'skip' });
    expect(config.releases).toBeUndefined();
    const account = config.accounts[0];
    expect(account).toMatchObject({
      name: 'prod',
      baseUrl: 'https://mon.example.com/api/v2',
      apiKeySource: { kind: 'env', name: 'PROD_KEY' },
      authScheme: 'bearer',
      rateLimit: { requestsPerMinute: 120, burst: 30 },
      headroom: 0.1,
      concurrency: 4,
      counterGraceMs: 3_600_000,
    });
    const sources = account?.sources;
    expect(settingsOf(sources, 'hosts')).toEqual({ filters: { includeTags: [], excludeTags: [], includeNames: [], excludeNames: [] }, tagLabels: [] });
    expect(settingsOf(sources, 'series')).toEqual({ metrics: { include: ['*'], exclude: [] }, metricOverrides: {}, ingestDelayMs: 180_000, lateDataHorizonMs: 7_200_000 });
    expect(settingsOf(sources, 'websites')).toEqual({ includeNames: [], excludeNames: [] });
    expect(settingsOf(sources, 'checks')).toEqual(DEFAULT_CHECK_BUCKETS);
    const cadences = Object.assign({}, ...Object.values(sources ?? {}).map((source) => source.cadenceMs)) as Record<string, number>;
    expect(cadences).toEqual({
      hosts: 60_000,
      websites: 60_000,
      account: 300_000,
      alerts: 60_000,
      alert_rules: 600_000,
      series: 60_000,
      series_offline: 600_000,
      metric_catalogue: 3_600_000,
      components: 3_600_000,
      checks: 60_000,
      website_summary: 900_000,
      host_details: 3_600_000,
      api_description: 21_600_000,
    });
    expect(switchesOf(sources)).toEqual({
      hosts: true,
      host_details: true,
      metric_catalogue: true,
      series: true,
      components: true,
      websites: true,
      website_summary: true,
      checks: true,
      alerts: true,
      alert_rules: true,
      account: true,
      api_description: true,
    });
    expect(account?.apiKey.reveal()).toBe('prod-secret-1');
  });

  it('reports every problem at once, each with its line and column', () => {
    const yaml = `accounts:
  - name: prod
    base_url: https://mon.example.com/api/v2
    api_key_env: PROD_KEY
    headroom: 3
    cadence:
      seires: 30s
`;
    let error: unknown;
    try {
      parse(yaml);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues;
    expect(issues).toEqual([
      { path: 'accounts[0].headroom', message: 'must be at most 0.9 (got 3)', line: 5, column: 15 },
      { path: 'accounts[0].cadence', message: 'unknown key "seires" (did you mean "series"?)', line: 7, column: 7 },
    ]);
    expect((error as ConfigError).message).toBe(
      'invalid configuration test.yaml: 2 problems\n' +
        '  - accounts[0].headroom: must be at most 0.9 (got 3) (line 5, column 15)\n' +
        '  - accounts[0].cadence: unknown key "seires" (did you mean "series"?) (line 7, column 7)',
    );
  });

  it('gives line and column of a YAML syntax error', () => {
    expect(() => parse('accounts:\n  - name: prod\n    cadence: [1, 2\n    headroom: 0.2\n')).toThrow(
      'invalid configuration test.yaml: 1 problem\n  - (yaml): syntax error: Flow sequence in block collection must be sufficiently indented and end with a ] (line 4, column 5)',
    );
  });

  it('accepts a fast free-mode schedule when the operator opts in', () => {
    const config = parse(`${ACCOUNT}${RELEASES}  schedule: "*/30 * * * *"\n  allow_polling_faster_than_cache: true\n`);
    expect(config.releases).toMatchObject({ mode: 'free', schedule: '*/30 * * * *', shortestScheduleGapMs: 1_800_000, allowPollingFasterThanCache: true });
  });

  it('reads releases in free mode with the default schedule', () => {
    const config = parse(`${ACCOUNT}${RELEASES}    - {id: nodejs/node, major: 20}\n`);
    const { sources, ...releases } = config.releases ?? { sources: {} };
    expect(releases).toEqual({
      mode: 'free',
      freeBaseUrl: 'https://free.example.com',
      http: { timeoutMs: 15_000, deadlineMs: 30_000, maxResponseBytes: 8 * 1024 * 1024, caFile: undefined, ca: undefined, insecureSkipVerify: false },
      schedule: '17 */2 * * *',
      scheduleTimezone: 'Etc/UTC',
      shortestScheduleGapMs: 7_200_000,
      allowPollingFasterThanCache: false,
    });
    expect(settingsOf<ReleaseSettings>(sources, 'releases')).toEqual({
      projects: [
        { id: 'torvalds/linux', major: undefined },
        { id: 'nodejs/node', major: '20' },
      ],
      timing: { schedule: '17 */2 * * *', shortestGapMs: 7_200_000, minGapMs: 7_200_000 },
    });
    const outdated = settingsOf<OutdatedSettings>(sources, 'outdated');
    expect({ enabled: outdated.enabled, line: outdated.line, software: Object.fromEntries(outdated.rules) }).toEqual({
      enabled: true,
      line: 'minor',
      software: {
        nginx: { project: 'nginx/nginx', line: 'minor' },
        'php-fpm': { project: 'php/php-src', line: 'minor' },
        mysql: { project: 'mysql/mysql-server', line: 'minor' },
        mariadb: { project: 'MariaDB/server', line: 'minor' },
        varnish: { project: 'varnishcache/varnish-cache', line: 'minor' },
        agent: { project: 'nginxinc/nginx-amplify-agent', line: 'minor' },
      },
    });
  });

  it('lays the outdated table over the defaults: a project, a project with its own line, an entry turned off, a new software', () => {
    const config = parse(
      `${ACCOUNT}releases:\n  free_base_url: https://free.example.com\n  outdated:\n    line: major\n    projects:\n      nginx: {project: nginx/nginx, line: minor}\n      mysql: false\n      mariadb: mariadb/server-mirror\n      redis: redis/redis\n`,
    );
    expect(settingsOf<ReleaseSettings>(config.releases?.sources, 'releases').projects).toEqual([]);
    const outdated = settingsOf<OutdatedSettings>(config.releases?.sources, 'outdated');
    expect({ line: outdated.line, software: Object.fromEntries(outdated.rules) }).toEqual({
      line: 'major',
      software: {
        nginx: { project: 'nginx/nginx', line: 'minor' },
        'php-fpm': { project: 'php/php-src', line: 'major' },
        mariadb: { project: 'mariadb/server-mirror', line: 'major' },
        varnish: { project: 'varnishcache/varnish-cache', line: 'major' },
        agent: { project: 'nginxinc/nginx-amplify-agent', line: 'major' },
        redis: { project: 'redis/redis', line: 'major' },
      },
    });
  });

  it('turns the outdated check off', () => {
    const config = parse(`${ACCOUNT}${RELEASES}  outdated:\n    enabled: false\n`);
    expect(config.releases?.sources.outdated?.enabled).toBe(false);
  });

  it('takes a major line as the service does, keeping what YAML would turn into another number', () => {
    const config = parse(`${ACCOUNT}${RELEASES}    - {id: a/b, major: 0}\n    - {id: a/b, major: 1.26}\n    - {id: a/b, major: 1.20}\n    - {id: c/d, major: "1.20"}\n    - {id: e/f, major: 1.2}\n`);
    expect(settingsOf<ReleaseSettings>(config.releases?.sources, 'releases').projects.map((p) => p.major)).toEqual([undefined, '0', '1.26', '1.20', '1.20', '1.2']);
    // 1.20 and "1.20" are one line: listed twice for one project is a duplicate.
    expect(issuesOf(`${ACCOUNT}${RELEASES}    - {id: a/b, major: 1.20}\n    - {id: a/b, major: "1.20"}\n`)).toEqual([
      'releases.projects[2]: duplicate project "a/b" with major 1.20 (also releases.projects[1])',
    ]);
  });

  it('reads check histogram buckets, each list on its own, the rest defaulted', () => {
    const config = parse(`exporter:\n  check_buckets:\n    ttfb: [0.1, 0.5, 2]\n${ACCOUNT}`);
    expect(settingsOf(config.accounts[0]?.sources, 'checks')).toEqual({ ...DEFAULT_CHECK_BUCKETS, ttfb: [0.1, 0.5, 2] });
  });

  it('turns the detail sources off with their list sources, unless asked for', () => {
    const off = parse(`${ACCOUNT}    sources: {hosts: false, series: false, components: false, websites: false, checks: false}\n`).accounts[0];
    expect(switchesOf(off?.sources)).toMatchObject({ host_details: false, website_summary: false });
    const chosen = parse(`${ACCOUNT}    sources: {host_details: false}\n`).accounts[0];
    expect(switchesOf(chosen?.sources)).toMatchObject({ hosts: true, host_details: false, website_summary: true });
  });

  it('reads releases in marketplace mode, defaulting the host header to the URL host', () => {
    const config = parse(
      `${ACCOUNT}releases:\n  mode: marketplace\n  marketplace_base_url: https://releases.p.example.com/\n  marketplace_key_env: MARKET_KEY\n  schedule: "*/15 * * * *"\n  projects: [nginx, https://github.com/nginx/nginx]\n`,
    );
    const releases = config.releases;
    expect(releases?.mode).toBe('marketplace');
    if (releases?.mode !== 'marketplace') return;
    expect(releases.marketplaceBaseUrl).toBe('https://releases.p.example.com');
    expect(releases.marketplaceHost).toBe('releases.p.example.com');
    expect(releases.headerNames).toEqual({ key: 'X-RapidAPI-Key', host: 'X-RapidAPI-Host' });
    expect(releases.marketplaceKey.reveal()).toBe('market-secret-3');
    expect(settingsOf<ReleaseSettings>(releases.sources, 'releases').projects.map((p) => p.id)).toEqual(['nginx', 'https://github.com/nginx/nginx']);
  });

  it('reads a key file relative to the config folder, trimming the newline', () => {
    const config = parse('accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n    api_key_file: prod.key\n');
    expect(config.accounts[0]?.apiKey.reveal()).toBe('prod-secret-1');
    expect(config.accounts[0]?.apiKeySource).toEqual({ kind: 'file', path: '/etc/monapi/prod.key' });
  });

  it('treats a section left empty as all defaults, and supports YAML merge keys for shared settings', () => {
    const config = parse(`accounts:
  - &base
    name: prod
    base_url: https://mon.example.com/api/v2
    api_key_env: PROD_KEY
    headroom: 0.2
    hosts:
  - <<: *base
    name: staging
    api_key_env: STAGING_KEY
`);
    expect(config.accounts.map((a) => [a.name, a.headroom, a.apiKey.reveal()])).toEqual([
      ['prod', 0.2, 'prod-secret-1'],
      ['staging', 0.2, 'staging-secret-2'],
    ]);
    expect(settingsOf<HostSettings>(config.accounts[0]?.sources, 'hosts').filters.includeNames).toEqual([]);
  });

  it('applies metric overrides and filters to the selected metrics', () => {
    const config = parse(
      `${ACCOUNT}    metrics:\n      include: ["system.cpu.*", "redis.*"]\n      exclude: ["system.cpu.idle"]\n    metric_overrides:\n      system.cpu.user: {kind: delta}\n      redis.keys: {kind: gauge, unit: count}\n`,
    );
    const account = config.accounts[0];
    if (account === undefined) throw new Error('no account');
    expect(selectMetrics(settingsOf<SeriesSettings>(account.sources, 'series')).map((m) => `${m.name} ${m.kind} ${m.unit}`)).toEqual([
      'redis.keys gauge count',
      'system.cpu.iowait gauge percent',
      'system.cpu.stolen gauge percent',
      'system.cpu.system gauge percent',
      'system.cpu.user delta percent',
    ]);
  });

  it('reads the naming keys of metric overrides, and include patterns of per-device names', () => {
    const config = parse(
      `${ACCOUNT}    metrics:\n      include: ["system.io.*|sd?", "system.cpu.*"]\n    metric_overrides:\n      system.cpu.nice: {kind: gauge, unit: percent, family: system_cpu_time, labels: {mode: nice}}\n      app.queue: {kind: gauge, unit: none, device_label: queue}\n`,
    );
    expect(settingsOf<SeriesSettings>(config.accounts[0]?.sources, 'series').metricOverrides).toEqual({
      'system.cpu.nice': { kind: 'gauge', unit: 'percent', family: 'system_cpu_time', labels: { mode: 'nice' } },
      'app.queue': { kind: 'gauge', unit: 'none', deviceLabel: 'queue' },
    });
  });

  it('accepts an include list of per-device names only: their devices are known at run time', () => {
    for (const include of ['"system.net.bytes_sent|*"', '"system.io.iops_r|sd?", "system.io.iops_w|sd?"', '"*|lo"']) {
      const config = parse(`${ACCOUNT}    metrics:\n      include: [${include}]\n      exclude: ["system.io.*|sdb"]\n`);
      expect(settingsOf<SeriesSettings>(config.accounts[0]?.sources, 'series').metrics.include).toEqual(JSON.parse(`[${include}]`));
    }
  });

  it('turns tag keys into prefixed, sanitised label names', () => {
    const config = parse(`${ACCOUNT}    tag_labels: [env, team-name]\n`);
    expect(settingsOf<HostSettings>(config.accounts[0]?.sources, 'hosts').tagLabels).toEqual([
      { tagKey: 'env', labelName: 'tag_env' },
      { tagKey: 'team-name', labelName: 'tag_team_name' },
    ]);
  });
});

describe('secrets stay out of every serialisation', () => {
  const yaml = `${ACCOUNT}  - name: staging
    base_url: https://staging.example.com/api/v2
    api_key_file: other.key
releases:
  mode: marketplace
  marketplace_base_url: https://releases.p.example.com
  marketplace_key_env: MARKET_KEY
  projects: [nginx]
`;
  const secrets = ['prod-secret-1', 'other-secret-4', 'market-secret-3'];

  it.each([
    ['JSON.stringify', (config: unknown) => JSON.stringify(config)],
    ['util.inspect', (config: unknown) => inspect(config, { depth: Infinity, showHidden: true })],
    ['String of each key', (config: unknown) => {
      const c = config as ReturnType<typeof parse>;
      return [...c.accounts.map((a) => String(a.apiKey)), c.releases?.mode === 'marketplace' ? String(c.releases.marketplaceKey) : ''].join(' ');
    }],
  ])('%s', (_name, serialise) => {
    const config = parse(yaml);
    const text = serialise(config);
    expect(text).toContain('redacted');
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  it('keeps the keys themselves readable where they are needed', () => {
    const config = parse(yaml);
    expect(config.accounts.map((a) => a.apiKey.reveal())).toEqual(['prod-secret-1', 'other-secret-4']);
  });

  it('never puts a key into an error message, wherever an operator pasted it', () => {
    const pasted = 'pasted-key-9f8e7d';
    const bad = `accounts:
  - name: prod
    base_url: https://user:${pasted}@mon.example.com/api/v2
    api_key_env: ${pasted}
    api_key: ${pasted}
    token: ${pasted}
`;
    let message = '';
    try {
      parse(bad);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split('\n')).toHaveLength(5);
    expect(message).not.toContain(pasted);
  });
});

describe('loadConfig', () => {
  it('reads the file through the given reader and resolves key files beside it', () => {
    const files: Record<string, string> = {
      '/srv/conf/monapi.yaml': 'accounts:\n  - name: prod\n    base_url: https://mon.example.com/api/v2\n    api_key_file: keys/prod\n',
      '/srv/conf/keys/prod': 'k-123\n',
    };
    const config = loadConfig('/srv/conf/monapi.yaml', {}, (path) => {
      const text = files[path];
      if (text === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return text;
    });
    expect(config.accounts[0]?.apiKey.reveal()).toBe('k-123');
  });

  it('names the file when it cannot be read', () => {
    expect(() =>
      loadConfig('/nowhere/monapi.yaml', {}, () => {
        throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      }),
    ).toThrow('invalid configuration /nowhere/monapi.yaml: 1 problem\n  - (file): cannot read /nowhere/monapi.yaml: file not found');
  });
});
