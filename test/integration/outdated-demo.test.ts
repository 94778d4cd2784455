import { afterEach, describe, expect, it } from 'vitest';
import { startDemo, type RunningDemo } from '../../scripts/demo.js';
import { shardOfName } from '../../src/sharding/index.js';
import { drive, type Driven } from '../support/drive.js';

/**
 * The demo (simulator and exporter, through the demo's own config file, in both release
 * modes) exports outdated and up-to-date components under the default policy: a newer
 * patch in the installed minor line. The expected verdicts follow from the simulator's
 * release catalogue and the versions its hosts run: nginx 1.26 → 1.26.2 and 1.27 → 1.27.3
 * (1.27.4 is a draft), php 8.2 → 8.2.26 and 8.3 → 8.3.14, mysql 8.0 → 8.0.40 and
 * 8.4 → 8.4.3, MariaDB 10.11 → 10.11.10 and 11.4 → 11.4.4, Varnish 7.5 → 7.5.0 and
 * 7.6 → 7.6.1, the agent 1.8 → 1.8.3 (1.9.0 is a pre-release).
 */

const EXPECTED: Readonly<Record<string, Readonly<Record<string, 0 | 1>>>> = {
  nginx: { '1.26.1': 1, '1.26.2': 0, '1.27.2': 1, '1.27.3': 0 },
  'php-fpm': { '8.2.25': 1, '8.2.26': 0, '8.3.13': 1, '8.3.14': 0 },
  mysql: { '8.0.39': 1, '8.0.40': 0, '8.4.2': 1, '8.4.3': 0 },
  mariadb: { '10.11.9': 1, '10.11.10': 0, '11.4.4': 0 },
  varnish: { '7.5.0': 0, '7.6.0': 1, '7.6.1': 0 },
};

/** `1.8.2-1` → `1.8.2`: the package revision is below any newer release. */
const AGENT_EXPECTED: Readonly<Record<string, 0 | 1>> = { '1.8.1': 1, '1.8.2': 1, '1.8.3': 0 };

let demo: RunningDemo | undefined;
afterEach(async () => {
  await demo?.stop();
  demo = undefined;
}, 30_000);

interface Sample {
  readonly labels: Record<string, string>;
  readonly value: number;
}

function samples(body: string, family: string): Sample[] {
  return body
    .split('\n')
    .filter((line) => line.startsWith(`${family}{`))
    .map((line) => {
      const match = /^\w+\{(.*)\} (\S+)$/.exec(line);
      if (!match) throw new Error(`unexpected sample line ${line}`);
      const labels = Object.fromEntries([...(match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
      return { labels, value: Number(match[2]) };
    });
}

async function metrics(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers: { accept: 'text/plain' } });
  return response.text();
}

/** Waits until both accounts have components and no check is pending. */
async function settled(url: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const body = await metrics(url);
    const checks = samples(body, 'monapi_component_version_checks');
    const pending = checks.filter((s) => s.labels.result === 'pending').reduce((sum, s) => sum + s.value, 0);
    const checked = checks.reduce((sum, s) => sum + s.value, 0);
    const accounts = new Set(samples(body, 'monapi_component_info').map((s) => s.labels.account));
    if (accounts.size === 2 && checked > 0 && pending === 0) return body;
    if (Date.now() > deadline) throw new Error(`the outdated check did not settle in 60 s: ${JSON.stringify(checks)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('the demo', () => {
  it.each(['marketplace', 'free'] as const)(
    'exports outdated and up-to-date components (%s mode)',
    async (releasesMode) => {
      demo = await startDemo({
        hosts: 12,
        websites: 1,
        rateLimitPerMinute: 120,
        burst: 30,
        seed: 'outdated',
        listenAddress: '127.0.0.1:0',
        releasesMode,
        simulatorPorts: { monitoring: 0, releases: 0, marketplace: 0 },
        logLevel: 'error',
        logFormat: 'json',
        speed: 30,
      });
      const body = await settled(demo.exporter.url);
      const outdated = samples(body, 'monapi_component_outdated');

      const verdicts = outdated.filter((s) => s.labels.software !== 'agent');
      for (const { labels, value } of verdicts) {
        const want = EXPECTED[labels.software ?? '']?.[labels.version ?? ''];
        expect(want, `${labels.software} ${labels.version} is not a simulated version`).toBeDefined();
        expect(value, `${labels.software} ${labels.version} against ${labels.latest_version}`).toBe(want);
        expect(labels.line).toBe((labels.version ?? '').split('.').slice(0, 2).join('.'));
      }
      expect(verdicts.some((s) => s.value === 1)).toBe(true);
      expect(verdicts.some((s) => s.value === 0)).toBe(true);
      expect(new Set(outdated.filter((s) => s.labels.software === 'nginx').map((s) => s.labels.latest_version))).toEqual(new Set(['1.26.2', '1.27.3']));

      // Every polled host's agent (hosts beyond the plan's limit are not polled) is checked.
      const agents = outdated.filter((s) => s.labels.software === 'agent');
      expect(agents.length).toBe(samples(body, 'monapi_host_allowed').filter((s) => s.value === 1).length);
      for (const { labels, value } of agents) {
        const installed = (labels.version ?? '').replace(/-\d+$/, '');
        expect(value, `agent ${labels.version}`).toBe(AGENT_EXPECTED[installed]);
        expect(labels.latest_version).toBe('1.8.3');
        expect(labels.component).toBe('agent');
      }

      // Every component got an answer: nothing pending, unknown or unanswered.
      for (const account of ['pro', 'business']) {
        for (const result of ['no_answer', 'unknown_version', 'pending']) {
          const count = samples(body, 'monapi_component_version_checks').find((s) => s.labels.account === account && s.labels.result === result);
          expect(count?.value, `${account} ${result}`).toBe(0);
        }
      }

      // The latest release of every line in use, and the lookups in /status.
      expect(samples(body, 'monapi_component_latest_version_info')).toContainEqual({ labels: { project: 'nginx/nginx', line: '1.27', version: '1.27.3' }, value: 1 });
      const status = (await (await fetch(`${demo.exporter.url}/status`)).json()) as {
        releases: { plan: { sources: { source: string; jobs: number }[] }; outdated: { lines: { project: string; last_error?: string }[] } };
      };
      const lines = status.releases.outdated.lines;
      expect(status.releases.plan.sources.find((s) => s.source === 'outdated')?.jobs).toBe(lines.length);
      expect(lines.filter((l) => l.last_error !== undefined)).toEqual([]);
    },
    90_000,
  );
});

describe('the outdated check on a shard other than 0', () => {
  let driven: Driven | undefined;
  afterEach(async () => {
    await driven?.stop();
    driven = undefined;
  });

  it('looks up the lines of its own components, not the configured projects, with its share of the release budget', async () => {
    const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
    const mine = names.find((n) => shardOfName(n, 2) === 1);
    const other = names.find((n) => shardOfName(n, 2) === 0);
    if (mine === undefined || other === undefined) throw new Error('no names on both shards');
    driven = await drive({
      simulator: { hosts: 6, websites: 1 },
      shard: { ordinal: 1, total: 2 },
      config: `accounts:
  - {name: ${mine}, base_url: \${monitoring}, api_key_env: MINE}
  - {name: ${other}, base_url: \${monitoring}, api_key_env: OTHER}
releases:
  mode: marketplace
  marketplace_base_url: \${marketplace}
  marketplace_key_env: MARKET
  schedule: "0 0 1 1 *"
  projects: [nginx]
  outdated: {line: major}
`,
      env: (sim) => ({ MINE: sim.keys.pro, OTHER: sim.keys.business, MARKET: sim.keys.marketplace }),
    });
    await driven.advance(90_000);
    const body = await driven.scrape();
    const outdated = samples(body, 'monapi_component_outdated');
    expect(outdated.length).toBeGreaterThan(0);
    expect(new Set(outdated.map((s) => s.labels.account))).toEqual(new Set([mine]));
    expect(samples(body, 'monapi_component_version_checks').find((s) => s.labels.result === 'pending')?.value).toBe(0);
    // The configured project is shard 0's.
    expect(samples(body, 'monapi_release_info')).toEqual([]);
    expect(samples(body, 'monapi_plan_jobs').find((s) => s.labels.account === '(releases)' && s.labels.source === 'releases')).toBeUndefined();
    // Half the marketplace budget of one process (60 a minute): together the two shards ask no faster.
    expect(samples(body, 'monapi_budget_configured_requests_per_second').find((s) => s.labels.account === '(releases)')?.value).toBe(0.5);
  }, 60_000);
});
