import { spawn, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../test/support/until.js';
import { startProbeServer, type RunningProbeServer } from './probe-server.js';

let probes: RunningProbeServer | undefined;
afterEach(async () => {
  await probes?.close();
  probes = undefined;
});

/** Asks with curl, in its own process, as a kubelet would. */
function curl(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '--max-time', '5', '-w', '\n%{http_code}', url]);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const lines = out.split('\n');
      resolve({ status: Number(lines.pop()), body: lines.join('\n') });
    });
  });
}

/**
 * Asks with curl, `afterSeconds` from now, while this thread waits for the child (spawnSync):
 * the event loop is silent for exactly as long as the child runs, however busy the machine.
 */
function curlWhileBlocked(url: string, afterSeconds = 0): { status: number; body: string } {
  const ask = `curl -sS --max-time 10 -w '\\n%{http_code}' '${url}'`;
  const { stdout } = spawnSync('sh', ['-c', afterSeconds > 0 ? `sleep ${afterSeconds}; ${ask}` : ask], { encoding: 'utf8' });
  const lines = stdout.split('\n');
  return { status: Number(lines.pop()), body: lines.join('\n') };
}

describe('probe listener', () => {
  it('serves /-/healthy and /-/ready only, with the not-ready reason, never anything else', async () => {
    let ready = false;
    probes = await startProbeServer('127.0.0.1:0', { ready: () => ready, reason: () => 'account pro: 3 polling job(s) have not run yet' });
    expect(await curl(`${probes.url}/-/healthy`)).toMatchObject({ status: 200, body: 'OK\n' });
    expect(await curl(`${probes.url}/-/ready`)).toMatchObject({ status: 503, body: 'Not ready: account pro: 3 polling job(s) have not run yet\n' });
    ready = true;
    const url = probes.url;
    const readyAnswer = await until('/-/ready to follow the readiness beat', async () => {
      const answer = await curl(`${url}/-/ready`);
      return answer.status === 200 ? answer : undefined;
    });
    expect(readyAnswer.body).toBe('OK\n');
    expect((await curl(`${probes.url}/metrics`)).status).toBe(404);
    expect((await curl(`${probes.url}/status`)).status).toBe(404);
  });

  it('answers while the event loop is blocked (the main port could not before the block ends)', async () => {
    probes = await startProbeServer('127.0.0.1:0', { ready: () => true, reason: () => '' });
    expect(curlWhileBlocked(`${probes.url}/-/healthy`)).toEqual({ status: 200, body: 'OK\n' });
  });

  it('says unhealthy once the event loop has been silent past the stall limit', async () => {
    probes = await startProbeServer('127.0.0.1:0', { ready: () => true, reason: () => '' }, 500);
    // Asked after a second of silence, twice the limit.
    const answer = curlWhileBlocked(`${probes.url}/-/healthy`, 1);
    expect(answer.status).toBe(503);
    expect(answer.body).toMatch(/^Unhealthy: the event loop has not answered for \d+ s\n$/);
    const url = probes.url;
    await until('/-/healthy to answer 200 once the event loop turns again', async () => ((await curl(`${url}/-/healthy`)).status === 200 ? true : undefined));
  });

  it('fails to start with the address in the message when the port is taken', async () => {
    probes = await startProbeServer('127.0.0.1:0', { ready: () => true, reason: () => '' });
    const taken = probes.url.replace('http://', '');
    await expect(startProbeServer(taken, { ready: () => true, reason: () => '' })).rejects.toThrow(`cannot listen on ${taken} (probes)`);
  });
});
