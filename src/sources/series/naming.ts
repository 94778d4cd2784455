import {
  METRIC_CATALOGUE,
  type CatalogueEntry,
  type MetricKind,
  type SourceUnit,
} from '../../upstream/monitoring/metric-catalogue.js';
import { counterSpec, gaugeSpec, type ScalarSpec } from '../shared/families.js';
import { replaceInvalidNameChars } from '../shared/names.js';
import { baseUnitOf, type BaseUnit } from '../shared/units.js';

/**
 * Prometheus names for agent metrics, mechanical and predictable from the dotted name:
 *
 * 1. `monapi_` + the dotted name with every character outside `[a-zA-Z0-9_]` replaced by `_`.
 * 2. The base unit (`ratio` for percent, `bytes` for bytes and kilobytes, `seconds` for
 *    seconds and milliseconds) is appended as `_<unit>`, unless that word is already one
 *    of the name's `_`-separated words: `system.net.bytes_rcvd` stays
 *    `..._bytes_rcvd`, `varnish.cache.hit_ratio` stays `..._hit_ratio` (no doubled unit).
 * 3. A delta (becomes a counter) gets `_total`, unless the name already ends in `_total`
 *    (`varnish.fetch.total` → `monapi_varnish_fetch_total`).
 * 4. A gauge never ends in a suffix reserved for other types (`_total` for counters;
 *    `_count`, `_sum`, `_bucket` for histograms and summaries; `_created`, `_info`):
 *    promtool rejects them, so such a gauge gets `_value`
 *    (`php.fpm.proc.total` → `monapi_php_fpm_proc_total_value`,
 *    `nginx.workers.count` → `monapi_nginx_workers_count_value`).
 *
 * The OpenMetrics unit is declared only when the name ends in it (after step 2 it may not).
 * Timers need no special case: `nginx.http.request.time.pctl95` (seconds) →
 * `monapi_nginx_http_request_time_pctl95_seconds`, `.count` →
 * `monapi_nginx_http_request_time_count_total`.
 *
 * Names not in the catalogue or the overrides are gauges passed through unconverted
 * (unit `none`).
 */

const RESERVED_SUFFIXES = ['_total', '_count', '_sum', '_bucket', '_created', '_info'];

export interface MetricDefinition {
  readonly kind: MetricKind;
  readonly unit: SourceUnit;
}

/** Config overrides by dotted name: change a catalogue entry or declare a new name. */
export type MetricOverrides = Readonly<Record<string, MetricDefinition>>;

export interface SeriesMetric {
  readonly dotted: string;
  readonly kind: MetricKind;
  readonly unit: SourceUnit;
  /** True when the name is in the catalogue or the overrides. */
  readonly known: boolean;
  readonly spec: ScalarSpec;
  /** The OpenMetrics family name: the name without `_total` for counters. Collisions are judged on it. */
  readonly familyKey: string;
}

export interface SeriesCollision {
  readonly familyKey: string;
  /** The dotted name that keeps the metric name, or undefined when an exporter family holds it. */
  readonly kept: string | undefined;
  readonly dropped: readonly string[];
}

export interface NameParts {
  readonly name: string;
  readonly unit: BaseUnit | undefined;
}

/** The metric name of one dotted agent name (rules in the module comment). */
export function seriesMetricName(dotted: string, def: MetricDefinition): NameParts {
  let name = `monapi_${replaceInvalidNameChars(dotted)}`;
  const unit = baseUnitOf(def.unit);
  if (unit !== undefined && !name.split('_').includes(unit)) name += `_${unit}`;
  const endsInTotal = name.endsWith('_total');
  if (def.kind === 'delta' && !endsInTotal) name += '_total';
  if (def.kind === 'gauge' && RESERVED_SUFFIXES.some((suffix) => name.endsWith(suffix))) name += '_value';
  const familyName = def.kind === 'delta' ? name.slice(0, -'_total'.length) : name;
  return { name, unit: unit !== undefined && familyName.endsWith(`_${unit}`) ? unit : undefined };
}

const SERIES_ENDPOINT = '/hosts/{uuid}/metrics/series';

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

function helpFor(dotted: string, def: MetricDefinition, known: boolean): string {
  if (!known) {
    // No dotted name here: two unknown names that sanitise alike on different hosts share
    // the family, and a family must have one HELP.
    return `Agent metric not in the catalogue, as sent (no unit conversion); name is the dotted agent name with invalid characters replaced by _. Newest non-null point from ${SERIES_ENDPOINT}, polled in the background.`;
  }
  if (def.kind === 'delta') {
    return `Agent metric ${dotted}: running sum of its per-minute deltas from ${SERIES_ENDPOINT}, each point added once after the ingest delay; starts at 0 when the exporter first sees the host.${unitNote(def.unit)} Polled in the background.`;
  }
  return `Agent metric ${dotted}: newest non-null point from ${SERIES_ENDPOINT} (not emitted when older than the staleness limit).${unitNote(def.unit)} Polled in the background.`;
}

function familyKeyOf(spec: ScalarSpec): string {
  return spec.type === 'counter' ? spec.name.slice(0, -'_total'.length) : spec.name;
}

/** Families the series mapping emits itself, reserved against agent names. */
const OWN_FAMILIES = ['monapi_series_points_missing_total', 'monapi_series_name_collisions_total'];

export interface SeriesNamingOptions {
  readonly catalogue?: readonly CatalogueEntry[];
  readonly overrides?: MetricOverrides;
  /**
   * Family names the exporter emits itself (`monapi_host_info`, ...; with or without
   * `_total`). An unknown agent name that would produce one of them is dropped, so it
   * cannot clash with the exporter's own families.
   */
  readonly reservedFamilyNames?: Iterable<string>;
  /**
   * Name prefixes of the exporter's own self-metrics (`monapi_exporter_`, `monapi_budget_`,
   * ...), which are rendered apart from the sources' families: an unknown agent name under
   * one of them is dropped like a reserved name.
   */
  readonly reservedPrefixes?: readonly string[];
}

/**
 * The naming of agent metrics for one configuration (catalogue + overrides), with every
 * computed name memoised: build one per configuration, share it across hosts and polls.
 *
 * Collisions (two dotted names giving one family name) are resolved the same way on every
 * host: a known name wins over an unknown one (even when the known one is absent from the
 * response), then the lexicographically first dotted name wins. The losers are dropped,
 * not renamed (a hashed suffix would be an unpredictable name), and reported.
 */
export class SeriesNaming {
  private readonly definitions: ReadonlyMap<string, MetricDefinition>;
  private readonly memo = new Map<string, SeriesMetric>();
  /** Family key → the known dotted name that owns it, or '' when reserved by the exporter. */
  private readonly owners = new Map<string, string>();
  /** Known names that lost to another known name at construction. */
  private readonly knownLosers = new Map<string, SeriesCollision>();
  private readonly reservedPrefixes: readonly string[];

  constructor(options: SeriesNamingOptions = {}) {
    const defs = new Map<string, MetricDefinition>();
    for (const entry of options.catalogue ?? METRIC_CATALOGUE) defs.set(entry.name, { kind: entry.kind, unit: entry.unit });
    for (const [name, def] of Object.entries(options.overrides ?? {})) defs.set(name, { kind: def.kind, unit: def.unit });
    this.definitions = defs;
    this.reservedPrefixes = options.reservedPrefixes ?? [];

    for (const reserved of [...OWN_FAMILIES, ...(options.reservedFamilyNames ?? [])]) {
      this.owners.set(reserved.endsWith('_total') ? reserved.slice(0, -'_total'.length) : reserved, '');
    }
    const byKey = new Map<string, string[]>();
    for (const dotted of [...defs.keys()].sort()) {
      const key = this.metric(dotted).familyKey;
      byKey.set(key, [...(byKey.get(key) ?? []), dotted]);
    }
    for (const [key, names] of byKey) {
      const reserved = this.owners.has(key);
      const [first, ...rest] = names;
      const kept = reserved ? undefined : first;
      if (!reserved && first !== undefined) this.owners.set(key, first);
      const dropped = reserved ? names : rest;
      for (const loser of dropped) this.knownLosers.set(loser, { familyKey: key, kept, dropped });
    }
  }

  definition(dotted: string): MetricDefinition | undefined {
    return this.definitions.get(dotted);
  }

  /** The metric a dotted name maps to, before collision checks. */
  metric(dotted: string): SeriesMetric {
    const cached = this.memo.get(dotted);
    if (cached) return cached;
    const def = this.definitions.get(dotted);
    const known = def !== undefined;
    const effective: MetricDefinition = def ?? { kind: 'gauge', unit: 'none' };
    const { name, unit } = seriesMetricName(dotted, effective);
    const help = helpFor(dotted, effective, known);
    const spec = effective.kind === 'delta' ? counterSpec(name, help, unit) : gaugeSpec(name, help, unit);
    const metric: SeriesMetric = { dotted, kind: effective.kind, unit: effective.unit, known, spec, familyKey: familyKeyOf(spec) };
    this.memo.set(dotted, metric);
    return metric;
  }

  /**
   * The metrics to emit for a set of dotted names, in sorted dotted order, and the
   * collisions among them. Empty names are ignored.
   */
  resolve(dottedNames: Iterable<string>): { metrics: SeriesMetric[]; collisions: SeriesCollision[] } {
    const unique = [...new Set(dottedNames)].filter((n) => n !== '').sort();
    const metrics: SeriesMetric[] = [];
    const collisions = new Map<string, { kept: string | undefined; dropped: string[] }>();
    const taken = new Map<string, string>();

    const drop = (key: string, kept: string | undefined, dotted: string) => {
      const entry = collisions.get(key) ?? { kept, dropped: [] };
      entry.dropped.push(dotted);
      collisions.set(key, entry);
    };

    for (const dotted of unique) {
      const metric = this.metric(dotted);
      const key = metric.familyKey;
      const knownLoss = this.knownLosers.get(dotted);
      if (knownLoss) {
        drop(key, knownLoss.kept, dotted);
        continue;
      }
      const owner = this.owners.get(key) ?? (this.reservedPrefixes.some((p) => key.startsWith(p) || key === p.slice(0, -1)) ? '' : undefined);
      if (!metric.known && owner !== undefined) {
        drop(key, owner === '' ? undefined : owner, dotted);
        continue;
      }
      const first = taken.get(key);
      if (first !== undefined) {
        drop(key, first, dotted);
        continue;
      }
      taken.set(key, dotted);
      metrics.push(metric);
    }
    return {
      metrics,
      collisions: [...collisions].map(([familyKey, { kept, dropped }]) => ({ familyKey, kept, dropped })),
    };
  }
}
