import fc from 'fast-check';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { ALONE_MIN, RUN_TARGET, RUNS_MIN } from './assemble.js';
import { BodyBuilder, type BuilderReply } from './builder.js';
import { ChunkedBodies, ChunkStore, CHUNK_BYTES } from './chunks.js';
import { compressTail, gzipMember } from './gzip.js';
import { bodyOfChunks } from './store.js';

/**
 * Families 0 (large: runs), 1 (mid-size: one unit of its own for both formats) and 2 (tiny:
 * per-format units, whose dictionary is then the end of family 1). A group is a host with one
 * line in each of the first two, and every TINY_EVERY-th host one in the third.
 */
const FAMILIES = [
  { id: 0, name: 'demo_cpu_ratio' },
  { id: 1, name: 'demo_up' },
  { id: 2, name: 'demo_zz_tiny' },
];
const TINY_EVERY = 40;

const tinyLine = (host: number): string => `demo_zz_tiny{host="h${host}"} 1\n`;

function hostLines(host: number, value: number, upValue = 1): { lines: Uint8Array; ends: Uint32Array; familyIds: Int32Array } {
  const cpu = Buffer.from(`demo_cpu_ratio{host_uuid="${host.toString(16).padStart(32, '0')}",mode="user"} ${value}\n`);
  const up = Buffer.from(`demo_up{host="h${host}"} ${upValue}\n`);
  const parts = host % TINY_EVERY === 0 ? [cpu, up, Buffer.from(tinyLine(host))] : [cpu, up];
  let at = 0;
  return { lines: new Uint8Array(Buffer.concat(parts)), ends: Uint32Array.from(parts, (part) => (at += part.length)), familyIds: Int32Array.from(parts, (_, i) => i) };
}

/**
 * Bytes of the headers in one format that the per-format units hold, compressed again in every
 * build: the tiny family's. The headers of families compressed on their own are units of their
 * own, compressed once and kept.
 */
const HEADER_BYTES = `# TYPE ${FAMILIES[2]?.name} gauge\n`.length;

function newBuilder(onChunksDropped?: (dropped: number, held: number) => void): BodyBuilder {
  const builder = new BodyBuilder(onChunksDropped);
  for (const family of FAMILIES) {
    builder.setFamily({ type: 'family', store: 0, id: family.id, name: family.name, textHeader: `# TYPE ${family.name} gauge\n`, openMetricsHeader: `# TYPE ${family.name} gauge\n` });
  }
  return builder;
}

function put(builder: BodyBuilder, host: number, value: number, upValue = 1): void {
  const { lines, ends, familyIds } = hostLines(host, value, upValue);
  builder.putGroup({ type: 'group', store: 0, name: `host/${String(host).padStart(5, '0')}`, familyIds, lines, ends, openMetricsLines: undefined, openMetricsEnds: undefined });
}

/** Takes each build's chunks as the serving thread does, and checks its bodies against each other. */
class Served {
  compressed = 0;
  /** The last OpenMetrics body. */
  openMetrics = '';
  /** Some groups carry OpenMetrics lines of their own (timestamps). */
  formatsDiffer = false;
  /** Buffers a scrape of the last text body writes, raw and compressed. */
  pieces = 0;
  /** Bytes of chunks the last take let go, and those it holds. */
  dropped = 0;
  held = 0;
  private readonly chunks = new ChunkStore();

  async take(reply: BuilderReply): Promise<string> {
    if (reply.type !== 'built' || !reply.changed) throw new Error(`expected a changed build, got ${JSON.stringify(reply)}`);
    this.compressed = reply.compressedBytes;
    for (const chunk of reply.chunks) expect(chunk.bytes).toBeInstanceOf(SharedArrayBuffer);
    this.chunks.add(reply.chunks);
    const body = bodyOfChunks(this.chunks, reply.text, 'text');
    const openMetrics = bodyOfChunks(this.chunks, reply.openMetrics, 'OpenMetrics');
    this.dropped = this.chunks.keepOnly([reply.text.raw, reply.text.deflated, reply.openMetrics.raw, reply.openMetrics.deflated]);
    this.held = this.chunks.heldBytes;
    this.pieces = body.pieces.length + body.deflated.length;
    const text = Buffer.concat(body.pieces).toString();
    expect(text.startsWith(`# TYPE ${FAMILIES[0]?.name} gauge\n`)).toBe(true);
    // gunzipSync checks the CRC-32 and length the builder computed for the identity bytes.
    expect(gunzipSync(Buffer.concat(gzipMember(body, await compressTail(Buffer.alloc(0))))).toString()).toBe(text);
    this.openMetrics = Buffer.concat(openMetrics.pieces).toString();
    expect(gunzipSync(Buffer.concat(gzipMember(openMetrics, await compressTail(Buffer.alloc(0))))).toString()).toBe(this.openMetrics);
    if (!this.formatsDiffer) {
      // Without timestamps and with the same headers, both formats are the same bytes.
      expect(this.openMetrics).toBe(text);
      expect(Buffer.concat(openMetrics.deflated).equals(Buffer.concat(body.deflated))).toBe(true);
    }
    return text;
  }
}

function sortedLines(text: string, prefix: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(prefix)).sort();
}

function expectedLines(values: ReadonlyMap<number, number>, prefix: string): string[] {
  const all = [...values].map(([host, value]) => hostLines(host, value)).map(({ lines }) => Buffer.from(lines).toString().split('\n'));
  return all.flatMap(([cpu, up]) => (prefix === 'demo_cpu' ? [cpu as string] : [up as string])).sort();
}

/** The small family's lines of hosts 0..hosts-1, compressed once for both formats by a build that changes one of them. */
function smallFamilyBytes(hosts: number): number {
  let bytes = 0;
  for (let h = 0; h < hosts; h++) {
    const { ends } = hostLines(h, 0);
    bytes += (ends[1] as number) - (ends[0] as number);
  }
  return bytes;
}

/** The tiny family's lines: in the per-format units, compressed once per format in every build. */
function tinyFamilyBytes(hosts: number): number {
  let bytes = 0;
  for (let h = 0; h < hosts; h += TINY_EVERY) bytes += Buffer.byteLength(tinyLine(h));
  return bytes;
}

describe('BodyBuilder runs of groups', () => {
  const hosts = 2000;
  const lineBytes = hostLines(0, 0.5).ends[0] as number;

  it('is large enough a family to be laid out as runs', () => {
    expect(hosts * lineBytes).toBeGreaterThan(RUNS_MIN * 2);
  });

  it('compresses only the runs holding what changed, and the bodies hold every line once', async () => {
    const builder = newBuilder();
    const served = new Served();
    const values = new Map<number, number>();
    for (let h = 0; h < hosts; h++) {
      values.set(h, 0.5);
      put(builder, h, 0.5);
    }
    const first = await served.take(builder.build(1, 1));
    const whole = served.compressed;
    expect(whole).toBeGreaterThan(hosts * lineBytes);
    // The first build lays groups out in order.
    expect(first.split('\n').filter((line) => line.startsWith('demo_cpu'))).toEqual(sortedLines(first, 'demo_cpu'));

    // Hosts polled together change together: ten hosts next to each other in one run.
    for (let h = 100; h < 110; h++) {
      values.set(h, 0.75);
      put(builder, h, 0.75);
    }
    const second = await served.take(builder.build(2, 1));
    expect(sortedLines(second, 'demo_cpu')).toEqual(expectedLines(values, 'demo_cpu'));
    expect(sortedLines(second, 'demo_up')).toEqual(expectedLines(values, 'demo_up'));
    // The run that held them, now split into the other hosts and the changed ones; the small
    // family's lines and every header are as they were, and compressed as they were.
    expect(served.compressed).toBeLessThanOrEqual(RUN_TARGET + 10 * lineBytes + 2 * (HEADER_BYTES + tinyFamilyBytes(hosts)));
    // A scrape writes a few large buffers: a chunk holds many runs.
    expect(served.pieces).toBeLessThanOrEqual(2 * Math.ceil(second.length / CHUNK_BYTES) + 8);
  });

  it('tells after each build the bytes of the last one\'s chunks it let go, as a thread serving them counts them', async () => {
    const told: [number, number][] = [];
    const builder = newBuilder((dropped, held) => told.push([dropped, held]));
    const served = new Served();
    for (let h = 0; h < hosts; h++) put(builder, h, 0.5);
    await served.take(builder.build(1, 1));
    // The first build lets nothing go.
    expect(told).toEqual([]);
    for (let round = 2; round <= 4; round++) {
      for (let h = 100 * round; h < 100 * round + 10; h++) put(builder, h, round);
      await served.take(builder.build(round, 1));
      expect(served.dropped).toBeGreaterThan(0);
      expect(told.at(-1)).toEqual([served.dropped, served.held]);
    }
    expect(told).toHaveLength(3);
    // A build with nothing changed lets nothing go and says nothing.
    expect(builder.build(5, 1)).toMatchObject({ changed: false });
    expect(told).toHaveLength(3);
  });

  it('keeps the runs of hosts that change together, so the next round costs as little', async () => {
    const builder = newBuilder();
    const served = new Served();
    for (let h = 0; h < hosts; h++) put(builder, h, 0);
    await served.take(builder.build(1, 1));
    // Hosts polled round-robin in an order unrelated to their names, 100 per build.
    const order = Array.from({ length: hosts }, (_, i) => (i * 7919) % hosts);
    const perRound: number[] = [];
    for (let round = 1; round <= 3; round++) {
      let compressed = 0;
      for (let at = 0; at < hosts; at += 100) {
        for (const h of order.slice(at, at + 100)) put(builder, h, round);
        await served.take(builder.build(round * 100 + at, 1));
        compressed += served.compressed - 2 * (HEADER_BYTES + tinyFamilyBytes(hosts));
      }
      perRound.push(compressed);
    }
    const changedPerRound = hosts * lineBytes;
    // The first round mixes the old runs (every build touches most of them); from the second on,
    // a build redoes about the runs of the hosts it polled, where a build of the whole family
    // each time would compress 20 times what changed.
    expect(perRound[0]).toBeGreaterThan(5 * changedPerRound);
    expect(perRound[1]).toBeLessThan(4 * changedPerRound);
    expect(perRound[2]).toBeLessThan(4 * changedPerRound);
  });

  it('compresses a small family once for both formats when its lines change, and not at all while they stay', async () => {
    expect(smallFamilyBytes(hosts)).toBeGreaterThan(ALONE_MIN);
    expect(smallFamilyBytes(hosts)).toBeLessThanOrEqual(RUNS_MIN);
    expect(tinyFamilyBytes(hosts)).toBeLessThanOrEqual(ALONE_MIN);
    const builder = newBuilder();
    const served = new Served();
    for (let h = 0; h < hosts; h++) put(builder, h, 0.5);
    await served.take(builder.build(1, 1));
    // Only host 7's line of the small family changes (the large family's line is the same).
    put(builder, 7, 0.5, 0);
    const text = await served.take(builder.build(2, 1));
    expect(text).toContain('demo_up{host="h7"} 0\n');
    expect(served.compressed).toBe(smallFamilyBytes(hosts) + 2 * (HEADER_BYTES + tinyFamilyBytes(hosts)));
    // The same lines again: nothing to build. A change elsewhere: the small family is not redone.
    put(builder, 7, 0.5, 0);
    expect(builder.build(3, 1)).toMatchObject({ type: 'built', changed: false });
    put(builder, 8, 0.25, 1);
    await served.take(builder.build(4, 1));
    expect(served.compressed).toBeLessThan(smallFamilyBytes(hosts));
    expect(served.compressed).toBeLessThanOrEqual(RUN_TARGET + lineBytes + 2 * (HEADER_BYTES + tinyFamilyBytes(hosts)));
    // A new header of the small family is compressed (once per format); its lines are not.
    const header = '# HELP demo_up Whether the host answered.\n# TYPE demo_up gauge\n';
    builder.setFamily({ type: 'family', store: 0, id: 1, name: 'demo_up', textHeader: header, openMetricsHeader: header });
    expect(await served.take(builder.build(5, 1))).toContain(`${header}demo_up{host="h0"} 1\n`);
    expect(served.compressed).toBe(2 * (header.length + HEADER_BYTES + tinyFamilyBytes(hosts)));
    // A family between the first two: the small family's header, kept from the last build, now
    // follows other bytes (Served.take decodes every body).
    builder.setFamily({ type: 'family', store: 0, id: 3, name: 'demo_o_between', textHeader: '# TYPE demo_o_between gauge\n', openMetricsHeader: '# TYPE demo_o_between gauge\n' });
    const between = Buffer.from('demo_o_between{host="h1"} 1\n');
    builder.putGroup({ type: 'group', store: 0, name: 'between', familyIds: Int32Array.of(3), lines: new Uint8Array(between), ends: Uint32Array.of(between.length), openMetricsLines: undefined, openMetricsEnds: undefined });
    expect(await served.take(builder.build(6, 1))).toContain(`demo_o_between{host="h1"} 1\n${header}demo_up{host="h0"} 1\n`);
  });

  it('keeps nothing of a build that fails while laying out its chunks: the next one sends every chunk again', async () => {
    const builder = newBuilder();
    for (let h = 0; h < hosts; h++) put(builder, h, 0.5);
    await new Served().take(builder.build(1, 1));
    put(builder, 7, 0.25, 0);
    const layOut = vi.spyOn(ChunkedBodies.prototype, 'layOut').mockImplementationOnce(() => {
      throw new Error('out of shared memory');
    });
    try {
      expect(() => builder.build(2, 1)).toThrow('out of shared memory');
    } finally {
      layOut.mockRestore();
    }
    // As the serving side after a failed build: it holds no chunk of the last one.
    const text = await new Served().take(builder.build(3, 1));
    expect(text).toContain('demo_up{host="h7"} 0\n');
    expect(sortedLines(text, 'demo_cpu')).toHaveLength(hosts);
  });

  it('serves every line exactly once whatever is published, retracted and built', async () => {
    /** A host's lines: without the large family's line, or with a timestamp on it in OpenMetrics. */
    interface Host {
      readonly value: number;
      readonly cpu: boolean;
      readonly stamped: boolean;
    }
    const cpuLine = (host: number, value: number): string => `demo_cpu_ratio{host_uuid="${host.toString(16).padStart(32, '0')}",mode="user"} ${value}`;
    const upLine = (host: number): string => `demo_up{host="h${host}"} 1`;
    const putHost = (builder: BodyBuilder, host: number, { value, cpu, stamped }: Host): void => {
      const segments = [
        ...(cpu ? [{ id: 0, text: `${cpuLine(host, value)}\n`, openMetrics: `${cpuLine(host, value)}${stamped ? ' 1700000000' : ''}\n` }] : []),
        { id: 1, text: `${upLine(host)}\n`, openMetrics: `${upLine(host)}\n` },
        ...(host % TINY_EVERY === 0 ? [{ id: 2, text: tinyLine(host), openMetrics: tinyLine(host) }] : []),
      ];
      const encode = (parts: string[]): { lines: Uint8Array; ends: Uint32Array } => {
        const buffers = parts.map((part) => Buffer.from(part));
        let at = 0;
        return { lines: new Uint8Array(Buffer.concat(buffers)), ends: Uint32Array.from(buffers, (buffer) => (at += buffer.length)) };
      };
      const text = encode(segments.map((segment) => segment.text));
      const openMetrics = stamped && cpu ? encode(segments.map((segment) => segment.openMetrics)) : undefined;
      builder.putGroup({ type: 'group', store: 0, name: `host/${String(host).padStart(5, '0')}`, familyIds: Int32Array.from(segments, (segment) => segment.id), lines: text.lines, ends: text.ends, openMetricsLines: openMetrics?.lines, openMetricsEnds: openMetrics?.ends });
    };
    const expected = (hosts: ReadonlyMap<number, Host>, openMetrics: boolean): string[] =>
      [...hosts]
        .filter(([, host]) => host.cpu)
        .map(([h, host]) => `${cpuLine(h, host.value)}${openMetrics && host.stamped ? ' 1700000000' : ''}`)
        .sort();
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant('put' as const), from: fc.nat(1500), count: fc.integer({ min: 1, max: 400 }), value: fc.nat(1000), cpu: fc.boolean(), stamped: fc.boolean() }),
            fc.record({ op: fc.constant('retract' as const), from: fc.nat(1500), count: fc.integer({ min: 1, max: 50 }) }),
            fc.record({ op: fc.constant('build' as const) }),
          ),
          { maxLength: 12 },
        ),
        async (steps) => {
          const builder = newBuilder();
          const served = new Served();
          const hosts = new Map<number, Host>();
          for (let h = 0; h < 1500; h++) {
            hosts.set(h, { value: 0, cpu: true, stamped: false });
            putHost(builder, h, { value: 0, cpu: true, stamped: false });
          }
          let request = 0;
          await served.take(builder.build(request++, 1));
          for (const step of [...steps, { op: 'build' as const }]) {
            if (step.op === 'put') {
              for (let h = step.from; h < step.from + step.count; h++) {
                // Mostly plain hosts: a stamped one lays the whole large family out per format.
                const host = { value: step.value, cpu: step.cpu || h % 3 !== 0, stamped: step.stamped && h % 97 === 0 };
                hosts.set(h, host);
                putHost(builder, h, host);
              }
            } else if (step.op === 'retract') {
              for (let h = step.from; h < step.from + step.count; h++) {
                hosts.delete(h);
                builder.removeGroup(`host/${String(h).padStart(5, '0')}`);
              }
            } else {
              served.formatsDiffer = [...hosts.values()].some((host) => host.stamped && host.cpu);
              const reply = builder.build(request++, 1);
              if (reply.type === 'built' && !reply.changed) continue;
              const text = await served.take(reply);
              expect(sortedLines(text, 'demo_cpu')).toEqual(expected(hosts, false));
              expect(sortedLines(served.openMetrics, 'demo_cpu')).toEqual(expected(hosts, true));
              expect(sortedLines(text, 'demo_up')).toEqual([...hosts.keys()].map(upLine).sort());
              expect(sortedLines(served.openMetrics, 'demo_zz_tiny')).toEqual([...hosts.keys()].filter((h) => h % TINY_EVERY === 0).map((h) => tinyLine(h).trimEnd()).sort());
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
