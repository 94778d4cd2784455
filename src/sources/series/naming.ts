import type { Labels } from '../../exposition/model.js';
import {
  METRIC_CATALOGUE,
  type CatalogueEntry,
  type MetricKind,
  type SourceUnit,
  type TimerStat,
} from '../../upstream/monitoring/metric-catalogue.js';
import { counterSpec, gaugeSpec, labelKey, summarySpec, type ScalarSpec, type SummarySpec } from '../shared/families.js';
import { replaceInvalidNameChars } from '../shared/names.js';
import { baseUnitOf, type BaseUnit } from '../shared/units.js';
import { FAMILY_TABLE, TIMER_TABLE, type FamilyDefinition } from './family-table.js';

/**
 * Prometheus names for agent metrics.
 *
 * Catalogue names take their family and labels from the curated table (family-table.ts):
 * the stem plus the base unit word plus `_total` for deltas, so `system.cpu.user` →
 * `monapi_system_cpu_time_ratio{mode="user"}` and `nginx.http.status.2xx` →
 * `monapi_nginx_http_responses_total{status_class="2xx"}`. The five names of a timer
 * (`X`, `X.count`, `X.max`, `X.median`, `X.pctl95`) feed one summary
 * `monapi_<stem>_seconds` and one gauge `monapi_<stem>_max_seconds`. A per-device name
 * (`system.io.iops_r|sda`) joins the family of its dotted name with a `device`,
 * `interface` or `mountpoint` label; on a host that reports per-device names the
 * all-device total of the same name is left out (it is their sum), so `sum()` over the
 * family never counts twice.
 *
 * `metric_overrides` may change a name's kind and unit, and put any name in a family of
 * its choice (`family`, `labels`, `device_label`). Everything else is named mechanically:
 *
 * 1. `monapi_` + the dotted name with every character outside `[a-zA-Z0-9_]` replaced by `_`.
 * 2. The base unit (`ratio` for percent, `bytes` for bytes and kilobytes, `seconds` for
 *    seconds and milliseconds) is appended as `_<unit>` unless the name already is one of
 *    the name's `_`-separated words.
 * 3. A delta (becomes a counter) gets `_total`, unless the name already ends in `_total`.
 * 4. A gauge never ends in a suffix reserved for other types (`_total`, `_count`, `_sum`,
 *    `_bucket`, `_created`, `_info`; promtool rejects them): such a gauge gets `_value`.
 *
 * Names in neither the catalogue nor the overrides are gauges passed through unconverted.
 */

const RESERVED_SUFFIXES = ['_total', '_count', '_sum', '_bucket', '_created', '_info'];

/** Labels the series mapping sets itself; a family's own labels may not use them. */
export const HOST_LABELS = ['account', 'host_uuid'] as const;

export interface MetricDefinition {
  readonly kind: MetricKind;
  readonly unit: SourceUnit;
  /** Family stem (the name after `monapi_`, without unit word and `_total`). */
  readonly family?: string;
  /** Labels that set this name apart within its family. */
  readonly labels?: Labels;
  /** Label for the part after `|` of per-device names. */
  readonly deviceLabel?: string;
}

/** Config overrides by dotted name: change a catalogue entry or declare a new name. */
export type MetricOverrides = Readonly<Record<string, MetricDefinition>>;

/** How a name's points are used. */
export type SeriesRole =
  | { readonly kind: 'gauge'; readonly spec: ScalarSpec }
  | { readonly kind: 'delta'; readonly spec: ScalarSpec }
  /** One of a timer's five names: `mean` and `count` feed `_sum`/`_count`, `median`/`pctl95` the quantiles, `max` its own gauge. */
  | { readonly kind: 'timer'; readonly stat: TimerStat; readonly timer: string; readonly spec: SummarySpec; readonly maxSpec: ScalarSpec };

export interface SeriesMetric {
  readonly dotted: string;
  /** As the agent sends it: a timer's `count` is a delta, its other names gauges. */
  readonly kind: MetricKind;
  readonly unit: SourceUnit;
  /** True when the name (or, for a per-device name, its dotted name) is in the catalogue or the overrides. */
  readonly known: boolean;
  readonly role: SeriesRole;
  /** Labels besides `account` and `host_uuid`. */
  readonly labels: Labels;
  /** The OpenMetrics family name (a counter without `_total`). Collisions with exporter families are judged on it. */
  readonly familyKey: string;
  /** Family, labels and timer stat: two names with the same series key collide. */
  readonly seriesKey: string;
  /** For a per-device name, the dotted name of the all-device total it breaks down. */
  readonly breaksDown?: string;
}

export interface SeriesCollision {
  readonly familyKey: string;
  /** The dotted name that keeps the series, or undefined when an exporter family holds the name. */
  readonly kept: string | undefined;
  readonly dropped: readonly string[];
}

export interface NameParts {
  readonly name: string;
  readonly unit: BaseUnit | undefined;
}

/** The mechanical metric name of one dotted agent name (rules in the module comment). */
export function seriesMetricName(dotted: string, def: Pick<MetricDefinition, 'kind' | 'unit'>): NameParts {
  return nameFromStem(replaceInvalidNameChars(dotted), def.kind, def.unit);
}

function nameFromStem(stem: string, kind: MetricKind, sourceUnit: SourceUnit): NameParts {
  let name = `monapi_${stem}`;
  const unit = baseUnitOf(sourceUnit);
  if (unit !== undefined && !name.split('_').includes(unit)) name += `_${unit}`;
  if (kind === 'delta' && !name.endsWith('_total')) name += '_total';
  if (kind === 'gauge' && RESERVED_SUFFIXES.some((suffix) => name.endsWith(suffix))) name += '_value';
  const familyName = kind === 'delta' ? name.slice(0, -'_total'.length) : name;
  return { name, unit: unit !== undefined && familyName.endsWith(`_${unit}`) ? unit : undefined };
}

const SERIES_ENDPOINT = '/hosts/{uuid}/metrics/series';
const POLLED = 'Polled in the background.';

function unitNote(unit: SourceUnit): string {
  switch (unit) {
    case 'percent':
      return ' Sent as percent 0-100, exposed as ratio 0-1.';
    case 'kilobytes':
      return ' Sent in kilobytes (KiB), exposed in bytes (x1024).';
    case 'milliseconds':
      return ' Sent in milliseconds, exposed in seconds.';
    case 'status':
      return ' 1 up, 0 down.';
    default:
      return '';
  }
}

function valueNote(kind: MetricKind): string {
  return kind === 'delta'
    ? ` Running sum of the per-minute deltas from ${SERIES_ENDPOINT}, each minute added once when it arrives; starts at 0 when the exporter first sees the host.`
    : ` Newest non-null point from ${SERIES_ENDPOINT} (absent when older than the staleness limit).`;
}

function deviceNote(label: string | undefined): string {
  return label === undefined ? '' : ` Per ${label} when the agent reports per-${label} names (name|${label}), else the host's total without the label.`;
}

function familyHelp(description: string, dotted: readonly string[], kind: MetricKind, unit: SourceUnit, deviceLabel: string | undefined): string {
  return `${description} Agent metric${dotted.length > 1 ? 's' : ''} ${dotted.join(', ')}.${deviceNote(deviceLabel)}${valueNote(kind)}${unitNote(unit)} ${POLLED}`;
}

const UNKNOWN_HELP = `Agent metric not in the catalogue, as sent (no unit conversion); name is the dotted agent name with invalid characters replaced by _. Newest non-null point from ${SERIES_ENDPOINT}. ${POLLED}`;

function familyKeyOf(spec: { readonly name: string; readonly type: string }): string {
  return spec.type === 'counter' ? spec.name.slice(0, -'_total'.length) : spec.name;
}

/** Families the series mapping emits itself, reserved against agent names. */
const OWN_FAMILIES = ['monapi_series_points_missing_total', 'monapi_series_name_collisions_total'];

export interface SeriesNamingOptions {
  readonly catalogue?: readonly CatalogueEntry[];
  readonly overrides?: MetricOverrides;
  /**
   * Family names the exporter emits itself (`monapi_host_info`, ...; with or without
   * `_total`). An agent name that would produce one of them is dropped, so it cannot clash
   * with the exporter's own families.
   */
  readonly reservedFamilyNames?: Iterable<string>;
  /** Name prefixes of the exporter's self-metrics (`monapi_exporter_`, ...): agent names under them are dropped. */
  readonly reservedPrefixes?: readonly string[];
}

interface Placement {
  readonly stem: string;
  readonly description: string;
  readonly labels: Labels;
  readonly deviceLabel: string | undefined;
  /** Every dotted name placed in the same family definition (for HELP). */
  readonly members: readonly string[];
}

interface TimerPlacement {
  readonly stem: string;
  readonly description: string;
  readonly timer: string;
}

/** The metrics to emit for a set of dotted names and the collisions among them; shared, never to be changed. */
export interface ResolvedNames {
  readonly metrics: readonly SeriesMetric[];
  readonly collisions: readonly SeriesCollision[];
}

/** Distinct name lists whose resolution is remembered; beyond it the memo starts again. */
const MAX_RESOLVED_SETS = 512;

/** One row of the documentation table of the families. */
export interface FamilyDoc {
  readonly name: string;
  readonly type: string;
  readonly unit: string | undefined;
  readonly labels: readonly string[];
  readonly members: readonly string[];
  readonly help: string;
}

/**
 * The naming of agent metrics for one configuration (catalogue, curated table and
 * overrides), with every computed name memoised: build one per configuration, share it
 * across hosts and polls.
 *
 * Collisions (two dotted names giving one series) are resolved the same way on every host:
 * a known name wins over an unknown one (even when the known one is absent from the
 * response), the exporter's own families win over any agent name, otherwise the
 * lexicographically first dotted name wins. The losers are dropped, not renamed, and
 * reported.
 */
export class SeriesNaming {
  private readonly definitions = new Map<string, MetricDefinition>();
  private readonly placements = new Map<string, Placement>();
  private readonly timers = new Map<string, TimerPlacement>();
  /** Names an override put in a family of its own choosing: never part of a timer. */
  private readonly placedByOverride = new Set<string>();
  private readonly memo = new Map<string, SeriesMetric>();
  private readonly specs = new Map<string, ScalarSpec | SummarySpec>();
  /** Family key → the known dotted name that owns it, or '' when reserved by the exporter. */
  private readonly owners = new Map<string, string>();
  /** Known names that lost to another known name at construction. */
  private readonly knownLosers = new Map<string, SeriesCollision>();
  private readonly reservedPrefixes: readonly string[];
  /**
   * `resolve`'s answers by a short key of the list of names asked (length, first and last
   * name), each with the full list to compare, at most MAX_RESOLVED_SETS lists. Names decoded
   * from a response's keys are internalised strings, so the comparison is one identity check
   * a name, where a key of the whole list cost a long string built and hashed every poll.
   */
  private readonly resolved = new Map<string, { readonly names: readonly string[]; readonly result: ResolvedNames }[]>();
  private resolvedLists = 0;
  /** Hosts of one kind share one frozen list of names (metric-catalogue/name-lists.ts). */
  private readonly fetchableOf = new WeakMap<readonly string[], readonly string[]>();

  constructor(options: SeriesNamingOptions = {}) {
    const catalogue = options.catalogue ?? METRIC_CATALOGUE;
    const overrides = options.overrides ?? {};
    for (const entry of catalogue) this.definitions.set(entry.name, { kind: entry.kind, unit: entry.unit });
    for (const def of FAMILY_TABLE) placeFamily(this.placements, def);
    for (const def of TIMER_TABLE) this.timers.set(def.timer, def);

    const overrideMembers = new Map<string, string[]>();
    for (const [name, def] of Object.entries(overrides)) {
      if (def.family !== undefined) overrideMembers.set(def.family, [...(overrideMembers.get(def.family) ?? []), name]);
    }
    for (const [name, def] of Object.entries(overrides)) {
      this.definitions.set(name, def);
      const placed = this.placements.get(name);
      if (def.family !== undefined) {
        this.placedByOverride.add(name);
        const members = (overrideMembers.get(def.family) ?? [name]).sort();
        this.placements.set(name, { stem: def.family, description: 'Set by metric_overrides.', labels: def.labels ?? {}, deviceLabel: def.deviceLabel, members });
      } else if (def.deviceLabel !== undefined) {
        this.placements.set(name, { ...(placed ?? { stem: replaceInvalidNameChars(name), description: 'Set by metric_overrides.', labels: {}, members: [name] }), deviceLabel: def.deviceLabel });
      }
    }
    this.reservedPrefixes = options.reservedPrefixes ?? [];
    for (const reserved of [...OWN_FAMILIES, ...(options.reservedFamilyNames ?? [])]) {
      this.owners.set(reserved.endsWith('_total') ? reserved.slice(0, -'_total'.length) : reserved, '');
    }
    // The catalogue first, in its order, so a curated family's spec (and HELP) never comes
    // from an override that joins it.
    for (const entry of catalogue) this.metric(entry.name);
    this.settleKnownNames(catalogue);
  }

  definition(dotted: string): MetricDefinition | undefined {
    return this.definitions.get(dotted);
  }

  /** The metric a dotted name maps to, before collision checks. */
  metric(dotted: string): SeriesMetric {
    const cached = this.memo.get(dotted);
    if (cached) return cached;
    const metric = this.build(dotted);
    this.memo.set(dotted, metric);
    return metric;
  }

  /**
   * The names worth fetching from a host's list: all of them except an all-device total
   * whose per-device names are in the list too (the mapping leaves it out).
   */
  fetchable(dottedNames: readonly string[]): readonly string[] {
    const known = this.fetchableOf.get(dottedNames);
    if (known) return known;
    const brokenDown = this.brokenDownTotals(dottedNames);
    const fetchable = brokenDown.size === 0 ? dottedNames : dottedNames.filter((n) => !brokenDown.has(n));
    if (Object.isFrozen(dottedNames)) this.fetchableOf.set(dottedNames, fetchable);
    return fetchable;
  }

  /**
   * The metrics to emit for a set of dotted names, in sorted dotted order, and the
   * collisions among them. Empty names are ignored; an all-device total is left out when
   * per-device names of it are present.
   */
  resolve(dottedNames: Iterable<string>): ResolvedNames {
    // A host asks for the same names poll after poll, and hosts of one kind for the same ones.
    const names = Array.isArray(dottedNames) ? (dottedNames as readonly string[]) : [...dottedNames];
    const key = `${names.length}\u0000${names[0] ?? ''}\u0000${names.at(-1) ?? ''}`;
    const candidates = this.resolved.get(key);
    const known = candidates?.find((candidate) => sameList(candidate.names, names));
    if (known) return known.result;
    const result = this.resolveNow(names);
    if (this.resolvedLists >= MAX_RESOLVED_SETS) {
      this.resolved.clear();
      this.resolvedLists = 0;
    }
    const entry = { names: [...names], result };
    if (candidates && this.resolved.has(key)) candidates.push(entry);
    else this.resolved.set(key, [entry]);
    this.resolvedLists += 1;
    return result;
  }

  private resolveNow(dottedNames: readonly string[]): ResolvedNames {
    const unique = [...new Set(dottedNames)].filter((n) => n !== '').sort();
    const brokenDown = this.brokenDownTotals(unique);
    const metrics: SeriesMetric[] = [];
    const collisions = new Map<string, { kept: string | undefined; dropped: string[] }>();
    const taken = new Map<string, string>();

    const drop = (key: string, kept: string | undefined, dotted: string) => {
      const entry = collisions.get(key) ?? { kept, dropped: [] };
      entry.dropped.push(dotted);
      collisions.set(key, entry);
    };

    for (const dotted of unique) {
      if (brokenDown.has(dotted)) continue;
      const metric = this.metric(dotted);
      const key = metric.familyKey;
      const knownLoss = this.knownLosers.get(metric.breaksDown ?? dotted);
      if (knownLoss) {
        drop(key, knownLoss.kept, dotted);
        continue;
      }
      if (!metric.known) {
        const owner = this.owners.get(key) ?? (this.isReservedPrefix(key) ? '' : undefined);
        if (owner !== undefined) {
          drop(key, owner === '' ? undefined : owner, dotted);
          continue;
        }
      }
      const first = taken.get(metric.seriesKey);
      if (first !== undefined) {
        drop(key, first, dotted);
        continue;
      }
      taken.set(metric.seriesKey, dotted);
      metrics.push(metric);
    }
    return {
      metrics,
      collisions: [...collisions].map(([familyKey, { kept, dropped }]) => ({ familyKey, kept, dropped })),
    };
  }

  /** Every family the known names give, for the documentation, in catalogue order. */
  families(): FamilyDoc[] {
    const rows = new Map<string, { spec: ScalarSpec | SummarySpec; labels: Set<string>; members: string[] }>();
    for (const dotted of this.definitions.keys()) {
      if (this.knownLosers.has(dotted)) continue;
      const metric = this.metric(dotted);
      const spec = metric.role.kind === 'timer' && metric.role.stat === 'max' ? metric.role.maxSpec : metric.role.spec;
      let row = rows.get(spec.name);
      if (!row) rows.set(spec.name, (row = { spec, labels: new Set(HOST_LABELS), members: [] }));
      for (const label of Object.keys(metric.labels)) row.labels.add(label);
      const device = this.placements.get(dotted)?.deviceLabel;
      if (device !== undefined) row.labels.add(device);
      row.members.push(dotted);
    }
    return [...rows.values()].map(({ spec, labels, members }) => ({ name: spec.name, type: spec.type, unit: spec.unit, labels: [...labels], members, help: spec.help }));
  }

  private brokenDownTotals(dottedNames: Iterable<string>): Set<string> {
    const totals = new Set<string>();
    for (const dotted of dottedNames) {
      const total = dotted.includes('|') ? this.metric(dotted).breaksDown : undefined;
      if (total !== undefined) totals.add(total);
    }
    return totals;
  }

  private isReservedPrefix(familyKey: string): boolean {
    return this.reservedPrefixes.some((p) => familyKey.startsWith(p) || familyKey === p.slice(0, -1));
  }

  private build(dotted: string): SeriesMetric {
    const bar = dotted.indexOf('|');
    if (bar > 0) {
      const total = dotted.slice(0, bar);
      const device = this.placements.get(total)?.deviceLabel;
      const of = device === undefined ? undefined : this.metric(total);
      if (device !== undefined && of !== undefined && of.known && of.role.kind !== 'timer') {
        const labels = { ...of.labels, [device]: dotted.slice(bar + 1) };
        return { ...of, dotted, labels, seriesKey: seriesKeyOf(of.familyKey, labels), breaksDown: total };
      }
    }
    const def = this.definitions.get(dotted);
    const known = def !== undefined;
    const effective: MetricDefinition = def ?? { kind: 'gauge', unit: 'none' };
    const timer = known && !this.placedByOverride.has(dotted) ? timerOf(dotted, this.timers) : undefined;
    if (timer !== undefined) return this.timerPart(dotted, effective, timer);

    const placed = known ? this.placements.get(dotted) : undefined;
    const labels = placed?.labels ?? {};
    const type = effective.kind === 'delta' ? 'counter' : 'gauge';
    const spec = placed
      ? this.spec(nameFromStem(placed.stem, effective.kind, effective.unit), type, () =>
          familyHelp(placed.description, placed.members, effective.kind, effective.unit, placed.deviceLabel),
        )
      : this.spec(seriesMetricName(dotted, effective), type, () =>
          known ? familyHelp('Set by metric_overrides.', [dotted], effective.kind, effective.unit, undefined) : UNKNOWN_HELP,
        );
    const role: SeriesRole = effective.kind === 'delta' ? { kind: 'delta', spec: spec as ScalarSpec } : { kind: 'gauge', spec: spec as ScalarSpec };
    const familyKey = familyKeyOf(spec);
    return { dotted, kind: effective.kind, unit: effective.unit, known, role, labels, familyKey, seriesKey: seriesKeyOf(familyKey, labels) };
  }

  private timerPart(dotted: string, def: MetricDefinition, timer: string): SeriesMetric {
    const placed = this.timers.get(timer);
    if (!placed) throw new Error(`no timer ${timer}`);
    const stat: TimerStat = dotted === timer ? 'mean' : (dotted.slice(timer.length + 1) as TimerStat);
    const unit = this.definitions.get(timer)?.unit ?? def.unit;
    const members = TIMER_STATS.map((s) => (s === 'mean' ? timer : `${timer}.${s}`));
    const spec = this.spec(nameFromStem(placed.stem, 'gauge', unit), 'summary', () =>
      `${placed.description} Summary of agent timer ${members.join(', ')}: quantiles 0.5 (median) and 0.95 (pctl95) of the newest minute; _count and _sum are running sums of each minute's count and mean x count from ${SERIES_ENDPOINT}, each minute added once when it arrives.${unitNote(unit)} ${POLLED}`,
    ) as SummarySpec;
    const maxSpec = this.spec(nameFromStem(`${placed.stem}_max`, 'gauge', unit), 'gauge', () =>
      `${placed.description} Longest in the newest minute (agent metric ${timer}.max).${valueNote('gauge')}${unitNote(unit)} ${POLLED}`,
    ) as ScalarSpec;
    const familyKey = familyKeyOf(stat === 'max' ? maxSpec : spec);
    return {
      dotted,
      kind: def.kind,
      unit: def.unit,
      known: true,
      role: { kind: 'timer', stat, timer, spec, maxSpec },
      labels: {},
      familyKey,
      seriesKey: `${seriesKeyOf(familyKey, {})}\u0000${stat}`,
    };
  }

  /**
   * One spec object per family name. A definition asking for a name that exists with
   * another type or unit gets a spec of its own, which `settleKnownNames` sees as a clash.
   */
  private spec(parts: NameParts, type: 'gauge' | 'counter' | 'summary', help: () => string): ScalarSpec | SummarySpec {
    const existing = this.specs.get(parts.name);
    if (existing && existing.type === type && existing.unit === parts.unit) return existing;
    const created =
      type === 'summary' ? summarySpec(parts.name, help(), parts.unit) : type === 'counter' ? counterSpec(parts.name, help(), parts.unit) : gaugeSpec(parts.name, help(), parts.unit);
    if (!existing) this.specs.set(parts.name, created);
    return created;
  }

  /**
   * Settles the known names once: which family key each owns, and which lose to another
   * known name (the same series, or a family name taken with another type or unit) or to
   * an exporter family.
   */
  private settleKnownNames(catalogue: readonly CatalogueEntry[]): void {
    const bySeries = new Map<string, string>();
    const byKey = new Map<string, { readonly spec: ScalarSpec | SummarySpec; readonly owner: string }>();
    // Catalogue names first, so a mistaken override never takes a curated series.
    const inCatalogue = new Set(catalogue.map((e) => e.name));
    const order = [...[...inCatalogue].sort(), ...[...this.definitions.keys()].filter((n) => !inCatalogue.has(n)).sort()];
    for (const dotted of order) {
      const metric = this.metric(dotted);
      const specs = metric.role.kind === 'timer' ? [metric.role.spec, metric.role.maxSpec] : [metric.role.spec];
      const claims = specs.flatMap((spec) => {
        const key = familyKeyOf(spec);
        const keys = spec.type === 'summary' ? [key, `${key}_count`, `${key}_sum`, `${key}_created`] : [key];
        return keys.map((k) => ({ key: k, spec }));
      });
      const reserved = claims.some(({ key }) => this.owners.get(key) === '' || this.isReservedPrefix(key));
      const clash = claims.map(({ key }) => byKey.get(key)).find((held, i) => held !== undefined && held.spec !== claims[i]?.spec);
      const holder = bySeries.get(metric.seriesKey) ?? clash?.owner;
      if (reserved || holder !== undefined) {
        this.knownLosers.set(dotted, { familyKey: metric.familyKey, kept: reserved ? undefined : holder, dropped: [dotted] });
        continue;
      }
      bySeries.set(metric.seriesKey, dotted);
      for (const { key, spec } of claims) {
        if (!byKey.has(key)) byKey.set(key, { spec, owner: dotted });
        if (!this.owners.has(key)) this.owners.set(key, dotted);
      }
    }
  }
}

const TIMER_STATS: readonly TimerStat[] = ['mean', 'count', 'max', 'median', 'pctl95'];

/** The timer a dotted name belongs to (`nginx.http.request.time.max` → `nginx.http.request.time`). */
function timerOf(dotted: string, timers: ReadonlyMap<string, TimerPlacement>): string | undefined {
  if (timers.has(dotted)) return dotted;
  const dot = dotted.lastIndexOf('.');
  if (dot < 0) return undefined;
  const base = dotted.slice(0, dot);
  const stat = dotted.slice(dot + 1);
  return timers.has(base) && stat !== 'mean' && (TIMER_STATS as readonly string[]).includes(stat) ? base : undefined;
}

function seriesKeyOf(familyKey: string, labels: Labels): string {
  return `${familyKey}\u0000${labelKey(labels)}`;
}

function placeFamily(placements: Map<string, Placement>, def: FamilyDefinition): void {
  const members = Object.keys(def.members);
  for (const [dotted, labels] of Object.entries(def.members)) {
    placements.set(dotted, { stem: def.stem, description: def.description, labels, deviceLabel: def.deviceLabel, members });
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
