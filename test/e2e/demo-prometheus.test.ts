import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, banner as bannerOf, demo, exited, ROOT } from '../support/demo-process.js';
import { until } from '../support/until.js';

/**
 * `npm run demo -- --prometheus` as a newcomer runs it: the demo process starts Debian's
 * Prometheus, which scrapes the exporter and loads the alert rules; SIGTERM stops both. Without
 * a Prometheus the demo says how to get one and exits 2 before starting anything.
 */

const DEBIAN_PROMETHEUS = '/usr/bin/prometheus';

const cleanup: (() => void)[] = [];
afterAll(() => cleanup.forEach((f) => f()));

describe('npm run demo -- --prometheus', () => {
  it('starts Prometheus scraping the exporter with the alert rules loaded, and stops it with the demo', { timeout: 40_000 }, async () => {
    // Fails, never skips, where Debian's Prometheus is missing.
    expect(spawnSync(DEBIAN_PROMETHEUS, ['--version']).status, `${DEBIAN_PROMETHEUS} is missing: apt-get install -y prometheus`).toBe(0);
    const { child, output } = demo([`--prometheus=${DEBIAN_PROMETHEUS}`, '--web.listen-address', '127.0.0.1:0', '--log.level', 'warn', '--log.format', 'json']);
    cleanup.push(() => child.kill('SIGKILL'));
    const banner = await bannerOf(child, output);
    const prom = /^ {2}prometheus (http:\/\/127\.0\.0\.1:\d+) .*\(pid (\d+)\)/m.exec(banner);
    const exporter = /^ {2}exporter {3}http:\/\/(127\.0\.0\.1:\d+)\//m.exec(banner);
    expect(prom, banner).not.toBeNull();
    expect(exporter, banner).not.toBeNull();
    const [, url, pidText] = prom!;
    const prometheusPid = Number(pidText);
    cleanup.push(() => alive(prometheusPid) && process.kill(prometheusPid, 'SIGKILL'));
    expect(banner).toContain(`${url}/classic/alerts`);
    expect(banner).toContain(`${url}/api/v1/query?query=monapi_up`);

    interface Target {
      labels: Record<string, string>;
      health: string;
      lastError: string;
    }
    const target = await until(
      "the exporter's target up",
      async () => {
        const body = (await (await fetch(`${url}/api/v1/targets`)).json()) as { data: { activeTargets: Target[] } };
        return body.data.activeTargets.find((t) => t.labels.instance === exporter![1] && t.health === 'up');
      },
      15_000,
    );
    expect(target.labels.job).toBe('monapi-exporter');

    const rules = (await (await fetch(`${url}/api/v1/rules`)).json()) as { data: { groups: { file: string; rules: { name: string; health: string }[] }[] } };
    const groups = rules.data.groups;
    expect(groups.length).toBeGreaterThan(0);
    expect(new Set(groups.map((g) => g.file))).toEqual(new Set([join(ROOT, 'alerts/monapi-exporter.rules.yaml')]));
    const names = groups.flatMap((g) => g.rules.map((r) => r.name));
    expect(names).toContain('MonapiExporterDown');
    const query = (await (await fetch(`${url}/api/v1/query?query=monapi_up`)).json()) as { data: { result: unknown[] } };
    expect(query.data.result.length).toBeGreaterThan(0);

    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
    expect(alive(prometheusPid), 'Prometheus outlived the demo').toBe(false);
    await expect(fetch(`${url}/-/ready`)).rejects.toThrow();
  });

  it('without a Prometheus says how to get one and exits 2, starting nothing', { timeout: 20_000 }, async () => {
    // A PATH holding node and the shell tools but no prometheus, and an empty tool cache.
    const bin = mkdtempSync(join(tmpdir(), 'monapi-demo-noprom-'));
    cleanup.push(() => rmSync(bin, { recursive: true, force: true }));
    symlinkSync(process.execPath, join(bin, 'node'));
    for (const tool of ['sh', 'bash', 'dirname', 'mkdir', 'mktemp']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      if (found !== '') symlinkSync(found, join(bin, tool));
    }
    const env = { HOME: process.env.HOME, PATH: bin, MONAPI_CACHE_DIR: join(bin, 'cache') };
    const cases = [
      { args: ['--prometheus'], says: 'no prometheus on PATH and no build of scripts/prometheus3 in its cache' },
      { args: [`--prometheus=${join(bin, 'no-such-prometheus')}`], says: 'no executable file there' },
    ];
    for (const { args, says } of cases) {
      const { child, output } = demo([...args, '--web.listen-address', '127.0.0.1:0'], env);
      cleanup.push(() => child.kill('SIGKILL'));
      expect(await exited(child), output()).toBe(2);
      expect(output()).toContain(says);
      expect(output()).toContain('apt-get install prometheus');
      expect(output()).toContain('scripts/prometheus3');
      expect(output()).not.toContain('monapi-exporter demo');
      expect(output()).not.toContain('listening');
    }
  });
});
