import { isRecord } from '../tolerant/values.js';
import { keyWords } from './words.js';

/**
 * An item's shape: every place a value sits in it, as a path of keys, with the words of
 * that path. Objects are entered (to a depth); a list is a value of its own (tags, a list of
 * checks), not entered. The signature names the shape without its values, so items of one
 * shape share what the finder made of the first.
 */

export interface Leaf {
  readonly path: readonly string[];
  /** The canonical words of every key on the path, in order, fillers left out. */
  readonly words: readonly string[];
  /** A nested object, which a field of several values (a rate: count and period) may match. */
  readonly object: boolean;
  /** A list: only a field of several strings may take it. */
  readonly list: boolean;
  /** How deep it sits: 1 for a key of the item itself. */
  readonly depth: number;
}

/** How far into nested objects the finder looks. */
export const MAX_DEPTH = 5;
/** Items with more keys than this are described from their first ones (a map keyed by metric name is no item). */
const MAX_LEAVES = 400;

/** Every leaf (and nested object) of an item, in document order. */
export function leavesOf(item: Readonly<Record<string, unknown>>): Leaf[] {
  const leaves: Leaf[] = [];
  const walk = (record: Readonly<Record<string, unknown>>, path: readonly string[], words: readonly string[]) => {
    for (const key of Object.keys(record)) {
      if (leaves.length >= MAX_LEAVES) return;
      const value = record[key];
      const childPath = [...path, key];
      const childWords = [...words, ...keyWords(key)];
      const nested = isRecord(value);
      leaves.push({ path: childPath, words: childWords, object: nested, list: Array.isArray(value), depth: childPath.length });
      if (nested && childPath.length < MAX_DEPTH) walk(value, childPath, childWords);
    }
  };
  walk(item, [], []);
  return leaves;
}

/** The keys of an item and of its nested objects, without values: equal for items of one shape. */
export function signatureOf(item: Readonly<Record<string, unknown>>): string {
  let signature = '';
  let count = 0;
  const walk = (record: Readonly<Record<string, unknown>>, depth: number) => {
    for (const key in record) {
      if (++count > MAX_LEAVES) return;
      const value = record[key];
      signature += key;
      if (Array.isArray(value)) signature += '[]';
      else if (isRecord(value) && depth < MAX_DEPTH) {
        signature += '{';
        walk(value, depth + 1);
        signature += '}';
      }
      signature += ',';
    }
  };
  walk(item, 1);
  return signature;
}

/** The value at a path, or undefined. */
export function valueAt(item: unknown, path: readonly string[]): unknown {
  let current = item;
  for (const key of path) {
    if (!isRecord(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}
