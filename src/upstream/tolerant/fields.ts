import { describe, isRecord, type DropReason, type ValueReader } from './values.js';

/**
 * The fields of one JSON object, read by any of several names. A name may be a dotted
 * path into nested objects (`rate_limit.per_minute`). Required fields throw an
 * `ItemProblem` (the item is dropped); optional fields are undefined when absent or null,
 * and an optional field of the wrong type is ignored and noted (the item is kept).
 */

/** One name or several synonyms, tried in order; the first is the canonical name. */
export type Names = string | readonly string[];

/** Why one list item (or a whole single-object body) cannot be used. */
export class ItemProblem extends Error {
  constructor(
    readonly reason: DropReason,
    /** The canonical field name: one of ours, never upstream text. */
    readonly field: string,
    detail: string,
  ) {
    super(`${field}: ${detail}`);
    this.name = 'ItemProblem';
  }
}

/** An optional field that was present but unusable, so it was ignored. */
export interface FieldNote {
  /** The canonical field name. */
  readonly field: string;
  readonly issue: string;
}

export class Fields {
  constructor(
    readonly record: Readonly<Record<string, unknown>>,
    /** Shared by the readers of one response, so its ignored fields are reported once. */
    readonly notes: FieldNote[] = [],
    /** Where this object sits, for the canonical names of nested fields. */
    private readonly prefix = '',
  ) {}

  /** The first of `names` whose value is neither absent nor null. */
  find(names: Names): { readonly name: string; readonly value: unknown } | undefined {
    for (const name of list(names)) {
      const value = lookup(this.record, name);
      if (value !== undefined && value !== null) return { name, value };
    }
    return undefined;
  }

  /** Whether any of `names` is present, null included (a field sent as null says "nothing"). */
  present(names: Names): boolean {
    return list(names).some((name) => lookup(this.record, name) !== undefined);
  }

  /**
   * A field the item cannot do without: the first of `names` that reads; when one is
   * present and none reads, the first one's problem.
   */
  required<T>(names: Names, read: ValueReader<T>): T {
    const result = this.firstReadable(names, read);
    if (result.kind === 'ok') return result.value;
    const field = this.canonical(names);
    if (result.kind === 'absent') throw new ItemProblem('missing_field', field, this.present(names) ? 'is null' : 'is missing');
    throw new ItemProblem(result.reason, field, result.detail);
  }

  /**
   * A field the item can do without: the first of `names` that reads; undefined when none
   * is present (or all are null). Present but unreadable: undefined, and noted.
   */
  optional<T>(names: Names, read: ValueReader<T>): T | undefined {
    const result = this.firstReadable(names, read);
    if (result.kind === 'ok') return result.value;
    if (result.kind === 'unreadable') this.notes.push({ field: this.canonical(names), issue: result.detail });
    return undefined;
  }

  /** A nested object, read with the same notes; undefined when absent or not an object. */
  object(names: Names): Fields | undefined {
    const found = this.find(names);
    if (found === undefined) return undefined;
    if (!isRecord(found.value)) {
      this.notes.push({ field: this.canonical(names), issue: `expected an object, got ${describe(found.value)}` });
      return undefined;
    }
    return new Fields(found.value, this.notes, `${this.prefix}${found.name}.`);
  }

  /** Every key of the object that matches, with its value (e.g. `*_cache_status`). */
  matching(pattern: RegExp): { readonly name: string; readonly value: unknown }[] {
    return Object.entries(this.record)
      .filter(([name, value]) => pattern.test(name) && value !== undefined && value !== null)
      .map(([name, value]) => ({ name, value }));
  }

  private firstReadable<T>(
    names: Names,
    read: ValueReader<T>,
  ): { kind: 'ok'; value: T } | { kind: 'absent' } | { kind: 'unreadable'; reason: DropReason; detail: string } {
    let first: { kind: 'unreadable'; reason: DropReason; detail: string } | undefined;
    for (const name of list(names)) {
      const value = lookup(this.record, name);
      if (value === undefined || value === null) continue;
      const result = read(value);
      if (result.ok) return { kind: 'ok', value: result.value };
      first ??= { kind: 'unreadable', reason: result.reason, detail: result.detail };
    }
    return first ?? { kind: 'absent' };
  }

  private canonical(names: Names): string {
    return `${this.prefix}${list(names)[0] ?? '(field)'}`;
  }
}

function list(names: Names): readonly string[] {
  return typeof names === 'string' ? [names] : names;
}

function lookup(record: Readonly<Record<string, unknown>>, path: string): unknown {
  if (Object.hasOwn(record, path)) return record[path];
  if (!path.includes('.')) return undefined;
  let current: unknown = record;
  for (const part of path.split('.')) {
    if (!isRecord(current) || !Object.hasOwn(current, part)) return undefined;
    current = current[part];
  }
  return current;
}
