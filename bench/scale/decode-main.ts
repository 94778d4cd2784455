/**
 * Decode + map alone, for profiling (`node --cpu-prof --import tsx bench/scale/decode-main.ts`):
 * the same replay as the scale harness's "Decode + map" section, against an in-process simulator.
 *
 *   node --import tsx bench/scale/decode-main.ts [hosts=40] [repetitions=7]
 */
import { startSimulator } from '../../simulator/index.js';
import { measureDecode } from './decode.js';

const hosts = Number(process.argv[2] ?? 40);
const repetitions = Number(process.argv[3] ?? 7);
const sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts, websites: 5, rateLimitPerMinute: 1e9, burst: 1e9 });
try {
  const result = await measureDecode(sim.monitoringBaseUrl, repetitions);
  process.stdout.write(`${result.requests} responses, ${(result.bytes / 1e6).toFixed(2)} MB, ${result.samples} samples\n`);
  process.stdout.write(`decode + map ${result.decodeMapMs.toFixed(2)} ms, JSON.parse ${result.jsonParseMs.toFixed(2)} ms: ${(result.decodeMapMs / result.jsonParseMs).toFixed(2)}x\n`);
  for (const s of result.bySource) process.stdout.write(`  ${s.source.padEnd(18)} ${String(s.bytes).padStart(9)} B  ${s.ms.toFixed(2).padStart(7)} ms  ${s.jsonParseMs.toFixed(2).padStart(6)} ms  ${(s.ms / s.jsonParseMs).toFixed(2)}x\n`);
} finally {
  await sim.close();
}
