import { LIST_PATH_KEY, NEXT_PAGE_KEY } from '../../config/source-spec.js';
import type { DropReason } from '../tolerant/values.js';
import type { FieldDecl, FieldDecls, FieldRecord } from './declare.js';
import { PERIOD_KEY_WORDS, rateKeyRole, readKind, type PathFacts } from './kinds.js';
import { leavesOf, signatureOf, valueAt, type Leaf } from './shape.js';
import { isPeriod, keyWords } from './words.js';

/**
 * Finding declared fields in items of any reasonable shape. Every path of an item is a
 * candidate; a field takes the path whose words hold one of its word sets, names no other
 * period or statistic than its own, and carries the fewest other words. Each path serves
 * one field. What the finder makes of a shape is kept by the shape's signature, so items of
 * one shape (every item of a list, every poll of an endpoint) cost a lookup, not a search.
 */

export interface FieldMatch {
  readonly path: readonly string[];
  readonly words: readonly string[];
  /** The operator named this path in `fields:`. */
  readonly configured: boolean;
  /** Other paths with the field's words, next best first: read when this one is null in an item (`host_uuid: null, host_uuids: [...]`). */
  readonly fallbacks?: readonly { readonly path: readonly string[]; readonly words: readonly string[] }[];
}

export interface FoundField {
  /** Where it was found, dotted: `stats.last_day.uptime`. */
  readonly path: string;
  /** The unit it was read in, and why (absent for kinds without a unit). */
  readonly unit?: string;
  /** One value as sent, clipped. */
  readonly sample: string;
  readonly configured: boolean;
}

/** What one response said of the declared fields: found where, or missing from every item. */
export interface FieldReport {
  readonly found: Readonly<Record<string, FoundField>>;
  /** Declared fields no item carries. */
  readonly missing: readonly string[];
  /** Of those, the ones the source is useless without: an essential field, or all of its useful ones. */
  readonly essentialMissing: readonly string[];
  readonly items: number;
  /** The paths the first item holds, to say what was there instead. */
  readonly paths: readonly string[];
  /** For a list: where it was in the body and how many items it held, and over how many pages. */
  readonly list?: ListReport;
}

export interface ListReport {
  readonly path: string;
  /** Items over every page read. */
  readonly length: number;
  /** Why this list and not another, when it was chosen among several or configured. */
  readonly how?: string;
  /** Pages read (absent: one, or the list was not followed). */
  readonly pages?: number;
  /** How the pages said where the next was (`Link header`, `_links.next`, `next_cursor`). */
  readonly via?: string;
  /** The total the first page announced. */
  readonly announced?: number;
  /** Why the list is known to be short: the rest could not be read. */
  readonly incomplete?: string;
}

export { LIST_PATH_KEY, NEXT_PAGE_KEY } from '../../config/source-spec.js';

/** An item the finder could not use, and why. */
export interface ItemFieldProblem {
  readonly index: number;
  readonly reason: DropReason;
  readonly field: string;
  readonly issue: string;
}

export interface FieldsRead<D extends FieldDecls> {
  /** One per item: its fields, or undefined when the item lacks an essential field (or it is unreadable). */
  readonly records: readonly (FieldRecord<D> | undefined)[];
  readonly problems: readonly ItemFieldProblem[];
  /** Fields present but unreadable in an item that was kept: noted, not fatal. */
  readonly notes: readonly { readonly field: string; readonly issue: string }[];
  /** Per item, the fields it carries whose value could not be read (absent: none), so "unknown" is never taken for "none". */
  readonly unreadable: readonly (readonly string[] | undefined)[];
  readonly report: FieldReport;
}

const STATS = new Set(['avg', 'p95', 'p99', 'p50', 'max']);
/** Words that say the unit or the kind of number, not what it is about. */
const UNIT_WORDS = new Set(['pct', 'ratio', 'ms', 'seconds', 'minutes', 'hours', 'days', 'weeks', 'count', 'per', 'at', 'time']);

interface Candidate {
  readonly field: string;
  readonly fieldIndex: number;
  readonly leaf: Leaf;
  readonly leafIndex: number;
  /** 1 when the item's value there is none the field can be: taken only when nothing else fits. */
  readonly unfit: number;
  /** Which word set matched (earlier sets are the better names). */
  readonly alternative: number;
  /** Dimensions (period, statistic) the path names explicitly and the field wants. */
  readonly explicit: number;
  /** Words of the path's own key that are neither the field's nor its dimensions nor units (`request` in `request_id`). */
  readonly extraInKey: number;
  /** Such words anywhere on the path. */
  readonly extra: number;
}

function dimensionFits(words: readonly string[], inWords: (w: string) => boolean, wanted: string | undefined, optional: boolean | undefined, anyAllowed: boolean): { fits: boolean; explicit: boolean } {
  const named = words.filter(inWords);
  if (wanted === undefined) return { fits: anyAllowed || named.length === 0, explicit: false };
  if (named.length === 0) return { fits: optional === true, explicit: false };
  return { fits: named.includes(wanted) && named.every((w) => w === wanted), explicit: true };
}

function candidateOf(field: string, fieldIndex: number, decl: FieldDecl, leaf: Leaf, leafIndex: number, item: Readonly<Record<string, unknown>> | undefined): Candidate | undefined {
  if (leaf.object && decl.kind !== 'rate' && !(decl.kind === 'strings' && decl.pairs === true)) return undefined;
  if (leaf.list && decl.kind !== 'strings') return undefined;
  const words = leaf.words;
  if (decl.not?.some((w) => words.includes(w) || notWordsOf(w).some((c) => words.includes(c)))) return undefined;
  const alternative = decl.words.findIndex((set) => set.every((w) => words.includes(w)));
  if (alternative < 0) return undefined;
  // A rate names its own period (`per_minute`): that is no period of the field's.
  const period = dimensionFits(words, isPeriod, decl.period, decl.periodOptional, decl.kind === 'rate');
  const stat = dimensionFits(words, (w) => STATS.has(w), decl.stat, decl.statOptional, true);
  if (!period.fits || !stat.fits) return undefined;
  const own = new Set(decl.words[alternative]);
  // A value the field cannot be (`"active"` for whether the latest check succeeded) puts the path
  // behind every path whose value fits, so another field whose value it is takes it. It is never
  // ruled out: what is made of a shape is kept for every item of that shape, so one item's bad
  // value would lose the field in every later item; taken last, it costs only that item's value.
  const sample = item === undefined || leaf.object ? undefined : valueAt(item, leaf.path);
  const unfit = sample !== undefined && sample !== null && !readKind(decl, sample, words, { max: undefined }).read.ok ? 1 : 0;
  const isExtra = (w: string) => !own.has(w) && !isPeriod(w) && !STATS.has(w) && !UNIT_WORDS.has(w);
  const extra = words.filter(isExtra).length;
  const extraInKey = keyWordsOf(leaf).filter(isExtra).length;
  // What identifies an item is named plainly (`id`, `rule_id`), never by a path about something else (`x_external.ref_id`).
  if ((decl.essential === true || decl.kind === 'id') && extra > 1) return undefined;
  return { field, fieldIndex, leaf, leafIndex, unfit, alternative, explicit: (period.explicit ? 1 : 0) + (stat.explicit ? 1 : 0), extraInKey, extra };
}

/** A `not` word in its canonical spellings too (`host` rules out `hosts`, the word a path's `host` becomes). */
function notWordsOf(word: string): readonly string[] {
  const words = keyWords(word);
  return words.length === 1 ? words : [];
}

function better(a: Candidate, b: Candidate): number {
  return a.unfit - b.unfit || a.alternative - b.alternative || b.explicit - a.explicit || a.extraInKey - b.extraInKey || a.extra - b.extra || a.leaf.depth - b.leaf.depth || a.leafIndex - b.leafIndex || a.fieldIndex - b.fieldIndex;
}

/** Where each declared field sits in an item of this shape. */
export function matchFields(decls: FieldDecls, leaves: readonly Leaf[], overrides: Readonly<Record<string, string>>, item?: Readonly<Record<string, unknown>>): Map<string, FieldMatch | undefined> {
  const names = Object.keys(decls);
  const matches = new Map<string, FieldMatch | undefined>(names.map((n) => [n, undefined]));
  const taken = new Set<string>();
  // A field the operator placed is looked for there only: not there is missing, never a guess elsewhere.
  const placed = new Set<string>();
  for (const [field, dotted] of Object.entries(overrides)) {
    if (!matches.has(field)) continue;
    placed.add(field);
    const path = dotted.split('.');
    const leaf = leaves.find((l) => l.path.join('\u0000') === path.join('\u0000'));
    if (leaf === undefined) continue;
    matches.set(field, { path: leaf.path, words: leaf.words, configured: true });
    taken.add(leaf.path.join('\u0000'));
  }
  const candidates: Candidate[] = [];
  /** Fields that took a path whose value they cannot be (taken last, when nothing else fit). */
  const unfitTaken = new Set<string>();
  names.forEach((field, fieldIndex) => {
    const decl = decls[field];
    if (decl === undefined || placed.has(field)) return;
    leaves.forEach((leaf, leafIndex) => {
      const candidate = candidateOf(field, fieldIndex, decl, leaf, leafIndex, item);
      if (candidate !== undefined) candidates.push(candidate);
    });
  });
  candidates.sort(better);
  for (const candidate of candidates) {
    const key = candidate.leaf.path.join('\u0000');
    if (matches.get(candidate.field) !== undefined || taken.has(key)) continue;
    const leaf = decls[candidate.field]?.kind === 'rate' ? rateObject(candidate.leaf, leaves) : candidate.leaf;
    const leafKey = leaf.path.join('\u0000');
    if (leaf !== candidate.leaf && taken.has(leafKey)) continue;
    matches.set(candidate.field, { path: leaf.path, words: leaf.words, configured: false });
    if (candidate.unfit === 1) unfitTaken.add(candidate.field);
    taken.add(leafKey);
    // A rate's object is read whole: the keys it reads (count, period) are its own; the others (`burst`) stay free.
    // An object of pairs (tags) is read whole too: every key in it is one of its items.
    if (leaf.object) {
      const rate = decls[candidate.field]?.kind === 'rate';
      for (const child of leaves) {
        if (child.path.length === leaf.path.length + 1 && child.path.join('\u0000').startsWith(`${leafKey}\u0000`) && (!rate || rateKeyRole(child.path[child.path.length - 1] ?? '') !== undefined)) {
          taken.add(child.path.join('\u0000'));
        }
      }
    }
  }
  // A state word may answer two questions (`status: "paused"`: not up, and not enabled; `"up"`:
  // up, and enabled): a state field with no path of its own reads another state field's too.
  for (const candidate of candidates) {
    const decl = decls[candidate.field];
    if ((matches.get(candidate.field) !== undefined && !unfitTaken.has(candidate.field)) || decl?.kind !== 'state' || candidate.unfit === 1) continue;
    const key = candidate.leaf.path.join('\u0000');
    const owner = [...matches].find(([field, match]) => match !== undefined && decls[field]?.kind === 'state' && match.path.join('\u0000') === key);
    if (owner === undefined) continue;
    matches.set(candidate.field, { path: candidate.leaf.path, words: candidate.leaf.words, configured: false });
    unfitTaken.delete(candidate.field);
  }
  // Paths no field took, but whose words and value fit a field: read when the field's own is null in an item.
  for (const candidate of candidates) {
    const match = matches.get(candidate.field);
    const key = candidate.leaf.path.join('\u0000');
    if (match === undefined || match.configured || taken.has(key) || candidate.leaf.object || candidate.unfit === 1) continue;
    matches.set(candidate.field, { ...match, fallbacks: [...(match.fallbacks ?? []), { path: candidate.leaf.path, words: candidate.leaf.words }] });
  }
  return matches;
}

/** A rate's count inside an object that also holds its period (`{requests: 120, period: "1m"}`) is read with it. */
function rateObject(leaf: Leaf, leaves: readonly Leaf[]): Leaf {
  if (leaf.object || leaf.path.length < 2) return leaf;
  const parent = leaf.path.slice(0, -1).join('\u0000');
  const hasPeriod = leaves.some((l) => l.path.length === leaf.path.length && l.path.slice(0, -1).join('\u0000') === parent && l !== leaf && keyWordsOf(l).some((w) => PERIOD_KEY_WORDS.includes(w)));
  return hasPeriod ? (leaves.find((l) => l.path.join('\u0000') === parent) ?? leaf) : leaf;
}

/** The words of a leaf's own key, or of the nearest key above it that has words (`{"": 1}` has none). */
function keyWordsOf(leaf: Leaf): readonly string[] {
  for (let i = leaf.path.length - 1; i >= 0; i--) {
    const words = keyWords(leaf.path[i] ?? '');
    if (words.length > 0) return words;
  }
  return [];
}

function clip(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

interface Shape {
  readonly matches: ReadonlyMap<string, FieldMatch | undefined>;
  /** The paths of the shape's values, for the report of a field not found. */
  readonly valuePaths: readonly string[];
}

const NO_FACTS: PathFacts = { max: undefined };

/**
 * The reader of one set of declarations: finds the fields in every item of a response and
 * reads them as their kinds. Keeps what it made of each shape.
 */
export class FieldFinder<D extends FieldDecls> {
  private readonly shapes = new Map<string, Shape>();
  private readonly claimantsOf = new Map<string, readonly string[]>();
  /** Each matched path as text, made once: paths come from the shapes, which are kept. */
  private readonly pathTexts = new WeakMap<readonly string[], string>();
  private readonly names: readonly string[];

  constructor(
    readonly decls: D,
    private readonly overrides: Readonly<Record<string, string>> = {},
  ) {
    this.names = Object.keys(decls);
  }

  /** The path of the list, when the operator named it (`_list`). */
  get placedList(): string | undefined {
    return this.overrides[LIST_PATH_KEY];
  }

  /** The path of the next page's link, cursor or number, when the operator named it (`_next`). */
  get placedNext(): string | undefined {
    return this.overrides[NEXT_PAGE_KEY];
  }

  /** Where each field sits in items of this item's shape. */
  matchesFor(item: Readonly<Record<string, unknown>>): ReadonlyMap<string, FieldMatch | undefined> {
    return this.shapeOf(item).matches;
  }

  private shapeOf(item: Readonly<Record<string, unknown>>): Shape {
    const signature = signatureOf(item);
    let shape = this.shapes.get(signature);
    if (shape === undefined) {
      const leaves = leavesOf(item);
      shape = { matches: matchFields(this.decls, leaves, this.overrides, item), valuePaths: leaves.filter((l) => !l.object).map((l) => l.path.join('.')) };
      // Shapes are few; a body whose items each differ (keys that are ids) must not grow this without end.
      if (this.shapes.size >= 256) this.shapes.clear();
      this.shapes.set(signature, shape);
    }
    return shape;
  }

  private textOf(path: readonly string[]): string {
    let text = this.pathTexts.get(path);
    if (text === undefined) this.pathTexts.set(path, (text = path.join('.')));
    return text;
  }

  read(items: readonly Readonly<Record<string, unknown>>[]): FieldsRead<D> {
    const shapes = items.map((item) => this.shapeOf(item));
    const matchesOf = shapes.map((shape) => shape.matches);
    const facts = this.pathFacts(items, matchesOf);
    const found: Record<string, FoundField> = {};
    const problems: ItemFieldProblem[] = [];
    const notes: { field: string; issue: string }[] = [];
    const unreadable: (string[] | undefined)[] = [];
    const records = items.map((item, index) => {
      const matches = matchesOf[index] ?? new Map<string, FieldMatch | undefined>();
      const record: Record<string, unknown> = {};
      let problem: ItemFieldProblem | undefined;
      for (const field of this.names) {
        const decl = this.decls[field];
        const primary = matches.get(field);
        let match: { readonly path: readonly string[]; readonly words: readonly string[]; readonly configured?: boolean } | undefined = primary;
        let raw = primary === undefined ? undefined : valueAt(item, primary.path);
        for (const fallback of decl?.nullIsValue === true ? [] : (primary?.fallbacks ?? [])) {
          if (raw !== undefined && raw !== null) break;
          const value = valueAt(item, fallback.path);
          if (value !== undefined && value !== null) [match, raw] = [fallback, value];
        }
        if (decl === undefined || match === undefined || raw === undefined || raw === null) {
          // A key that is there with null is the upstream saying "no value": the field is found, not missing.
          if (raw === null && match !== undefined) found[field] ??= { path: this.textOf(match.path), sample: 'null', configured: match.configured ?? false };
          if (decl?.essential && problem === undefined) problem = { index, reason: 'missing_field', field, issue: match === undefined ? 'is missing' : 'is null' };
          continue;
        }
        const pathText = this.textOf(match.path);
        const { read, unit } = readKind(decl, raw, match.words, facts.get(pathText) ?? NO_FACTS);
        if (!read.ok) {
          if (decl.essential) problem ??= { index, reason: read.reason, field, issue: `${pathText}: ${read.detail}` };
          else if (!(match.configured ?? false) && this.takenByAnother(field, match, raw, record, found, facts.get(pathText) ?? NO_FACTS)) continue;
          else {
            notes.push({ field, issue: `${pathText}: ${read.detail}` });
            (unreadable[index] ??= []).push(field);
          }
          continue;
        }
        record[field] = read.value;
        found[field] ??= { path: pathText, ...(unit !== undefined && { unit }), sample: clip(raw), configured: match.configured ?? false };
      }
      if (problem !== undefined) {
        problems.push(problem);
        return undefined;
      }
      // Every declared field is in the record, undefined when this item lacks it.
      return record as FieldRecord<D>;
    });
    // An empty list says nothing of its items' fields: none is missing from it (a host without components, an account without events).
    const missing = items.length === 0 ? [] : this.names.filter((n) => found[n] === undefined && this.decls[n]?.fillsGap !== true && !(this.decls[n]?.alternatives ?? []).some((a) => found[a] !== undefined));
    const useful = this.names.filter((n) => this.decls[n]?.useful === true);
    const useless = items.length > 0 && useful.length > 0 && useful.every((n) => found[n] === undefined);
    return {
      records,
      problems,
      notes,
      unreadable,
      report: {
        found,
        missing,
        essentialMissing: [...missing.filter((n) => this.decls[n]?.essential === true), ...(useless ? useful : [])],
        items: items.length,
        paths: shapes[0]?.valuePaths ?? [],
      },
    };
  }

  /**
   * A value that is not what the field that took its path declares may be another field's:
   * the shape was matched on an item whose `status` said `up`, and this item's says `paused`,
   * which answers whether the website is enabled. The first field without a value of its own
   * whose words take the path and whose kind reads the value gets it.
   */
  private takenByAnother(
    field: string,
    match: { readonly path: readonly string[]; readonly words: readonly string[] },
    raw: unknown,
    record: Record<string, unknown>,
    found: Record<string, FoundField>,
    facts: PathFacts,
  ): boolean {
    for (const other of this.claimants(field, match, Array.isArray(raw))) {
      const decl = this.decls[other];
      if (decl === undefined || record[other] !== undefined) continue;
      const { read, unit } = readKind(decl, raw, match.words, facts);
      if (!read.ok) continue;
      record[other] = read.value;
      found[other] ??= { path: this.textOf(match.path), ...(unit !== undefined && { unit }), sample: clip(raw), configured: false };
      return true;
    }
    return false;
  }

  /** The other fields whose words take a matched path (the operator's placed ones aside), worked out once per path. */
  private claimants(field: string, match: { readonly path: readonly string[]; readonly words: readonly string[] }, list: boolean): readonly string[] {
    const key = `${field}\u0000${this.textOf(match.path)}\u0000${list}`;
    let others = this.claimantsOf.get(key);
    if (others === undefined) {
      const leaf: Leaf = { path: match.path, words: match.words, object: false, list, depth: match.path.length };
      others = this.names.filter((other, index) => {
        const decl = this.decls[other];
        return other !== field && decl !== undefined && this.overrides[other] === undefined && candidateOf(other, index, decl, leaf, 0, undefined) !== undefined;
      });
      if (this.claimantsOf.size >= 1024) this.claimantsOf.clear();
      this.claimantsOf.set(key, others);
    }
    return others;
  }

  /**
   * What the values at each matched path say over every item: the largest number at a ratio
   * field's path (a percentage shows in its largest), and whether a state field's path holds
   * numbers other than 0 and 1 (codes such as UptimeRobot's 0 paused, 2 up, 9 down: then no
   * number there is a state, not even the 0).
   */
  private pathFacts(items: readonly Readonly<Record<string, unknown>>[], matchesOf: readonly ReadonlyMap<string, FieldMatch | undefined>[]): Map<string, PathFacts> {
    const facts = new Map<string, PathFacts>();
    const factFields = this.names.filter((n) => this.decls[n]?.kind === 'ratio' || this.decls[n]?.kind === 'state');
    if (factFields.length === 0) return facts;
    items.forEach((item, index) => {
      for (const field of factFields) {
        const match = matchesOf[index]?.get(field);
        if (match === undefined) continue;
        const raw = valueAt(item, match.path);
        const value = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
        if (!Number.isFinite(value)) continue;
        const key = this.textOf(match.path);
        const known = facts.get(key) ?? NO_FACTS;
        if (this.decls[field]?.kind === 'state') facts.set(key, { ...known, codes: (known.codes ?? false) || (value !== 0 && value !== 1) });
        else facts.set(key, { ...known, max: known.max === undefined ? value : Math.max(known.max, value) });
      }
    });
    return facts;
  }
}

/**
 * The finders of one set of declarations, one per set of operator paths (`fields:` of an
 * account), so each keeps what it learnt of the shapes it saw.
 */
export function findersOf<D extends FieldDecls>(decls: D): (fieldPaths: Readonly<Record<string, string>> | undefined) => FieldFinder<D> {
  const finders = new Map<string, FieldFinder<D>>();
  return (fieldPaths = {}) => {
    const key = JSON.stringify(fieldPaths);
    let finder = finders.get(key);
    if (finder === undefined) {
      // Operators change paths by reloading; a few sets at most are ever alive.
      if (finders.size >= 64) finders.clear();
      finders.set(key, (finder = new FieldFinder(decls, fieldPaths)));
    }
    return finder;
  };
}
