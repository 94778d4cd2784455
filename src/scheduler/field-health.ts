import type { FieldReport, FoundField, ListReport } from '../upstream/fields/resolve.js';

/**
 * What the answers of one source said of its declared fields. A field is missing when the
 * latest answer for every target (every host, every website, or the one list) lacks it: a
 * field one website's summary carries and another's does not is there; a field no answer
 * carries is reported, never silently absent.
 */

export interface FieldState {
  readonly field: string;
  readonly about: string;
  readonly missing: boolean;
  /** Where it was last found, in what unit, and whether the operator named the path. */
  readonly found: FoundField | undefined;
}

interface TargetAnswer {
  readonly found: ReadonlySet<string>;
  readonly atMs: number;
  /** Where its list was and how it was read, for a list. */
  readonly list: ListReport | undefined;
}

/**
 * How a source's lists were read in the latest answers: over how many pages, and whether any
 * is known to be short (the rest could not be read), with the first such one's figures.
 */
export interface ListState {
  /** Answers that were lists. */
  readonly lists: number;
  /** Pages those answers took, all together. */
  readonly pages: number;
  /** Lists known to be short. */
  readonly incomplete: number;
  /** The first short list's target, figures and reason; else the latest list's. */
  readonly target: string;
  readonly report: ListReport;
}

/** Answers older than this no longer count: the target is gone or no longer polled. */
const FORGET_AFTER_MS = 24 * 3_600_000;
const SWEEP_EVERY_MS = 3_600_000;

export class FieldHealth {
  private readonly answers = new Map<string, TargetAnswer>();
  /** How many of the kept answers carry each field: one answer per host, so no answer is looked through again. */
  private readonly carriers = new Map<string, number>();
  private readonly lastFound = new Map<string, FoundField>();
  private readonly logged = new Set<string>();
  /** Pages the kept list answers took, all together: what a run of the source costs in requests. */
  private pageCount = 0;
  private listCount = 0;
  private incompleteCount = 0;
  /** Kept list answers known to be short, in the order of the answers: the first is the one shown. */
  private readonly shortLists = new Map<string, ListReport>();
  /**
   * The latest list answer still kept, shown while no list is short. `unknown` once it was
   * dropped (its target answered with something else, or was swept): the next `listState` looks.
   */
  private latestList: { readonly target: string; readonly report: ListReport } | undefined | 'unknown';
  private lastPaths: readonly string[] = [];
  private nextSweepMs = 0;
  private readonly names: readonly string[];

  constructor(
    /** The declared fields and what each means. */
    private readonly fields: Readonly<Record<string, { readonly about: string }>>,
    private readonly onFirstMissing: (field: string, about: string, presentPaths: readonly string[]) => void,
  ) {
    this.names = Object.keys(fields);
  }

  /** One answer of one target (a request path such as `/websites/7`). */
  record(target: string, report: FieldReport, nowMs: number): void {
    // Found, or said in another form (an alternative found): not missing in this answer.
    const missing = new Set(report.missing);
    const found = new Set(this.names.filter((field) => !missing.has(field)));
    for (const [field, where] of Object.entries(report.found)) this.lastFound.set(field, where);
    if (report.missing.length > 0) this.lastPaths = report.paths;
    this.drop(target);
    this.answers.set(target, { found, atMs: nowMs, list: report.list });
    if (report.list !== undefined) {
      this.listCount++;
      this.pageCount += report.list.pages ?? 1;
      if (report.list.incomplete !== undefined) {
        this.incompleteCount++;
        this.shortLists.set(target, report.list);
      }
      this.latestList = { target, report: report.list };
    }
    for (const field of found) this.carriers.set(field, (this.carriers.get(field) ?? 0) + 1);
    if (this.answers.size > 64 && nowMs >= this.nextSweepMs) {
      // Swept at most hourly: looking through every host's answer at each answer would cost the square of the hosts.
      this.nextSweepMs = nowMs + SWEEP_EVERY_MS;
      for (const [key, answer] of this.answers) if (nowMs - answer.atMs > FORGET_AFTER_MS) this.drop(key);
    }
    for (const state of this.states()) {
      if (!state.missing) {
        this.logged.delete(state.field);
        continue;
      }
      if (this.logged.has(state.field)) continue;
      this.logged.add(state.field);
      this.onFirstMissing(state.field, state.about, this.lastPaths);
    }
  }

  /** Every declared field, once an answer came; nothing before the first. */
  states(): FieldState[] {
    if (this.answers.size === 0) return [];
    return Object.entries(this.fields).map(([field, { about }]) => {
      const missing = (this.carriers.get(field) ?? 0) === 0;
      return { field, about, missing, found: missing ? undefined : this.lastFound.get(field) };
    });
  }

  /**
   * How the lists of the kept answers were read; undefined while none was a list. Kept as the
   * answers come, not counted over them: the self-metrics ask on every collection, and a
   * per-host source keeps an answer per host (8,500 at a million series).
   */
  listState(): ListState | undefined {
    if (this.listCount === 0) return undefined;
    const totals = { lists: this.listCount, pages: this.pageCount, incomplete: this.incompleteCount };
    for (const [target, report] of this.shortLists) return { ...totals, target, report };
    if (this.latestList === 'unknown') this.latestList = this.findLatestList();
    return this.latestList === undefined ? undefined : { ...totals, ...this.latestList };
  }

  private findLatestList(): { readonly target: string; readonly report: ListReport } | undefined {
    let latest: { readonly target: string; readonly report: ListReport } | undefined;
    for (const [target, answer] of this.answers) if (answer.list !== undefined) latest = { target, report: answer.list };
    return latest;
  }

  /** Lists of the kept answers known to be short. */
  incompleteLists(): number {
    return this.incompleteCount;
  }

  /** Requests one answer takes on average, pages included (1 for a source whose lists fit one page). */
  requestsPerAnswer(): number {
    return this.listCount === 0 ? 1 : Math.max(1, this.pageCount / this.listCount);
  }

  private drop(target: string): void {
    const answer = this.answers.get(target);
    if (answer === undefined) return;
    this.answers.delete(target);
    if (answer.list !== undefined) {
      this.listCount--;
      this.pageCount -= answer.list.pages ?? 1;
      if (answer.list.incomplete !== undefined) this.incompleteCount--;
      this.shortLists.delete(target);
      if (this.latestList !== 'unknown' && this.latestList?.target === target) this.latestList = 'unknown';
    }
    for (const field of answer.found) this.carriers.set(field, (this.carriers.get(field) ?? 1) - 1);
  }
}
