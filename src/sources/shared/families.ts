import type { FamilySamples, FamilySpec, Labels, ScalarSample, SummarySample } from '../../exposition/model.js';

/**
 * Builders for FamilySpec that enforce the naming rules at construction (one place to get
 * them right), and a collector that groups samples by family and refuses duplicate series,
 * which would make a scrape fail.
 */

export type ScalarSpec = FamilySpec & { readonly type: 'gauge' | 'counter' | 'info' };
export type SummarySpec = FamilySpec & { readonly type: 'summary' };

const METRIC_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Sample names a summary or histogram adds to its family name; no other family may end in them. */
const DERIVED_SUFFIXES = ['_count', '_sum', '_bucket'];

function checkedSpec<Spec extends FamilySpec>(spec: Spec): Spec {
  const { name, type, unit } = spec;
  if (!METRIC_NAME.test(name)) throw new Error(`metric name ${JSON.stringify(name)} is not [a-zA-Z_][a-zA-Z0-9_]*`);
  if (spec.help.trim() === '') throw new Error(`metric ${name}: HELP is empty`);
  if (type === 'counter' && !name.endsWith('_total')) throw new Error(`counter ${name} must end in _total`);
  if (type !== 'counter' && name.endsWith('_total')) throw new Error(`${type} ${name} must not end in _total`);
  if (type === 'info' && !name.endsWith('_info')) throw new Error(`info metric ${name} must end in _info`);
  if (type === 'summary' && DERIVED_SUFFIXES.some((suffix) => name.endsWith(suffix))) {
    throw new Error(`summary ${name} must not end in ${DERIVED_SUFFIXES.join(', ')}`);
  }
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

export function summarySpec(name: string, help: string, unit?: string): SummarySpec {
  return checkedSpec(unit === undefined ? { name, type: 'summary', help } : { name, type: 'summary', help, unit });
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
    key = keyOf(labels);
    labelKeys.set(labels, key);
  }
  return key;
}

/**
 * `labelKey` without remembering a key it had to make: for label objects made anew on every
 * poll (a host list's), which the memo would only fill (its entries cost more to make than
 * the key).
 */
function passingLabelKey(labels: Labels): string {
  return labelKeys.get(labels) ?? keyOf(labels);
}

function keyOf(labels: Labels): string {
  const names = Object.keys(labels);
  for (let i = 1; i < names.length; i++) {
    if ((names[i - 1] as string) > (names[i] as string)) {
      names.sort();
      break;
    }
  }
  // A label name holds no '=' or quote and a JSON string ends where it ends: no two sets share a key.
  let key = '';
  for (const name of names) key += `${name}=${JSON.stringify(labels[name])},`;
  return key;
}

/** Label sets of the same names with the same values, in any order. */
function sameLabels(a: Labels, b: Labels): boolean {
  if (a === b) return true;
  let names = 0;
  for (const name in a) {
    if (a[name] !== b[name] || !Object.hasOwn(b, name)) return false;
    names += 1;
  }
  for (const _name in b) names -= 1;
  return names === 0;
}

/**
 * A family holding this few samples finds a duplicate by comparing label sets; a larger one
 * keeps their keys. Most families of a mapper's call hold one or a few samples (one host's
 * series), where building a key per sample cost more than the rest of the mapping.
 */
const COMPARE_UP_TO = 8;

type FamilyEntry = (
  | { readonly spec: ScalarSpec; readonly samples: ScalarSample[] }
  | { readonly spec: SummarySpec; readonly samples: SummarySample[] }
) & { keys: Set<string> | undefined };

/**
 * Collects samples into families in first-seen order. A second sample with the same label
 * set in one family is dropped and counted in `duplicates` (the first wins); adding a spec
 * whose type, help or unit differs from an earlier one of the same name throws, because
 * that is a programming error, not bad data.
 */
export class FamilyCollector {
  private readonly families = new Map<string, FamilyEntry>();
  /** The family added to last. */
  private last: FamilyEntry | undefined;
  duplicates = 0;

  /** Makes the family appear in the output even when it ends up with no samples. */
  declare(spec: ScalarSpec | SummarySpec): void {
    this.entry(spec);
  }

  add(spec: ScalarSpec, labels: Labels, value: number, timestampMs?: number): boolean {
    const entry = this.entry(spec);
    if (!this.claim(entry, labels)) return false;
    (entry.samples as ScalarSample[]).push(timestampMs === undefined ? { labels, value } : { labels, value, timestampMs });
    return true;
  }

  /** `quantiles`: ascending `[quantile, value]` pairs; a value may be NaN when unknown. */
  addSummary(spec: SummarySpec, labels: Labels, quantiles: SummarySample['quantiles'], sum: number, count: number): boolean {
    const entry = this.entry(spec);
    if (!this.claim(entry, labels)) return false;
    (entry.samples as SummarySample[]).push({ labels, quantiles, sum, count });
    return true;
  }

  /** Families with at least one sample, in first-seen order. */
  toFamilies(): FamilySamples[] {
    const out: FamilySamples[] = [];
    for (const family of this.families.values()) {
      if (family.samples.length === 0) continue;
      // Narrowing does not follow a discriminant nested in `spec`; the entry types pair them.
      out.push({ spec: family.spec, samples: family.samples } as FamilySamples);
    }
    return out;
  }

  private claim(entry: FamilyEntry, labels: Labels): boolean {
    const samples: readonly { readonly labels: Labels }[] = entry.samples;
    if (entry.keys === undefined && samples.length < COMPARE_UP_TO) {
      for (const sample of samples) if (sameLabels(sample.labels, labels)) return this.duplicate();
      return true;
    }
    entry.keys ??= new Set(samples.map((sample) => passingLabelKey(sample.labels)));
    const key = passingLabelKey(labels);
    if (entry.keys.has(key)) return this.duplicate();
    entry.keys.add(key);
    return true;
  }

  private duplicate(): false {
    this.duplicates += 1;
    return false;
  }

  private entry(spec: ScalarSpec | SummarySpec): FamilyEntry {
    // Samples of one family mostly come one after the other (a host's CPU modes, its disks).
    const last = this.last;
    if (last !== undefined && last.spec === spec) return last;
    const existing = this.families.get(spec.name);
    if (existing) {
      const old = existing.spec;
      if (old.type !== spec.type || old.help !== spec.help || old.unit !== spec.unit) {
        throw new Error(`metric ${spec.name} declared twice with different type, help or unit`);
      }
      this.last = existing;
      return existing;
    }
    const created = { spec, samples: [], keys: undefined } as FamilyEntry;
    this.families.set(spec.name, created);
    this.last = created;
    return created;
  }
}
