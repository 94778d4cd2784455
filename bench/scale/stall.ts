/**
 * What the exporter's thread did during one stall the harness logged, from the CPU profile of
 * a `--profile` run: the functions with the most time of their own, and with the most time
 * under them. The harness logs each stall as "N ms ending at T µs" on the profile's clock.
 *
 *   node --import tsx bench/scale/stall.ts <file.cpuprofile> <T µs> <N ms>
 */
import { readFileSync } from 'node:fs';
import { frameName } from './places.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Some of the time before the stall counts too: the task that stalled the loop started before the late tick. */
const LEAD_US = 20_000;

const [file, endArg, msArg] = process.argv.slice(2);
const endUs = Number(endArg);
const ms = Number(msArg);
if (!file || !Number.isFinite(endUs) || !(ms > 0)) {
  process.stderr.write('usage: node --import tsx bench/scale/stall.ts <file.cpuprofile> <end µs> <length ms>\n');
  process.exit(2);
}

const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const nameOf = (node: ProfileNode): string => frameName(node.callFrame);

const fromUs = endUs - ms * 1000 - LEAD_US;
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let sampledMs = 0;
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i] ?? 0;
  if (t < fromUs || t > endUs) continue;
  const durationMs = (profile.timeDeltas[i + 1] ?? 0) / 1000;
  sampledMs += durationMs;
  let id: number | undefined = profile.samples[i];
  const seen = new Set<string>();
  for (let depth = 0; id !== undefined; depth++, id = parentOf.get(id)) {
    const node = byId.get(id);
    if (!node) break;
    const name = nameOf(node);
    if (depth === 0) self.set(name, (self.get(name) ?? 0) + durationMs);
    if (!seen.has(name)) {
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + durationMs);
    }
  }
}

const top = (table: Map<string, number>, count: number): string =>
  [...table]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, spent]) => `${spent.toFixed(1).padStart(8)} ms  ${name}`)
    .join('\n');
process.stdout.write(`stall of ${ms} ms ending at ${endUs} µs: ${sampledMs.toFixed(0)} ms sampled from ${LEAD_US / 1000} ms before it\n`);
process.stdout.write(`--- own time\n${top(self, 12)}\n--- time under\n${top(inclusive, 20)}\n`);
