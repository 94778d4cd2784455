import fc from 'fast-check';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compressPrefix, gzipWithTail } from './gzip.js';

describe('gzipWithTail', () => {
  it.each([
    ['empty prefix and tail', '', ''],
    ['empty tail', 'metric 1\n'.repeat(1000), ''],
    ['empty prefix', '', '# EOF\n'],
    ['both', 'a{b="c"} 1\n'.repeat(50_000), 'self_metric 2\n# EOF\n'],
    ['multi-byte characters across the seam', 'ünïcødé ☃ '.repeat(100), '☃ tail'],
  ])('decodes to prefix + tail (%s)', async (_what, prefix, tail) => {
    const compressed = await compressPrefix(Buffer.from(prefix));
    const body = Buffer.concat(await gzipWithTail(compressed, Buffer.from(tail)));
    expect(gunzipSync(body).toString('utf8')).toBe(prefix + tail);
  });

  it('is one gzip member: decoders that stop after the first member still see everything', async () => {
    const compressed = await compressPrefix(Buffer.from('x 1\n'.repeat(1000)));
    const body = Buffer.concat(await gzipWithTail(compressed, Buffer.from('y 2\n')));
    // A second member would start with the gzip magic again after the first trailer.
    expect(body.indexOf(Buffer.from([0x1f, 0x8b, 0x08]), 1)).toBe(-1);
    // gunzipSync verifies the CRC-32 and length in the trailer, so this also checks them.
    expect(gunzipSync(body).toString().endsWith('x 1\ny 2\n')).toBe(true);
  });

  it('reuses one prefix for many different tails', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.string(), async (prefix, tail) => {
        const compressed = await compressPrefix(Buffer.from(prefix));
        const body = Buffer.concat(await gzipWithTail(compressed, Buffer.from(tail)));
        expect(gunzipSync(body).toString()).toBe(Buffer.from(prefix + tail).toString());
      }),
      { numRuns: 50 },
    );
  });
});
