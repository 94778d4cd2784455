import { z } from 'zod';

/**
 * Which legal shape the simulator gives each body the seeds leave "not shown". The
 * standard set is what the simulator has always sent; the alternative set sends the same
 * data in other envelopes and encodings a real service could just as well use; the nested
 * set puts it one or two levels deeper (values under period or category keys, lists grouped
 * by kind, states as words, rates as a count and a period). docs/simulator.md has all three,
 * endpoint by endpoint. A default applies to every endpoint, and any endpoint can be
 * overridden. The nested set has no layouts of its own for the Release Lookup API: there it
 * answers as the standard set.
 */

export const SHAPE_SETS = ['standard', 'alt', 'nested'] as const;
export type ShapeSet = (typeof SHAPE_SETS)[number];

/** The bodies whose shape can vary, by the name used on the command line and in `/_sim/shapes`. */
export const SHAPE_ENDPOINTS = [
  // Monitoring API
  'account',
  'metrics',
  'latest',
  'components',
  'alert-rules',
  'websites',
  'website',
  'checks',
  // Release Lookup API
  'release-record',
  'free-version',
  'marketplace-version',
  'marketplace-source',
  'marketplace-assets',
] as const;
export type ShapeEndpoint = (typeof SHAPE_ENDPOINTS)[number];

/** What each endpoint name covers, for the usage text and errors. */
export const SHAPE_ENDPOINT_PATHS: Readonly<Record<ShapeEndpoint, string>> = {
  account: '/account',
  metrics: '/hosts/{uuid}/metrics',
  latest: '/hosts/{uuid}/metrics/{name}/latest',
  components: '/hosts/{uuid}/components',
  'alert-rules': '/alerts',
  websites: '/websites',
  website: '/websites/{id}',
  checks: 'check items of /websites/{id}/checks and of /websites/{id} recent_checks',
  'release-record': 'fields of the release record beyond version and type (/release, free endpoint)',
  'free-version': 'free endpoint ?version',
  'marketplace-version': 'marketplace /version',
  'marketplace-source': 'marketplace /source',
  'marketplace-assets': 'marketplace /assets',
};

export interface ShapeSelection {
  readonly default: ShapeSet;
  readonly endpoints: Readonly<Partial<Record<ShapeEndpoint, ShapeSet>>>;
}

export const STANDARD_SHAPES: ShapeSelection = { default: 'standard', endpoints: {} };

/** Anything that answers "which shape for this endpoint now?". */
export interface ShapeSource {
  of(endpoint: ShapeEndpoint): ShapeSet;
}

const ShapeSetSchema = z.enum(SHAPE_SETS);
const EndpointOverrides = z.partialRecord(z.enum(SHAPE_ENDPOINTS), ShapeSetSchema);

/** What `POST /_sim/shapes` and the `shapes` option accept. */
export const ShapeUpdate = z.strictObject({ default: ShapeSetSchema.optional(), endpoints: EndpointOverrides.optional() });
export type ShapeUpdate = z.infer<typeof ShapeUpdate>;

/** The shape selection at run time: set at start, switched through `/_sim/shapes` or `set`. */
export class ShapeController implements ShapeSource {
  private selection: ShapeSelection;

  constructor(initial: ShapeSelection = STANDARD_SHAPES) {
    this.selection = copy(initial);
  }

  of(endpoint: ShapeEndpoint): ShapeSet {
    return this.selection.endpoints[endpoint] ?? this.selection.default;
  }

  /** Changes the default and/or some endpoints; endpoints not named keep their override. */
  set(update: ShapeUpdate): void {
    this.selection = {
      default: update.default ?? this.selection.default,
      endpoints: { ...this.selection.endpoints, ...update.endpoints },
    };
  }

  /** Everything back to the standard set. */
  reset(): void {
    this.selection = copy(STANDARD_SHAPES);
  }

  selected(): ShapeSelection {
    return copy(this.selection);
  }

  /** The selection and, for every endpoint, the shape it answers with now. */
  view(): { default: ShapeSet; endpoints: Partial<Record<ShapeEndpoint, ShapeSet>>; effective: Record<ShapeEndpoint, ShapeSet> } {
    const effective = Object.fromEntries(SHAPE_ENDPOINTS.map((e) => [e, this.of(e)])) as Record<ShapeEndpoint, ShapeSet>;
    return { default: this.selection.default, endpoints: { ...this.selection.endpoints }, effective };
  }
}

function copy(selection: ShapeSelection): ShapeSelection {
  return { default: selection.default, endpoints: { ...selection.endpoints } };
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** A shape set name, or a message naming the allowed ones. */
export function parseShapeSet(what: string, raw: string): Parsed<ShapeSet> {
  const parsed = ShapeSetSchema.safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: `${what} must be one of ${SHAPE_SETS.join(', ')}; got '${raw.slice(0, 40)}'` };
}

/**
 * Per-endpoint overrides written `endpoint=set`, several joined by commas or given one by
 * one: `websites=alt,checks=alt`.
 */
export function parseShapeOverrides(items: readonly string[]): Parsed<Partial<Record<ShapeEndpoint, ShapeSet>>> {
  const overrides: Partial<Record<ShapeEndpoint, ShapeSet>> = {};
  for (const item of items.flatMap((text) => text.split(','))) {
    const [endpoint = '', set = '', ...rest] = item.trim().split('=');
    if (rest.length > 0 || set === '') return { ok: false, message: `a shape override is written <endpoint>=<${SHAPE_SETS.join('|')}>; got '${item.slice(0, 60)}'` };
    if (!(SHAPE_ENDPOINTS as readonly string[]).includes(endpoint)) {
      return { ok: false, message: `unknown shape endpoint '${endpoint.slice(0, 40)}'; known: ${SHAPE_ENDPOINTS.join(', ')}` };
    }
    const parsed = parseShapeSet(`the shape of ${endpoint}`, set);
    if (!parsed.ok) return parsed;
    overrides[endpoint as ShapeEndpoint] = parsed.value;
  }
  return { ok: true, value: overrides };
}
