import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * `npm run bench:micro`: the micro-benchmarks, one after the other (they measure throughput
 * and must not share the two cores). Each prints its figures and its ratio against a baseline
 * measured in the same run. Extra arguments go to every benchmark. (`npm run bench` is the
 * scale harness, bench/scale.ts.)
 */
const BENCHES = [
  { name: 'request budget vs naive clients against the simulator', file: 'budget.bench.ts', nodeArgs: [] },
  { name: 'series late-data state: hole bitmaps vs lists of open minutes', file: 'series-state.bench.ts', nodeArgs: ['--expose-gc'] },
  { name: 'tolerant decoding of a whole-catalogue series body vs JSON.parse alone', file: 'decode.bench.ts', nodeArgs: [] },
  { name: 'a build of the /metrics bodies after a poll of a few hosts vs after every host changed', file: 'builder.bench.ts', nodeArgs: [] },
];

let failed = 0;
for (const bench of BENCHES) {
  process.stdout.write(`\n## ${bench.name}\n\n`);
  const result = spawnSync(process.execPath, [...bench.nodeArgs, '--import', 'tsx', fileURLToPath(new URL(bench.file, import.meta.url)), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    failed++;
    process.stderr.write(`bench ${bench.file} failed with ${result.status ?? result.signal}\n`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
