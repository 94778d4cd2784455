import { monitoringDecoders } from '../test/support/decoders.js';
import { METRIC_CATALOGUE } from '../src/upstream/monitoring/metric-catalogue.js';

/**
 * The cost of tolerant decoding on the largest body the exporter reads: a series answer
 * with the whole agent catalogue (163 metrics × 60 points, about 590 KB). The baseline,
 * measured in the same run, is `JSON.parse` of the same bytes, which every decoder pays
 * anyway; the figure that matters is what decoding adds on top of it.
 */

const START = Date.UTC(2026, 10, 22, 11, 0, 0);
const series: Record<string, { timestamp: string; value: number | null }[]> = {};
for (const entry of METRIC_CATALOGUE) {
  series[entry.name] = Array.from({ length: 60 }, (_, i) => ({
    timestamp: new Date(START + i * 60_000).toISOString().replace('.000', ''),
    value: i % 7 === 0 ? null : (i * 37) % 100,
  }));
}
const body = JSON.stringify({ host_uuid: 'a'.repeat(32), since: new Date(START).toISOString(), interval: 60, series });
const context = { api: 'monitoring' as const, endpoint: '/hosts/{uuid}/metrics/series' };
const ROUNDS = 7;
const RUNS = 30;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** Median over rounds of the mean time per run, in ms; the two are interleaved so machine noise hits both. */
function measure(run: () => void): number[] {
  for (let i = 0; i < 10; i++) run();
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    for (let i = 0; i < RUNS; i++) run();
    rounds.push((performance.now() - start) / RUNS);
  }
  return rounds;
}

const parseOnly: number[] = [];
const parseAndDecode: number[] = [];
for (let r = 0; r < 3; r++) {
  parseOnly.push(...measure(() => void JSON.parse(body)));
  parseAndDecode.push(...measure(() => void monitoringDecoders.series(JSON.parse(body), context)));
}
const parse = median(parseOnly);
const full = median(parseAndDecode);
process.stdout.write(
  `series body ${(body.length / 1024).toFixed(0)} KB (${Object.keys(series).length} metrics × 60 points)\n` +
    `  JSON.parse (baseline):  ${parse.toFixed(2)} ms\n` +
    `  parse + decode:         ${full.toFixed(2)} ms  (${(full / parse).toFixed(2)}× the baseline; decoding adds ${(full - parse).toFixed(2)} ms)\n`,
);
