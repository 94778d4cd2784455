import fc from 'fast-check';
import { crc32, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compressTail, crc32Combine, crc32Of, deflateUnit, gzipMember, type PreparedBody } from './gzip.js';

/** A body compressed in units of `unitSize`, each with the bytes before it as dictionary, as the store does. */
function prepared(text: string, unitSize: number): PreparedBody {
  const raw = Buffer.from(text);
  const deflated: Buffer[] = [];
  let crc = 0;
  for (let at = 0; at < raw.length; at += unitSize) {
    const unit = raw.subarray(at, at + unitSize);
    deflated.push(deflateUnit(unit, raw.subarray(Math.max(0, at - 32 * 1024), at), 6));
    crc = crc32Combine(crc, crc32Of(unit), unit.length);
  }
  return { pieces: [raw], length: raw.length, crc32: crc, deflated, deflatedLength: deflated.reduce((n, d) => n + d.length, 0) };
}

describe('gzipMember', () => {
  it.each([
    ['empty body and tail', '', ''],
    ['empty tail', 'metric 1\n'.repeat(1000), ''],
    ['empty body', '', '# EOF\n'],
    ['both, many units', 'a{b="c"} 1\n'.repeat(50_000), 'self_metric 2\n# EOF\n'],
    ['multi-byte characters across unit seams', 'ünïcødé ☃ '.repeat(1000), '☃ tail'],
  ])('decodes to body + tail (%s)', async (_what, body, tail) => {
    const gz = Buffer.concat(gzipMember(prepared(body, 4096), await compressTail(Buffer.from(tail))));
    // gunzipSync verifies the CRC-32 and length in the trailer too.
    expect(gunzipSync(gz).toString('utf8')).toBe(body + tail);
  });

  it('is one gzip member: decoders that stop after the first member still see everything', async () => {
    const gz = Buffer.concat(gzipMember(prepared('x 1\n'.repeat(10_000), 1000), await compressTail(Buffer.from('y 2\n'))));
    // A second member would start with the gzip magic again after the first trailer.
    expect(gz.indexOf(Buffer.from([0x1f, 0x8b, 0x08]), 1)).toBe(-1);
    expect(gunzipSync(gz).toString().endsWith('x 1\ny 2\n')).toBe(true);
  });

  it('decodes whatever the body, the unit size and the tail', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 3000 }), fc.integer({ min: 1, max: 700 }), fc.string(), async (body, unitSize, tail) => {
        const gz = Buffer.concat(gzipMember(prepared(body, unitSize), await compressTail(Buffer.from(tail))));
        expect(gunzipSync(gz).toString()).toBe(body + tail);
      }),
      { numRuns: 60 },
    );
  });

  it('compresses units with dictionaries about as well as the body in one go', () => {
    const body = Array.from({ length: 20_000 }, (_, i) => `demo_metric{host="host-${i % 500}",device="sd${i % 7}"} ${i * 3}\n`).join('');
    const units = prepared(body, 16 * 1024);
    const whole = deflateUnit(Buffer.from(body), undefined, 6);
    expect(units.deflatedLength).toBeLessThan(whole.length * 1.03);
  });
});

describe('crc32Combine', () => {
  it('gives the CRC-32 of a concatenation from the CRCs of its parts', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 }), (a, b) => {
        const [x, y] = [Buffer.from(a), Buffer.from(b)];
        expect(crc32Combine(crc32Of(x), crc32Of(y), y.length)).toBe(crc32(Buffer.concat([x, y])) >>> 0);
      }),
      { numRuns: 300 },
    );
  });

  it('handles lengths beyond 32 bits: shifting past 2^32 bytes is shifting twice past 2^31', () => {
    const shift = (crc: number, bytes: number): number => crc32Combine(crc, 0, bytes);
    expect(shift(0x12345678, 2 ** 32)).toBe(shift(shift(0x12345678, 2 ** 31), 2 ** 31));
    expect(shift(0x12345678, 2 ** 32 + 5)).toBe(shift(shift(0x12345678, 2 ** 32), 5));
  });
});
