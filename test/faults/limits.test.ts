import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { familySum, sampleValue, startRig, type Rig } from './harness.js';

/** Item 5 of issue 13: an account beyond its series limit, end to end. */

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('limits.series', () => {
  it('keeps the account under its limit by dropping whole families, counts them, logs once, keeps serving', async () => {
    const lines: { msg?: string; reason?: string }[] = [];
    const log = pino(
      { level: 'warn' },
      new Writable({
        write(chunk: Buffer, _e, done) {
          for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as { msg?: string; reason?: string });
          done();
        },
      }),
    );
    rig = await startRig({ simulator: { hosts: 5, websites: 3, rateLimitPerMinute: 100_000, burst: 10_000 }, log });
    const r = rig;
    await r.start({ config: r.config(`accounts:\n  - name: pro\n    base_url: ${r.sim.monitoringBaseUrl}\n    api_key_env: SIM_PRO_KEY\n    limits: {series: 150}\n`) });
    await r.advance(5 * 60_000);
    const body = await r.scrape();
    const exposed = (r.exporter?.status() as { accounts: { series_exposed: number }[] }).accounts[0]?.series_exposed ?? Infinity;
    expect(exposed).toBeLessThanOrEqual(150);
    expect(exposed).toBeGreaterThan(100);
    expect(sampleValue(body, 'monapi_series_limit_dropped_total{account="pro",reason="series_limit"}')).toBeGreaterThan(0);
    expect(familySum(body, 'monapi_up', 'account="pro"')).toBe(1);
    expect(lines.filter((l) => l.reason === 'series_limit')).toHaveLength(1);
  });
});
