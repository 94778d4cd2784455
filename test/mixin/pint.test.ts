import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, RULES_FILE } from '../../mixin/build.js';
import { startDemo, type RunningDemo } from '../../scripts/demo.js';
import { PROMETHEUS_MAJORS, startPrometheus, type PrometheusMajor, type RunningPrometheus } from '../support/prometheus.js';

/**
 * pint (Cloudflare's Prometheus rule linter, v0.87.0, built by scripts/pint) over the shipped
 * rules (the chart's copy is the same file), online: Prometheus 2 and 3 scrape the demo, and pint asks them whether every series
 * and label a rule selects exists, besides its offline checks (syntax, templates, comparisons,
 * regexps, `for`). Nothing of any severity may be found; an exception would be a
 * `# pint disable ...` comment with its reason on the rule (none is needed today). A missing
 * pint fails the test, never skips it: run scripts/pint (.ci/run does).
 */

const CHART_RULES = 'helm/monapi-exporter/files/rules/monapi-exporter.rules.yaml';
/** Simulated seconds per real second: the first polling cycle, release lookups included, within seconds. */
const SPEED = 30;
const WAIT_FOR_SERIES_MS = 60_000;

interface PintProblem {
  readonly path: string;
  readonly reporter: string;
  readonly problem: string;
  readonly details?: string;
  readonly severity: string;
  readonly lines: readonly number[];
}

/** Where scripts/pint puts its build; the script names the folder, so the version is pinned in one place. */
function requirePint(): string {
  const where = spawnSync('bash', [join(ROOT, 'scripts/pint'), '--where'], { encoding: 'utf8' });
  const dir = where.stdout.trim();
  if (where.status !== 0 || dir === '') throw new Error(`scripts/pint --where failed: ${where.stderr.trim()}`);
  const path = join(dir, 'pint');
  if (!existsSync(path)) throw new Error(`pint is not built (${path} is missing): run scripts/pint, which builds it from the Go module proxy in a few minutes; .ci/run does this`);
  return path;
}

/** Resolved when the file loads: without pint the file fails before any test, none is skipped quietly. */
const PINT = requirePint();

let dir: string;
let demo: RunningDemo | undefined;
const servers = new Map<PrometheusMajor, RunningPrometheus>();

/** Every `monapi_*` name the shipped rules select. */
const ruleMetricNames = (): string[] => [...new Set(readFileSync(join(ROOT, RULES_FILE), 'utf8').match(/\bmonapi_[a-z0-9_]+/g) ?? [])].sort();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monapi-pint-'));
  demo = await startDemo({
    hosts: 4,
    websites: 2,
    rateLimitPerMinute: 120,
    burst: 30,
    seed: 'pint',
    listenAddress: '127.0.0.1:0',
    releasesMode: 'marketplace',
    simulatorPorts: { monitoring: 0, releases: 0, marketplace: 0 },
    logLevel: 'error',
    logFormat: 'json',
    speed: SPEED,
  });
  const target = new URL(demo.exporter.url).host;
  const started = await Promise.allSettled(
    PROMETHEUS_MAJORS.map((major) =>
      // The job the chart's ServiceMonitor gives, which MonapiExporterDown selects.
      startPrometheus({ major, targets: [target], jobName: 'monapi-exporter', scrapeIntervalSeconds: 1 }),
    ),
  );
  for (const result of started) if (result.status === 'fulfilled') servers.set(result.value.major, result.value);
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  // Until every family the rules select has been scraped: before that pint would rightly say it is missing.
  const names = ruleMetricNames();
  await Promise.all(
    [...servers.values()].map((server) =>
      server.waitFor(`count by (__name__) ({__name__=~"${names.join('|')}"})`, (found) => found.length === names.length, WAIT_FOR_SERIES_MS),
    ),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([...servers.values()].map((server) => server.stop()));
  await demo?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** Runs `pint lint` online against both servers; every problem of every severity, and what pint printed. */
function pint(files: readonly string[]): { status: number | null; problems: PintProblem[]; output: string } {
  const config = join(dir, 'pint.hcl');
  const report = join(dir, 'report.json');
  rmSync(report, { force: true });
  writeFileSync(
    config,
    [
      ...[...servers].map(
        ([major, server]) => `prometheus "prometheus${major}" {\n  uri      = "${server.url}"\n  timeout  = "30s"\n  required = true\n}\n`,
      ),
      // The servers are minutes old, and scrape every second: look back over what they have.
      'check "promql/series" {\n  lookbackRange = "10m"\n  lookbackStep  = "5s"\n}\n',
    ].join(''),
  );
  const result = spawnSync(PINT, ['--no-color', '--config', config, '--show-duplicates', 'lint', '--min-severity', 'info', '--json', report, ...files], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.error) throw result.error;
  const output = `${result.stdout}${result.stderr}`;
  if (!existsSync(report)) throw new Error(`pint wrote no report (exit ${result.status}): ${output}`);
  return { status: result.status, problems: JSON.parse(readFileSync(report, 'utf8')) as PintProblem[], output };
}

const described = (problems: readonly PintProblem[]) => problems.map((p) => `${p.path}:${p.lines[0] ?? 0} ${p.severity} ${p.reporter}: ${p.problem}`);

describe('pint', () => {
  it('finds nothing in the shipped rules, checked against Prometheus 2 and 3 scraping the demo', () => {
    expect([...servers.keys()]).toEqual([...PROMETHEUS_MAJORS]);
    // The chart ships the same file (linted together, pint would rightly call every rule a duplicate).
    expect(readFileSync(join(ROOT, CHART_RULES), 'utf8')).toBe(readFileSync(join(ROOT, RULES_FILE), 'utf8'));
    const { status, problems, output } = pint([RULES_FILE]);
    expect(described(problems), output).toEqual([]);
    expect(status, output).toBe(0);
    // Online: it asked the servers.
    expect(output).toContain('online=true');
    expect(output).toMatch(/entries=\d+/);
  }, 60_000);

  it('can fail: a rule on a label the series lack, or on a family the exporter does not have, is a bug', () => {
    const bad = join(dir, 'bad.rules.yaml');
    writeFileSync(
      bad,
      `groups:
  - name: bad
    rules:
      - alert: ReasonOnUp
        expr: min by (account) (monapi_up{reason="unauthorized"}) == 0
        for: 5m
        labels:
          severity: critical
        annotations:
          summary: The key is refused.
          description: The key of {{ $labels.account }} is refused.
      - alert: NoSuchFamily
        expr: monapi_no_such_family > 0
        for: 5m
        labels:
          severity: warning
        annotations:
          summary: Nothing.
          description: Nothing at all.
`,
    );
    const { status, problems, output } = pint([bad]);
    expect(status, output).not.toBe(0);
    const series = problems.filter((p) => p.reporter === 'promql/series' && p.severity === 'Bug');
    // Once per server and rule.
    expect(series.map((p) => p.lines[0]).sort((a, b) => (a ?? 0) - (b ?? 0)), output).toEqual([5, 5, 13, 13]);
    expect(output).toMatch(/`monapi_up` metric but there are no series with the `reason` label/);
  }, 60_000);
});
