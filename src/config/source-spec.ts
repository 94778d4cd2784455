import type { z } from 'zod';

/**
 * What a source adds to the configuration. Every source's definition (src/sources/<name>/)
 * carries one; the loader composes the `sources:` and `cadence:` sections, the rules between
 * sources and each source's own keys from the list it is given, so the configuration code
 * names no source.
 */

/** Keys of `fields:` that place a source's list and its next page rather than a field. */
export const LIST_PATH_KEY = '_list';
export const NEXT_PAGE_KEY = '_next';

/** A cadence of a source: its YAML default and its floor, which stops a typo from draining the budget. */
export interface CadenceSpec {
  /** As written in YAML, e.g. `60s`. */
  readonly default: string;
  readonly minMs: number;
  /** Ends the "must be at least" message: why the floor. */
  readonly tooShort?: string;
}

/** Which mapping a source's keys belong to: each account, or the `releases` section. */
export type ConfigSection = 'account' | 'releases';

/** Reports a problem at a path inside the source's section, e.g. `['metrics', 'include', 0]`. */
export type Report = (path: readonly (string | number)[], message: string, atKey?: boolean) => void;

export interface SettingsInput {
  /** The parsed section (an account, or `releases`) with every default filled in. */
  readonly section: Readonly<Record<string, unknown>>;
  /** The parsed `exporter` section. */
  readonly exporter: Readonly<Record<string, unknown>>;
  /** Whether this source is switched on in this section. */
  readonly enabled: boolean;
}

export interface SourceConfigSpec<Settings = unknown> {
  /** The `source` label, and its key under `sources:` when it has a switch. */
  readonly name: string;
  readonly section: ConfigSection;
  /**
   * Its switch under the account's `sources:`, with its default: on, off, or whatever
   * another source's switch says. Absent: it has no switch of its own (see `enabledWith`).
   */
  readonly toggle?: { readonly default: boolean | { readonly sameAs: string } };
  /** Without a switch of its own: on exactly when this other source is (default: always on). */
  readonly enabledWith?: string;
  /** Its cadences under the account's `cadence:`, by YAML key. */
  readonly cadences?: Readonly<Record<string, CadenceSpec>>;
  /** Sources it cannot work without, each with the reason the error gives. */
  readonly needs?: Readonly<Record<string, string>>;
  /** Keys it adds to its section's mapping, with their types and defaults. */
  readonly keys?: Readonly<Record<string, z.ZodType>>;
  /** Keys it adds to the `exporter` mapping. */
  readonly exporterKeys?: Readonly<Record<string, z.ZodType>>;
  /**
   * The fields it reads from the answers, by name, each with what it means: an operator may
   * name where one sits (`fields: {<source>: {<field>: <dotted path>}}`).
   */
  readonly fields?: Readonly<Record<string, { readonly about: string }>>;
  /** Its answers are lists, followed over pages: `fields:` may also place the list (`_list`) and the next page's link or cursor (`_next`). */
  readonly readsList?: boolean;
  /** Rules across its keys, and the settings the source reads at run time. */
  settings?(input: SettingsInput, report: Report): Settings | undefined;
  /** Sources of the `releases` section switch on by their settings (a project listed, a check enabled). */
  enabledBy?(settings: Settings): boolean;
  /** How an operator switches it on, for the error a section with nothing to do gets. */
  readonly howToEnable?: string;
  /**
   * Paths in its keys (`*` for any list item) where a plain YAML number is taken as written:
   * `major: 1.20` is the version line 1.20, not the number 1.2.
   */
  readonly numbersAsWritten?: readonly (readonly string[])[];
  /**
   * What `--config.check` says of it: words added to its section's line (`inline`) or a line
   * of their own (`line`). Called whether it is on or not.
   */
  summary?(source: { readonly enabled: boolean; readonly settings: Settings; readonly cadenceMs: Readonly<Record<string, number>> }): { readonly inline?: string; readonly line?: string };
}

/** What the loader made of one source in one section. */
export interface SourceConfig {
  readonly enabled: boolean;
  /** By the YAML keys of its cadences. */
  readonly cadenceMs: Readonly<Record<string, number>>;
  /** What its `settings` returned; undefined when it has none. */
  readonly settings: unknown;
  /** Where the operator says its fields sit, by field name (dotted paths). */
  readonly fieldPaths: Readonly<Record<string, string>>;
}
