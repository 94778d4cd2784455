import { advanceDelta, type DeltaPoint, type DeltaState, type DeltaTally } from '../src/sources/series/deltas.js';

/**
 * Heap held by the late-data state of the series source: 1,000 hosts × 150 delta names,
 * with no open hole and with 120 open minutes per name (an agent buffering its 2 hours),
 * against a baseline that keeps a list of open minutes per name, measured in the same run.
 * Run with --expose-gc (npm run bench does).
 */

const HOSTS = Number(process.env.BENCH_HOSTS ?? 1000);
const NAMES = 150;
const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function heapAfter(build: () => unknown): { bytes: number; keep: unknown } {
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const keep = build();
  gc?.();
  return { bytes: process.memoryUsage().heapUsed - before, keep };
}

const names = Array.from({ length: NAMES }, (_, i) => `app.metric${i}`);
const tally: DeltaTally = { missing: { null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 }, late: 0 };

function states(openMinutes: number): Map<string, DeltaState>[] {
  const first: DeltaPoint[] = [{ t: T0 - 4 * MIN, value: 1, sum: 0 }];
  const later: DeltaPoint[] = Array.from({ length: openMinutes + 2 }, (_, i) => ({ t: T0 - 2 * MIN + i * MIN, value: i < openMinutes ? null : 1, sum: 0 }));
  const now = T0 + (openMinutes + 1) * MIN;
  const hosts: Map<string, DeltaState>[] = [];
  for (let h = 0; h < HOSTS; h++) {
    const map = new Map<string, DeltaState>();
    for (const name of names) {
      const start = advanceDelta(first, MIN, undefined, { nowMs: T0, dueUntilMs: T0 - 2 * MIN, giveUpBeforeMs: T0 - 3 * 3_600_000 }, tally);
      const next = advanceDelta(later, MIN, start, { nowMs: now, dueUntilMs: now - MIN, giveUpBeforeMs: now - 3 * 3_600_000 }, tally);
      if (next) map.set(name, next);
    }
    hosts.push(map);
  }
  return hosts;
}

/** The baseline: the same counters with the open minutes as a list of start times per name. */
function listStates(openMinutes: number): Map<string, { total: number; coveredUntilMs: number; holes: number[] }>[] {
  const hosts = [];
  for (let h = 0; h < HOSTS; h++) {
    const map = new Map<string, { total: number; coveredUntilMs: number; holes: number[] }>();
    for (const name of names) map.set(name, { total: h, coveredUntilMs: T0 + openMinutes * MIN, holes: Array.from({ length: openMinutes }, (_, i) => T0 - 2 * MIN + i * MIN) });
    hosts.push(map);
  }
  return hosts;
}

const rows: string[] = [];
for (const open of [0, 120]) {
  const bitmap = heapAfter(() => states(open));
  const list = heapAfter(() => listStates(open));
  const held = (bitmap.keep as Map<string, DeltaState>[])[0]?.get(names[0] ?? '');
  if (open > 0 && held?.holes === 0n) throw new Error('bench built no holes');
  rows.push(
    `| ${open} | ${(bitmap.bytes / 2 ** 20).toFixed(1)} MiB | ${(bitmap.bytes / HOSTS / NAMES).toFixed(0)} B | ${(list.bytes / 2 ** 20).toFixed(1)} MiB | ${(list.bytes / bitmap.bytes).toFixed(2)}x |`,
  );
}
process.stdout.write(
  `${HOSTS} hosts x ${NAMES} delta names\n\n| open minutes per name | bitmap state | per name | list-of-minutes baseline | baseline / bitmap |\n|---|---|---|---|---|\n${rows.join('\n')}\n`,
);
