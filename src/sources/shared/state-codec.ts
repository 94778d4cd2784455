import { z } from 'zod';
import type { CounterEntry, CounterTable } from './counter-table.js';
import { labelKey } from './families.js';

/**
 * Pieces of the sources' state codecs: the per-source state worth keeping across a restart
 * goes to and from plain JSON through each source's `state.ts`. Decoding checks every field:
 * a state file is input like any other, and a bad one must be refused whole rather than
 * half-restored.
 */

/** JSON has no infinities; cursors use -Infinity for "before anything". */
export const finiteOrNull = (n: number): number | null => (Number.isFinite(n) ? n : null);
export const orMinusInfinity = (n: number | null): number => n ?? -Infinity;

/** Parses or throws a one-line TypeError naming the first wrong field. */
export function parse<S extends z.ZodType>(schema: S, json: unknown, what: string): z.output<S> {
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const at = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  throw new TypeError(`${what}${at}: ${issue?.message ?? 'unreadable'}`);
}

export const count = z.number().finite().min(0);
export const time = z.number().finite();
export const labels = z.record(z.string(), z.string());

// ---- counter tables (checks by result and cache status, alert events) ----

export const counterTableSchema = z.array(z.object({ key: z.string(), labels, value: count, held: z.boolean() }));

export function encodeCounterTable(table: CounterTable): z.input<typeof counterTableSchema> {
  return [...table].map(([key, entry]) => ({ key, labels: { ...entry.labels }, value: entry.value, held: entry.held }));
}

/** The key is made again from the labels: a state file written by another version may key them otherwise. */
export function decodeCounterTable(rows: z.output<typeof counterTableSchema>): CounterTable {
  return new Map(rows.map((row): [string, CounterEntry] => [labelKey(row.labels), { labels: row.labels, value: row.value, held: row.held }]));
}

