/**
 * Where the exporter's main thread allocated during the polling window of an `--allocations` run:
 * the functions that allocated the most bytes themselves, and with the most bytes allocated
 * under them, of the objects the run's kind kept (`AllocationKind`: all, old or live).
 *
 *   node --import tsx bench/scale/allocations.ts <file.heapprofile> [top N]
 */
import { readFileSync } from 'node:fs';
import { frameName } from './places.js';

interface SamplingNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly SamplingNode[];
}

const [file, topArg] = process.argv.slice(2);
const top = Number(topArg ?? 25);
if (!file || !(top > 0)) {
  process.stderr.write('usage: node --import tsx bench/scale/allocations.ts <file.heapprofile> [top N]\n');
  process.exit(2);
}

const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: SamplingNode };
const nameOf = (node: SamplingNode): string => frameName(node.callFrame);

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
/** Returns the bytes allocated under `node`; a function on the path twice counts once. */
function walk(node: SamplingNode, onPath: ReadonlySet<string>): number {
  const name = nameOf(node);
  self.set(name, (self.get(name) ?? 0) + node.selfSize);
  total += node.selfSize;
  const path = onPath.has(name) ? onPath : new Set([...onPath, name]);
  let under = node.selfSize;
  for (const child of node.children) under += walk(child, path);
  if (!onPath.has(name)) inclusive.set(name, (inclusive.get(name) ?? 0) + under);
  return under;
}
walk(head, new Set());

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1).padStart(8)} MB ${((100 * bytes) / total).toFixed(1).padStart(5)}%`;
const print = (title: string, table: Map<string, number>): void => {
  console.log(title);
  for (const [name, bytes] of [...table].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${mb(bytes)}  ${name}`);
};
console.log(`sampled allocations: ${(total / 1e6).toFixed(1)} MB`);
print('allocated by the function itself:', self);
print('allocated under the function:', inclusive);
