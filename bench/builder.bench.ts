import { BodyBuilder } from '../src/exposition/builder.js';

/**
 * What a build of the /metrics bodies costs when a poll changed a few hosts, against a build
 * after every host changed (the baseline, measured in the same run): the builder reads and
 * compresses about what changed, not the body. 8,500 hosts (groups) x 40 families of 3 lines,
 * about 70 MB of text; hosts change 200 at a time in a fixed round-robin order unrelated to
 * their names, as the scheduler polls them, and the first two rounds let runs settle.
 * Wall time of BodyBuilder.build (the compression included), in this thread.
 */

const HOSTS = Number(process.env.BENCH_HOSTS ?? 8500);
const FAMILIES = 40;
const LINES = 3;
const BATCH = 200;

const builder = new BodyBuilder();
for (let f = 0; f < FAMILIES; f++) {
  const name = `bench_metric_${String(f).padStart(3, '0')}`;
  builder.setFamily({ type: 'family', store: 0, id: f, name, textHeader: `# TYPE ${name} gauge\n`, openMetricsHeader: `# TYPE ${name} gauge\n` });
}

function put(host: number, value: number): void {
  const parts: Buffer[] = [];
  const ends: number[] = [];
  let at = 0;
  for (let f = 0; f < FAMILIES; f++) {
    let lines = '';
    for (let k = 0; k < LINES; k++) lines += `bench_metric_${f}{host_uuid="${host.toString(16).padStart(32, '0')}",mode="m${k}"} ${value + k}\n`;
    const bytes = Buffer.from(lines);
    parts.push(bytes);
    at += bytes.length;
    ends.push(at);
  }
  const name = `host/${String(host).padStart(6, '0')}`;
  builder.putGroup({ type: 'group', store: 0, name, familyIds: Int32Array.from({ length: FAMILIES }, (_, f) => f), lines: new Uint8Array(Buffer.concat(parts)), ends: Uint32Array.from(ends), openMetricsLines: undefined, openMetricsEnds: undefined });
}

let request = 0;
function timedBuild(): { ms: number; compressed: number } {
  const started = performance.now();
  const reply = builder.build(request++, 1);
  const ms = performance.now() - started;
  if (reply.type !== 'built' || !reply.changed) throw new Error(`expected a build, got ${JSON.stringify(reply)}`);
  return { ms, compressed: reply.compressedBytes };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

for (let h = 0; h < HOSTS; h++) put(h, 0);
timedBuild();

const full: { ms: number; compressed: number }[] = [];
for (let round = 1; round <= 5; round++) {
  for (let h = 0; h < HOSTS; h++) put(h, round);
  full.push(timedBuild());
}

const order = Array.from({ length: HOSTS }, (_, i) => (i * 7919) % HOSTS);
const batches = Math.ceil(HOSTS / BATCH);
const partial: { ms: number; compressed: number }[] = [];
for (let step = 0; step < batches * 3; step++) {
  const batch = step % batches;
  for (const host of order.slice(batch * BATCH, (batch + 1) * BATCH)) put(host, 100 + step);
  const build = timedBuild();
  if (step >= batches * 2) partial.push(build);
}

const fullMs = median(full.map((b) => b.ms));
const partialMs = median(partial.map((b) => b.ms));
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
process.stdout.write(
  [
    `hosts: ${HOSTS} x ${FAMILIES} families x ${LINES} lines`,
    `every host changed (baseline): median ${fullMs.toFixed(0)} ms a build, ${mb(median(full.map((b) => b.compressed)))} compressed`,
    `${BATCH} hosts changed (${((100 * BATCH) / HOSTS).toFixed(1)}%), runs settled: median ${partialMs.toFixed(1)} ms a build, ${mb(median(partial.map((b) => b.compressed)))} compressed`,
    `ratio: ${(partialMs / fullMs).toFixed(3)} of a build of everything`,
    '',
  ].join('\n'),
);
