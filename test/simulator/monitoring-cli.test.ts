import { spawn } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { main, parseCliArgs, USAGE } from '../../simulator/cli.js';

describe('simulator command line', () => {
  it.each<[string[], Record<string, unknown>]>([
    [[], {}],
    [['--monitoring-port', '0', '--releases-port', '9002', '--marketplace-port', '9003'], { monitoringPort: 0, releasesPort: 9002, marketplacePort: 9003 }],
    [['--hosts', '500', '--websites', '20', '--seed', 'bench'], { hosts: 500, websites: 20, seed: 'bench' }],
    [['--rate-limit', '60', '--burst', '5', '--no-retry-after'], { rateLimitPerMinute: 60, burst: 5, retryAfter: false }],
    [['--listen-host', '0.0.0.0'], { listenHost: '0.0.0.0' }],
    [['--hosts=3'], { hosts: 3 }],
    [['--shapes=alt'], { shapes: 'alt' }],
    [['--shapes', 'nested'], { shapes: 'nested' }],
    [['--shapes=nested', '--shape', 'websites=standard,checks=alt'], { shapes: 'nested', shapeOverrides: { websites: 'standard', checks: 'alt' } }],
    [['--shape', 'alert-rules=nested'], { shapeOverrides: { 'alert-rules': 'nested' } }],
    [['--shapes', 'standard', '--shape', 'websites=alt'], { shapes: 'standard', shapeOverrides: { websites: 'alt' } }],
    [['--shapes=alt', '--shape', 'checks=standard,alert-rules=standard', '--shape', 'marketplace-source=standard'], { shapes: 'alt', shapeOverrides: { checks: 'standard', 'alert-rules': 'standard', 'marketplace-source': 'standard' } }],
    [['--late-data'], { lateData: true }],
    [['--late-share', '0.5', '--late-max-minutes', '30'], { lateData: { lateShare: 0.5, maxLatenessMinutes: 30 } }],
    [['--late-data', '--late-never', '0.02'], { lateData: { neverShare: 0.02 } }],
    [['--layout', 'hal,paged'], { layout: { envelope: 'hal', paged: true } }],
    [['--layout', 'jsonapi', '--layout', 'paged', '--page-size', '5'], { layout: { envelope: 'jsonapi', paged: true, pageSize: 5 } }],
    [['--page-size', '2'], { layout: { pageSize: 2, paged: true } }],
    [['--layout=envelope', '--page-fail-after', '2'], { layout: { envelope: 'envelope', pageFailAfter: 2, paged: true } }],
    [['--shapes=alt', '--layout', 'hal'], { shapes: 'alt', layout: { envelope: 'hal' } }],
  ])('%j gives %j', (argv, options) => {
    expect(parseCliArgs(argv)).toEqual({ kind: 'run', options });
  });

  it.each<[string[], string]>([
    [['--hosts', 'abc'], '--hosts'],
    [['--hosts', '-1'], '--hosts'],
    [['--hosts', '1.5'], '--hosts'],
    [['--monitoring-port', '70000'], '--monitoring-port'],
    [['--rate-limit', '0'], '--rate-limit'],
    [['--burst', ''], '--burst'],
    [['--seed', ''], '--seed'],
    [['--frobnicate'], 'frobnicate'],
    [['extra'], 'extra'],
    [['--shapes', 'fancy'], '--shapes'],
    [['--shape', 'websites'], '<endpoint>='],
    [['--shape', 'website=fancy'], 'the shape of website'],
    [['--shape', 'hosts=alt'], "unknown shape endpoint 'hosts'"],
    [['--late-share', '1.5'], '--late-share'],
    [['--late-never', 'lots'], '--late-never'],
    [['--late-max-minutes', '121'], '--late-max-minutes'],
    [['--late-share', '0.8', '--late-never', '0.5'], 'at most 1'],
    [['--layout', 'xml'], '--layout'],
    [['--layout', 'hal,jsonapi'], '--layout names two envelopes'],
    [['--page-size', '0'], '--page-size'],
    [['--page-size', '501'], '--page-size'],
    [['--page-fail-after', 'x'], '--page-fail-after'],
  ])('%j is an error naming %s', (argv, flag) => {
    const parsed = parseCliArgs(argv);
    expect(parsed.kind).toBe('error');
    if (parsed.kind === 'error') expect(parsed.message).toContain(flag);
  });

  it('--help asks for the usage text', () => {
    expect(parseCliArgs(['--help'])).toEqual({ kind: 'help' });
  });

  it('the usage text and the error for an unknown set list every shape set', () => {
    expect(USAGE).toMatch(/--shapes SET[\s\S]*standard[\s\S]*alt[\s\S]*nested/);
    const parsed = parseCliArgs(['--shapes', 'deep']);
    expect(parsed).toEqual({ kind: 'error', message: expect.stringContaining('standard, alt, nested') as unknown });
  });

  it('a bad flag value exits 2 with the flag named on stderr', async () => {
    const writes: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    try {
      expect(await main(['--hosts', 'abc'])).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(writes.join('')).toContain("--hosts must be an integer from 0 to 100000; got 'abc'");
  });

  it('a bad --layout exits 2 naming the flag', async () => {
    const writes: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    try {
      expect(await main(['--layout', 'hal,xml'])).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(writes.join('')).toContain("--layout takes none, hal, jsonapi, envelope and/or paged, joined by commas (hal,paged); got 'xml'");
  });

  it('starts, prints its URLs, keys and shapes, answers in the shape set asked for, and closes cleanly on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'simulator/cli.ts', '--monitoring-port', '0', '--releases-port', '0', '--marketplace-port', '0', '--hosts', '2', '--shapes', 'nested'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('marketplace:')) resolve();
      });
      child.on('exit', () => reject(new Error(`exited early: ${stdout}`)));
    });
    const monitoring = /Monitoring API:\s+(\S+)/.exec(stdout)![1]!;
    expect(monitoring).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v2$/);
    expect(stdout).toMatch(/Control \(\/_sim\):\s+http:\/\/127\.0\.0\.1:\d+\/_sim/);
    expect(stdout).toContain('sim-pro-key');
    const answer = await fetch(`${monitoring}/hosts`, { headers: { 'x-api-key': 'sim-pro-key' } });
    expect(((await answer.json()) as { total: number }).total).toBe(2);
    expect(stdout).toMatch(/Shapes:\s+nested/);
    expect(stdout).toMatch(/Layout:\s+off/);
    const account = await fetch(`${monitoring}/account`, { headers: { 'x-api-key': 'sim-pro-key' } });
    expect(await account.json()).toMatchObject({ account: { id: 'acc_pro_01', plan: { name: 'pro' } }, quotas: { hosts: { used: 2 } } });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
