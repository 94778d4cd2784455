import type { FamilySamples, FamilySpec, Labels, ScalarSample } from '../../exposition/model.js';

/**
 * Builders for FamilySpec that enforce the naming rules at construction (one place to get
 * them right), and a collector that groups samples by family and refuses duplicate series,
 * which would make a scrape fail.
 */

export type ScalarSpec = FamilySpec & { readonly type: 'gauge' | 'counter' | 'info' };

const METRIC_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function checkedSpec(spec: ScalarSpec): ScalarSpec {
  const { name, type, unit } = spec;
  if (!METRIC_NAME.test(name)) throw new Error(`metric name ${JSON.stringify(name)} is not [a-zA-Z_][a-zA-Z0-9_]*`);
  if (spec.help.trim() === '') throw new Error(`metric ${name}: HELP is empty`);
  if (type === 'counter' && !name.endsWith('_total')) throw new Error(`counter ${name} must end in _total`);
  if (type !== 'counter' && name.endsWith('_total')) throw new Error(`${type} ${name} must not end in _total`);
  if (type === 'info' && !name.endsWith('_info')) throw new Error(`info metric ${name} must end in _info`);
  if (unit !== undefined) {
    const familyName = type === 'counter' ? name.slice(0, -'_total'.length) : name;
    if (!familyName.endsWith(`_${unit}`)) throw new Error(`metric ${name} has unit ${unit} but does not end in _${unit}`);
  }
  return spec;
}

export function gaugeSpec(name: string, help: string, unit?: string): ScalarSpec {
  return checkedSpec(unit === undefined ? { name, type: 'gauge', help } : { name, type: 'gauge', help, unit });
}

export function counterSpec(name: string, help: string, unit?: string): ScalarSpec {
  return checkedSpec(unit === undefined ? { name, type: 'counter', help } : { name, type: 'counter', help, unit });
}

export function infoSpec(name: string, help: string): ScalarSpec {
  return checkedSpec({ name, type: 'info', help });
}

const labelKeys = new WeakMap<Labels, string>();

/**
 * A stable key of a label set, independent of insertion order. Memoised by object identity:
 * a mapper that puts one labels object on many families (a host's series) pays once. Label
 * objects are therefore treated as immutable (`Labels` is readonly).
 */
export function labelKey(labels: Labels): string {
  let key = labelKeys.get(labels);
  if (key === undefined) {
    key = JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
    labelKeys.set(labels, key);
  }
  return key;
}

interface FamilyEntry {
  readonly spec: ScalarSpec;
  readonly samples: ScalarSample[];
  readonly keys: Set<string>;
}

/**
 * Collects scalar samples into families in first-seen order. A second sample with the
 * same label set in one family is dropped and counted in `duplicates` (the first wins);
 * adding a spec whose type, help or unit differs from an earlier one of the same name
 * throws, because that is a programming error, not bad data.
 */
export class FamilyCollector {
  private readonly families = new Map<string, FamilyEntry>();
  duplicates = 0;

  /** Makes the family appear in the output even when it ends up with no samples. */
  declare(spec: ScalarSpec): void {
    this.entry(spec);
  }

  add(spec: ScalarSpec, labels: Labels, value: number, timestampMs?: number): boolean {
    const entry = this.entry(spec);
    const key = labelKey(labels);
    if (entry.keys.has(key)) {
      this.duplicates += 1;
      return false;
    }
    entry.keys.add(key);
    entry.samples.push(timestampMs === undefined ? { labels, value } : { labels, value, timestampMs });
    return true;
  }

  /** Families with at least one sample, in first-seen order. */
  toFamilies(): FamilySamples[] {
    const out: FamilySamples[] = [];
    for (const { spec, samples } of this.families.values()) {
      if (samples.length > 0) out.push({ spec, samples });
    }
    return out;
  }

  private entry(spec: ScalarSpec): FamilyEntry {
    const existing = this.families.get(spec.name);
    if (existing) {
      const old = existing.spec;
      if (old.type !== spec.type || old.help !== spec.help || old.unit !== spec.unit) {
        throw new Error(`metric ${spec.name} declared twice with different type, help or unit`);
      }
      return existing;
    }
    const created: FamilyEntry = { spec, samples: [], keys: new Set() };
    this.families.set(spec.name, created);
    return created;
  }
}
