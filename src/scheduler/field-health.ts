import type { FieldReport, FoundField } from '../upstream/fields/resolve.js';

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
}

/** Answers older than this no longer count: the target is gone or no longer polled. */
const FORGET_AFTER_MS = 24 * 3_600_000;

export class FieldHealth {
  private readonly answers = new Map<string, TargetAnswer>();
  private readonly lastFound = new Map<string, FoundField>();
  private readonly logged = new Set<string>();
  private lastPaths: readonly string[] = [];

  constructor(
    /** The declared fields and what each means. */
    private readonly fields: Readonly<Record<string, { readonly about: string }>>,
    private readonly onFirstMissing: (field: string, about: string, presentPaths: readonly string[]) => void,
  ) {}

  /** One answer of one target (a request path such as `/websites/7`). */
  record(target: string, report: FieldReport, nowMs: number): void {
    // Found, or said in another form (an alternative found): not missing in this answer.
    const missing = new Set(report.missing);
    const found = new Set(Object.keys(this.fields).filter((field) => !missing.has(field)));
    for (const [field, where] of Object.entries(report.found)) this.lastFound.set(field, where);
    if (report.missing.length > 0) this.lastPaths = report.paths;
    this.answers.set(target, { found, atMs: nowMs });
    if (this.answers.size > 64) {
      for (const [key, answer] of this.answers) if (nowMs - answer.atMs > FORGET_AFTER_MS) this.answers.delete(key);
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
      const missing = ![...this.answers.values()].some((answer) => answer.found.has(field));
      return { field, about, missing, found: missing ? undefined : this.lastFound.get(field) };
    });
  }
}
