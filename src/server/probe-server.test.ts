import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startProbeServer, type RunningProbeServer } from './probe-server.js';

let probes: RunningProbeServer | undefined;
afterEach(async () => {
  await probes?.close();
  probes = undefined;
});

/** Asks with curl, in its own process: the test's own event loop is about to be blocked on purpose. */
function curl(url: string): Promise<{ status: number; body: string; seconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '--max-time', '5', '-w', '\n%{http_code} %{time_total}', url]);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const lines = out.split('\n');
      const [status, seconds] = (lines.pop() ?? '').split(' ');
      resolve({ status: Number(status), body: lines.join('\n'), seconds: Number(seconds) });
    });
  });
}

function blockEventLoop(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // Busy on purpose: a /metrics body or a host list holding the event loop.
  }
}

describe('probe listener', () => {
  it('serves /-/healthy and /-/ready only, with the not-ready reason, never anything else', async () => {
    let ready = false;
    probes = await startProbeServer('127.0.0.1:0', { ready: () => ready, reason: () => 'account pro: 3 polling job(s) have not run yet' });
    expect(await curl(`${probes.url}/-/healthy`)).toMatchObject({ status: 200, body: 'OK\n' });
    expect(await curl(`${probes.url}/-/ready`)).toMatchObject({ status: 503, body: 'Not ready: account pro: 3 polling job(s) have not run yet\n' });
    ready = true;
    await new Promise((r) => setTimeout(r, 400));
    expect(await curl(`${probes.url}/-/ready`)).toMatchObject({ status: 200, body: 'OK\n' });
    expect((await curl(`${probes.url}/metrics`)).status).toBe(404);
    expect((await curl(`${probes.url}/status`)).status).toBe(404);
  });

  it('answers while the event loop is blocked for 1.5 s (the main port could not before the block ends)', async () => {
    probes = await startProbeServer('127.0.0.1:0', { ready: () => true, reason: () => '' });
    const answer = curl(`${probes.url}/-/healthy`);
    blockEventLoop(1_500);
    const { status, seconds } = await answer;
    expect(status).toBe(200);
    // Typically a few milliseconds; the bound only tells "answered during the block" from "after it".
    expect(seconds).toBeLessThan(0.75);
  });

  it('says unhealthy once the event loop has been silent past the stall limit', async () => {
    probes = await startProbeServer('127.0.0.1:0', { ready: () => true, reason: () => '' }, 500);
    const late = new Promise<Awaited<ReturnType<typeof curl>>>((resolve) => {
      // Asked 1.2 s into a 1.5 s stall: the event loop has been silent for over 0.5 s.
      const child = spawn('sh', ['-c', `sleep 1.2; curl -sS -w '\\n%{http_code} %{time_total}' ${probes?.url ?? ''}/-/healthy`]);
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('close', () => {
        const lines = out.split('\n');
        const [status, seconds] = (lines.pop() ?? '').split(' ');
        resolve({ status: Number(status), body: lines.join('\n'), seconds: Number(seconds) });
      });
    });
    blockEventLoop(1_500);
    const answer = await late;
    expect(answer.status).toBe(503);
    expect(answer.body).toMatch(/^Unhealthy: the event loop has not answered for \d+ s\n$/);
    await new Promise((r) => setTimeout(r, 400));
    expect((await curl(`${probes.url}/-/healthy`)).status).toBe(200);
  });

  it('fails to start with the address in the message when the port is taken', async () => {
    probes = await startProbeServer('127.0.0.1:0', { ready: () => true, reason: () => '' });
    const taken = probes.url.replace('http://', '');
    await expect(startProbeServer(taken, { ready: () => true, reason: () => '' })).rejects.toThrow(`cannot listen on ${taken} (probes)`);
  });
});
