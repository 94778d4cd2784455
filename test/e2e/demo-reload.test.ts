import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, banner as bannerOf, demo, exited } from '../support/demo-process.js';
import { until } from '../support/until.js';

/**
 * The demo prints its config file and says SIGHUP reloads it: a user who edits that file and
 * sends the signal gets the exporter's reload, not the end of the demo (Node's default for SIGHUP).
 */

const cleanup: (() => void)[] = [];
afterAll(() => cleanup.forEach((f) => f()));

interface LogLine {
  msg?: string;
  changed?: string[];
  err?: { message?: string };
}

function logLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

describe('npm run demo and SIGHUP', () => {
  it('reloads the printed config file on SIGHUP, keeps the previous one when it is broken, and keeps running', { timeout: 60_000 }, async () => {
    const { child, output } = demo(['--hosts', '2', '--websites', '1', '--web.listen-address', '127.0.0.1:0', '--log.format', 'json']);
    cleanup.push(() => child.kill('SIGKILL'));
    const banner = await bannerOf(child, output);
    const configFile = /^ {2}config +(\S+)/m.exec(banner)?.[1];
    const url = /^ {2}exporter +(http:\/\/127\.0\.0\.1:\d+)\//m.exec(banner)?.[1];
    expect(configFile, banner).toBeDefined();
    expect(url, banner).toBeDefined();
    expect(banner).toContain(`kill -HUP ${child.pid}`);
    const reloadGauge = async () => /^monapi_exporter_config_last_reload_successful (\S+)$/m.exec(await (await fetch(`${url!}/metrics`)).text())?.[1];

    // The second account of the file is business: give it another headroom.
    const yaml = readFileSync(configFile!, 'utf8');
    const at = yaml.lastIndexOf('headroom: 0.02');
    expect(at).toBeGreaterThan(yaml.indexOf('name: business'));
    writeFileSync(configFile!, `${yaml.slice(0, at)}headroom: 0.2${yaml.slice(at + 'headroom: 0.02'.length)}`);
    child.kill('SIGHUP');
    const reloaded = await until('the reload logged', () => Promise.resolve(logLines(output()).find((l) => l.msg === 'configuration reloaded')), 10_000);
    expect(reloaded.changed).toEqual(['business']);
    expect(alive(child.pid!)).toBe(true);
    expect(await reloadGauge()).toBe('1');

    writeFileSync(configFile!, 'accounts: [\n');
    child.kill('SIGHUP');
    const failed = await until('the failed reload logged', () => Promise.resolve(logLines(output()).find((l) => l.msg?.startsWith('configuration reload failed'))), 10_000);
    expect(failed.err?.message).toContain(configFile!);
    // /metrics serves snapshots rebuilt as things change: the gauge follows within moments.
    await until('monapi_exporter_config_last_reload_successful 0 on /metrics', async () => ((await reloadGauge()) === '0' ? true : undefined), 10_000);
    expect(alive(child.pid!)).toBe(true);

    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
  });
});
